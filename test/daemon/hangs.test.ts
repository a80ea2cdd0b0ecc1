/**
 * Hangs found by the attack run (issue 13 items 8, 9, 11), against the compiled daemon and engine:
 * a frozen engine costs a short, clear error and is restarted; a stale lock holding an unrelated
 * live pid is not trusted; oversized request bodies get a clear 413. (Item 10, the orphaned
 * engine, is in engine.test.ts; item 7 in test/mcp/stdio.test.ts; item 6 in capture/faults.test.ts.)
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DaemonBridge } from "../../src/mcp/daemon-bridge.ts";
import { PitfallsView } from "../../src/shared/api.ts";
import {
  daemonFetch,
  daemonStatus,
  initProject,
  killQuietly,
  makeHome,
  pidAlive,
  readRuntime,
  SQRL_BIN,
  startDaemon,
  waitFor,
  type DaemonHome,
} from "./harness.ts";

let home: DaemonHome | undefined;
let stopped: number | undefined;
afterEach(async () => {
  if (stopped) killQuietly(stopped, "SIGCONT");
  stopped = undefined;
  await home?.cleanup();
  home = undefined;
});

describe.skipIf(!existsSync(SQRL_BIN))("hangs (compiled binary)", () => {
  test("8. a frozen engine (SIGSTOP): the call fails fast with a clear error, and the engine is restarted", async () => {
    home = makeHome("", { SQRL_ENGINE_HEALTH_INTERVAL_MS: "500" });
    const project = initProject(home, "frozen");
    startDaemon(home);
    const first = await waitFor(
      "a healthy engine",
      async () => ((await daemonStatus(home!)).engine.healthy ? readRuntime(home!, "engine") : undefined),
      30_000,
    );
    const daemon = readRuntime(home, "daemon")!;
    const bridge = new DaemonBridge({
      start: false,
      timeoutMs: 1500,
      target: () => ({ ...daemon, host: "127.0.0.1" as const }),
    });
    killQuietly(first.pid, "SIGSTOP");
    stopped = first.pid;
    const started = performance.now();
    const err = (await bridge
      .request(
        "/views/pitfalls",
        { query: { project_id: project, scope_paths: [], context_budget_tokens: 300, exclude_memory_ids: [] } },
        PitfallsView,
      )
      .catch((e: unknown) => e)) as Error & { code?: string };
    const took = performance.now() - started;
    expect(err.code).toBe("timeout");
    expect(err.message).toContain("did not answer within 2 s");
    expect(err.message.length).toBeLessThan(300);
    expect(took).toBeLessThan(3000);
    // the supervisor notices failed health checks and starts another engine
    const second = await waitFor(
      "a new engine",
      async () => {
        const s = await daemonStatus(home!);
        return s.engine.healthy && s.engine.pid !== first.pid ? s : undefined;
      },
      20_000,
    );
    expect(second.engine.restarts).toBeGreaterThanOrEqual(1);
    expect(pidAlive(first.pid)).toBe(false);
  }, 60_000);

  test("9. a daemon.lock holding an unrelated live pid is stale: `daemon run` takes over; a real refusal exits 1", async () => {
    home = makeHome();
    const unrelated = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
    try {
      writeFileSync(join(home.sqrlHome, "daemon.lock"), `${unrelated.pid}\n`);
      const info = startDaemon(home); // `daemon start` spawns `daemon run`, which must not trust that lock
      expect(info.pid).not.toBe(unrelated.pid);
      expect((await daemonStatus(home)).pid).toBe(info.pid);
      const again = home.sqrl(["daemon", "run"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("already running");
    } finally {
      unrelated.kill();
    }
  }, 60_000);

  test("11. request bodies over the cap get a clear 413, and the daemon stays healthy", async () => {
    home = makeHome();
    const project = initProject(home, "big");
    startDaemon(home);
    const big = JSON.stringify({ project_id: project, task_description: "x".repeat(2 * 1024 * 1024) });
    const res = await daemonFetch(home, "/task_context", {
      method: "POST",
      body: big,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe("payload_too_large");
    expect(body.error).toContain("at most");
    expect((await daemonFetch(home, "/health")).status).toBe(200);
  }, 60_000);
});
