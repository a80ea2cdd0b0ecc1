/**
 * No test touches the real home (issue 29 item 2): the preload points HOME, SQRL_HOME, the agents'
 * folders and XDG at a sandbox, every path sqrl derives from them follows, children inherit it, and a
 * run that writes under the real home fails naming the path.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { claudeConfigPath } from "../../src/mcp/hosts/claude.ts";
import { cursorHost } from "../../src/mcp/hosts/cursor.ts";
import { launchdPlistPath, systemdUnitPath } from "../../src/daemon/service-install.ts";
import {
  claudeHome,
  codexHome,
  copilotHome,
  geminiHome,
  homePaths,
  qwenHome,
  sqrlHome,
  userHome,
} from "../../src/shared/paths.ts";
import { differences, fingerprint } from "../helpers/real-home.ts";
import { REPO_ROOT, runSqrl, tempDir } from "../helpers/sqrl.ts";

const sandbox = process.env.SQRL_TEST_SANDBOX ?? "";
const realHome = process.env.SQRL_TEST_REAL_HOME ?? "";
const inside = (p: string) => sandbox.length > 1 && !relative(sandbox, p).startsWith("..");

test("every home path sqrl derives points into the test sandbox, not the real home", () => {
  expect(sandbox).not.toBe("");
  expect(realHome).not.toBe("");
  const paths = [
    userHome(),
    sqrlHome(),
    homePaths.projects(),
    claudeHome(),
    codexHome(),
    geminiHome(),
    qwenHome(),
    copilotHome(),
    systemdUnitPath(),
    launchdPlistPath(),
    claudeConfigPath({ scope: "user", projectRoot: "/x" }),
  ];
  for (const p of paths) expect({ p, inside: inside(p) }).toEqual({ p, inside: true });
  expect(userHome()).not.toBe(realHome);
  expect(cursorHost.name).toBe("cursor");
});

test("src/ reads the home folder only through userHome() (Bun's homedir() ignores a moved HOME)", () => {
  const offenders: string[] = [];
  for (const file of new Bun.Glob("src/**/*.{ts,tsx}").scanSync(REPO_ROOT)) {
    if (file === "src/shared/paths.ts") continue;
    if (/\bhomedir\s*\(/.test(readFileSync(join(REPO_ROOT, file), "utf8"))) offenders.push(file);
  }
  expect(offenders).toEqual([]);
});

test("the binary run with the inherited environment registers projects in the sandbox", () => {
  const dir = tempDir("sqrl-realhome-");
  try {
    const repo = join(dir.path, "repo");
    mkdirSync(repo);
    Bun.spawnSync(["git", "init", "-q", repo]);
    const env = { ...process.env } as Record<string, string>;
    const r = runSqrl(["init", repo], { env });
    expect(r.code).toBe(0);
    expect(readFileSync(join(sandbox, "home", ".sqrl", "projects.json"), "utf8")).toContain(repo);
    // a child started without an env sees the sandbox too
    const child = Bun.spawnSync(["sh", "-c", 'printf %s "$HOME"']);
    expect(child.stdout.toString()).toBe(join(sandbox, "home"));
  } finally {
    dir.cleanup();
  }
});

test("the guard: a write under the watched home paths is reported by path", () => {
  const dir = tempDir("sqrl-fakehome-");
  try {
    mkdirSync(join(dir.path, ".sqrl"));
    writeFileSync(join(dir.path, ".sqrl", "projects.json"), "[]");
    const before = fingerprint(dir.path);
    expect(differences(before, fingerprint(dir.path))).toEqual([]);
    writeFileSync(join(dir.path, ".sqrl", "projects.json"), '["/tmp/x"]');
    mkdirSync(join(dir.path, ".codex"));
    expect(differences(before, fingerprint(dir.path))).toEqual(["changed  ~/.sqrl/projects.json", "added    ~/.codex"]);
  } finally {
    dir.cleanup();
  }
});

test("a test run that writes under the real home fails, naming the path", () => {
  const dir = tempDir("sqrl-guard-");
  try {
    const fakeReal = join(dir.path, "real");
    mkdirSync(fakeReal);
    const file = join(dir.path, "writes-home.test.ts");
    writeFileSync(
      file,
      `import { test } from "bun:test"; import { mkdirSync, writeFileSync } from "node:fs";
test("writes", () => { mkdirSync("${fakeReal}/.sqrl"); writeFileSync("${fakeReal}/.sqrl/projects.json", "[]"); });\n`,
    );
    const { SQRL_TEST_SANDBOX: _s, ...env } = process.env;
    const r = Bun.spawnSync([process.execPath, "test", file], {
      cwd: REPO_ROOT,
      env: { ...env, SQRL_TEST_REAL_HOME: fakeReal },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.exitCode).toBe(1);
    expect(out).toContain("changed the real home");
    expect(out).toContain("~/.sqrl/projects.json");
  } finally {
    dir.cleanup();
  }
});
