import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Repository root (tests live in <root>/test/...). */
export const REPO_ROOT = resolve(import.meta.dir, "../..");
/** The compiled binary under test (`npm test` builds it first); SQRL_BIN overrides. */
export const SQRL_BIN = process.env.SQRL_BIN ?? join(REPO_ROOT, "dist", "sqrl");
/** `../shared` beside the repo: real transcripts and public data (absent in a user's clone; SQRL_SHARED_DIR moves it). */
export const SHARED_DIR = process.env.SQRL_SHARED_DIR
  ? resolve(process.env.SQRL_SHARED_DIR)
  : resolve(REPO_ROOT, "..", "shared");

/** A fresh temp dir, removed by `cleanup()`. */
export function tempDir(prefix = "sqrl-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Environment for a child sqrl: isolated homes, no colours, nothing from the real user. */
export function isolatedEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(home, "home"),
    SQRL_HOME: join(home, "sqrl"),
    CLAUDE_CONFIG_DIR: join(home, "claude"),
    CODEX_HOME: join(home, "codex"),
    GEMINI_HOME: join(home, "gemini"),
    QWEN_HOME: join(home, "qwen"),
    COPILOT_HOME: join(home, "copilot"),
    XDG_CONFIG_HOME: join(home, "xdg-config"),
    XDG_DATA_HOME: join(home, "xdg-data"),
    NO_COLOR: "1",
    CI: "1",
    ...extra,
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the compiled binary synchronously with the given env and cwd. */
export function runSqrl(
  args: string[],
  opts: { env: Record<string, string>; cwd?: string; input?: string },
): RunResult {
  const res = Bun.spawnSync([SQRL_BIN, ...args], {
    env: opts.env,
    cwd: opts.cwd,
    stdin: opts.input === undefined ? "ignore" : new TextEncoder().encode(opts.input),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: res.exitCode ?? -1, stdout: res.stdout.toString(), stderr: res.stderr.toString() };
}
