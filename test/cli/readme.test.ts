import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../../src/cli/commands.ts";
import { CONFIG_KEY_NAMES } from "../../src/shared/config-keys.ts";
import { REPO_ROOT } from "../helpers/sqrl.ts";

const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

test("the README documents every config key", () => {
  const missing = CONFIG_KEY_NAMES.filter((k) => !readme.includes(`\`${k}\``));
  expect(missing).toEqual([]);
});

test("the README documents every command", () => {
  const missing = Object.keys(COMMANDS).filter((c) => !readme.includes(`sqrl ${c}`));
  expect(missing).toEqual([]);
});

test("the README quick start is two commands: set up and run, then the test suite", () => {
  const quick = readme.split("## Quick start")[1]?.split("\n## ")[0] ?? "";
  expect(quick).toContain("npm install && npm start");
  expect(quick).toContain("npm test");
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  expect(pkg.scripts.start).toBeDefined();
  expect(pkg.scripts.test).toContain("bun test");
});
