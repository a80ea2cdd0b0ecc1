/**
 * `bun test` preload (bunfig.toml): runs once before any test file.
 * - No test can reach the real home: HOME, SQRL_HOME, the agents' config folders (CLAUDE_CONFIG_DIR,
 *   CODEX_HOME, GEMINI_HOME, QWEN_HOME, COPILOT_HOME) and the XDG folders point into one temp sandbox, for this process (src/
 *   reads the home through `userHome()`, which follows HOME) and for every child it spawns (Bun.spawn
 *   without `env` would hand a child the environment the process started with, so the preload makes
 *   it pass the current one). Tests that want their own homes still set them per child.
 * - The real home's sqrl-relevant paths are fingerprinted before the first test and compared after the
 *   last (test/helpers/real-home.ts): any change fails the run, naming the path.
 * - Every test and hook gets bunfig.toml's 60 s timeout (set here: Bun does not apply the bunfig key).
 * - In-process log warnings that tests provoke on purpose (an embeddings server that refuses, an LLM
 *   that answers 500) stay quiet: SQRL_LOG_LEVEL=0 keeps errors only. Set it yourself to see them.
 * - When ../shared (real transcripts, LoCoMo) is missing, say so once, with what to do; the tests
 *   that read it skip themselves.
 */
import { afterAll, setDefaultTimeout } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { differences, fingerprint } from "./real-home.ts";
import { SHARED_DIR } from "./sqrl.ts";

if (!process.env.SQRL_LOG_LEVEL) process.env.SQRL_LOG_LEVEL = "0";

// bunfig.toml's `[test] timeout` is not applied by this Bun (tests and hooks got 5 s): real processes on a
// loaded machine need the 60 s it asks for.
setDefaultTimeout(60_000);

if (!existsSync(SHARED_DIR)) {
  process.stderr.write(
    `sqrl tests: ${SHARED_DIR} (real transcripts, LoCoMo) is missing, so the tests that read it are skipped; put the shared fixtures folder there to run them.\n`,
  );
}

/** Set by the outermost run; a `bun test` that a test starts shares its sandbox and its guard. */
const OUTER = process.env.SQRL_TEST_SANDBOX;
const sandbox = OUTER ?? mkdtempSync(join(tmpdir(), "sqrl-test-home-"));
export const SANDBOX_ENV = {
  SQRL_TEST_SANDBOX: sandbox,
  SQRL_TEST_REAL_HOME: process.env.SQRL_TEST_REAL_HOME ?? homedir(),
  HOME: join(sandbox, "home"),
  SQRL_HOME: join(sandbox, "home", ".sqrl"),
  CLAUDE_CONFIG_DIR: join(sandbox, "home", ".claude"),
  CODEX_HOME: join(sandbox, "home", ".codex"),
  GEMINI_HOME: join(sandbox, "home", ".gemini"),
  QWEN_HOME: join(sandbox, "home", ".qwen"),
  COPILOT_HOME: join(sandbox, "home", ".copilot"),
  XDG_CONFIG_HOME: join(sandbox, "home", ".config"),
  XDG_DATA_HOME: join(sandbox, "home", ".local", "share"),
  XDG_STATE_HOME: join(sandbox, "home", ".local", "state"),
  XDG_CACHE_HOME: join(sandbox, "home", ".cache"),
  XDG_RUNTIME_DIR: join(sandbox, "run"),
};
if (!OUTER) {
  Object.assign(process.env, SANDBOX_ENV);
  for (const dir of [SANDBOX_ENV.HOME, SANDBOX_ENV.XDG_RUNTIME_DIR]) mkdirSync(dir, { recursive: true, mode: 0o700 });
}

// Children get the current environment (the sandbox) unless a test passes its own.
for (const name of ["spawn", "spawnSync"] as const) {
  const original = Bun[name] as (...args: any[]) => unknown;
  (Bun as any)[name] = (...args: any[]) => {
    if (Array.isArray(args[0])) {
      const opts = args[1] ?? {};
      if (opts.env === undefined) args[1] = { ...opts, env: { ...process.env } };
    } else if (args[0] && typeof args[0] === "object" && args[0].env === undefined) {
      args[0] = { ...args[0], env: { ...process.env } };
    }
    return original.apply(Bun, args);
  };
}

if (!OUTER) {
  const realHome = SANDBOX_ENV.SQRL_TEST_REAL_HOME;
  const before = fingerprint(realHome);
  afterAll(() => {
    const diff = differences(before, fingerprint(realHome));
    rmSync(sandbox, { recursive: true, force: true });
    if (diff.length > 0)
      throw new Error(
        `the test run changed the real home (${realHome}); tests must use the sandbox HOME:\n${diff.map((l) => `  ${l}`).join("\n")}`,
      );
  });
}
