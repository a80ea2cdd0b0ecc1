import { expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../../src/cli/commands.ts";
import { CONFIG_KEY_NAMES } from "../../src/shared/config-keys.ts";
import { SQRL_ENV } from "../../src/shared/env.ts";
import { REPO_ROOT, runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";

const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

test("the README documents every config key", () => {
  const missing = CONFIG_KEY_NAMES.filter((k) => !readme.includes(`\`${k}\``));
  expect(missing).toEqual([]);
});

test("every SQRL_* variable is listed in src/shared/env.ts, read only there, and documented in the README", () => {
  const listed = Object.keys(SQRL_ENV);
  expect(listed.filter((v) => !readme.includes(`\`${v}\``))).toEqual([]);
  const glob = new Bun.Glob("{src,bench,scripts}/**/*.ts");
  const used = new Set<string>();
  const readers: string[] = [];
  for (const file of glob.scanSync(REPO_ROOT)) {
    const text = readFileSync(join(REPO_ROOT, file), "utf8");
    for (const m of text.matchAll(/\bSQRL_[A-Z0-9_]+\b/g)) if (m[0] !== "SQRL_ENV") used.add(m[0]);
    if (file.startsWith("src/") && file !== "src/shared/env.ts" && /process\.env(\.SQRL_|\[["']SQRL_)/.test(text))
      readers.push(file);
  }
  expect([...used].filter((v) => !listed.includes(v)).sort()).toEqual([]);
  expect(readers).toEqual([]);
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

/** `sqrl <words…>` mentions in the README: inline code spans and lines of its shell blocks. */
function readmeCommandLines(): string[] {
  const spans = [...readme.matchAll(/`(sqrl [^`]+)`/g)].map((m) => m[1]!);
  const blockLines = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1]!.split("\n"))
    .filter((l) => l.startsWith("sqrl "));
  return [...spans, ...blockLines].map((l) => l.replace(/#.*$/, "").replace(/\\\|/g, "|").trim());
}

test("every flag the README names exists in that command's --help (compiled binary)", () => {
  const checked: string[] = [];
  const missing: string[] = [];
  for (const line of readmeCommandLines()) {
    const words = line.split(/\s+/).slice(1);
    // The command path: leading words that are command names (`daemon run|start` → daemon run).
    const path: string[] = [];
    for (const w of words) {
      if (w.startsWith("-") || w.startsWith("[") || w.startsWith("<") || w.startsWith('"')) break;
      const name = w.split("|")[0]!;
      if (!/^[a-z][a-z-]*$/.test(name)) break;
      path.push(name);
    }
    const flags = [...line.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((m) => m[1]!);
    if (flags.length === 0) continue;
    // Drop words that are arguments, not subcommands (`view user_style` stops at the underscore already).
    const probe = runSqrl([...path, "--help"], {
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", HOME: "/nonexistent", SQRL_HOME: "/nonexistent" },
    });
    expect(probe.code).toBe(0);
    for (const flag of flags) {
      checked.push(`sqrl ${path.join(" ")} ${flag}`);
      if (!new RegExp(`(^|[\\s,])${flag}(?![\\w-])`).test(probe.stdout)) missing.push(`sqrl ${path.join(" ")} ${flag}`);
    }
  }
  expect(checked.length).toBeGreaterThan(15);
  expect(missing).toEqual([]);
});

test.skipIf(!(process.platform === "linux" && process.arch === "x64" && existsSync(SQRL_BIN)))(
  "the README's binary size is the measured one (within 10 %)",
  () => {
    const m = /about (\d+) MB on linux-x64/.exec(readme);
    expect(m).not.toBeNull();
    const mb = statSync(SQRL_BIN).size / 1_000_000;
    expect(Math.abs(mb - Number(m![1])) / mb).toBeLessThan(0.1);
  },
);
