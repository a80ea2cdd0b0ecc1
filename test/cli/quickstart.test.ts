import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, REPO_ROOT, SQRL_BIN, tempDir } from "../helpers/sqrl.ts";

/**
 * The README's quick start, `npm start`: it registers a demo repository under the sqrl home (never
 * the sqrl clone), and a SIGTERM to npm or a SIGHUP to the script stops the daemon and its engine too.
 */
const canRun = existsSync(SQRL_BIN) && Bun.which("npm") !== null;
let dir: ReturnType<typeof tempDir>;
let env: Record<string, string>;

beforeEach(() => {
  dir = tempDir("sqrl-quickstart-");
  env = isolatedEnv(dir.path);
});
afterEach(() => dir.cleanup());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2]!.startsWith("Z");
  } catch {
    return false;
  }
}

async function waitFor<T>(what: string, fn: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** Pids of the daemon and the engine, once both run and have written their runtime files. */
async function runningPids(): Promise<{ daemon: number; engine: number }> {
  const read = (f: string) =>
    existsSync(join(env.SQRL_HOME!, f))
      ? (JSON.parse(readFileSync(join(env.SQRL_HOME!, f), "utf8")) as { pid: number }).pid
      : undefined;
  return waitFor("the daemon and the engine", () => {
    const daemon = read("daemon.json");
    const engine = read("memory-service.json");
    return daemon && engine ? { daemon, engine } : undefined;
  });
}

async function expectAllStopped(pids: number[]): Promise<void> {
  await waitFor("every process to stop", () => (pids.every((p) => !alive(p)) ? true : undefined), 15_000);
}

describe.skipIf(!canRun)("npm start (quick start)", () => {
  test("registers a demo repo under the sqrl home, not the clone; SIGTERM to npm stops the script, the daemon and the engine", async () => {
    const npm = Bun.spawn(["npm", "start", "--silent"], {
      cwd: REPO_ROOT,
      env: { ...env, INIT_CWD: REPO_ROOT },
      stdout: "pipe",
      stderr: "pipe",
    });
    const pids = await runningPids();
    const projects = (JSON.parse(readFileSync(join(env.SQRL_HOME!, "projects.json"), "utf8")) as { projects: string[] })
      .projects;
    expect(projects).toEqual([join(env.SQRL_HOME!, "demo")]);
    expect(existsSync(join(env.SQRL_HOME!, "demo", ".ctx", "data.db"))).toBe(true);
    npm.kill("SIGTERM");
    await expectAllStopped([pids.daemon, pids.engine]);
    await npm.exited;
    // No quickstart script left behind either.
    const left = Bun.spawnSync(["pgrep", "-f", `${REPO_ROOT}/scripts/quickstart.ts`])
      .stdout.toString()
      .trim();
    expect(left).toBe("");
  }, 60_000);

  test("SIGHUP (terminal closed) to the script stops the daemon and the engine like Ctrl-C", async () => {
    const script = Bun.spawn([process.execPath, join(REPO_ROOT, "scripts", "quickstart.ts")], {
      cwd: REPO_ROOT,
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const pids = await runningPids();
    script.kill("SIGHUP");
    expect(await script.exited).toBe(0);
    await expectAllStopped([pids.daemon, pids.engine]);
  }, 60_000);
});
