import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import {
  appendLines,
  claudeTurns,
  daemonStatus,
  initProject,
  killQuietly,
  makeHome,
  pidAlive,
  projectEvents,
  queryProject,
  readRuntime,
  SQRL_BIN,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
} from "./harness.ts";

/** Short batch interval and a small early trigger so the tests need not wait 30 s. */
const CONFIG = "[daemon]\nbatch_interval_seconds = 1\nbatch_min_events = 5\nbatch_max_events = 50\n";
const SESSION = "e1e1e1e1-0000-4000-8000-00000000000a";

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

async function healthyEngine(h: DaemonHome, notPid?: number) {
  return waitFor(
    notPid ? `an engine other than pid ${notPid}` : "a healthy engine",
    async () => {
      const s = await daemonStatus(h);
      const file = readRuntime(h, "engine");
      return s.engine.healthy && s.engine.pid !== notPid && file?.pid === s.engine.pid ? s : undefined;
    },
    45_000,
  );
}

function drained(project: string, atLeast: number) {
  return waitFor(
    `all ${atLeast}+ events of ${project} processed`,
    () => {
      const c = projectEvents(project);
      return c.total >= atLeast && c.unprocessed === 0 ? c : undefined;
    },
    45_000,
  );
}

describe.skipIf(!existsSync(SQRL_BIN))("engine supervision (compiled binary)", () => {
  test("an engine killed with SIGKILL is restarted and the queue drains", async () => {
    home = makeHome(CONFIG);
    const project = initProject(home, "sup");
    startDaemon(home);
    const first = await healthyEngine(home);
    const path = transcriptPath(home, project, SESSION);
    const a = claudeTurns({ cwd: project, sessionId: SESSION, turns: 10, tag: "a", startMs: Date.now() - 3_600_000 });
    appendLines(path, a.lines);
    const before = await drained(project, a.userTextUuids.length);

    killQuietly(first.engine.pid!, "SIGKILL");
    const b = claudeTurns({ cwd: project, sessionId: SESSION, turns: 10, tag: "b", startMs: Date.now() - 1_800_000 });
    appendLines(path, b.lines);

    const second = await healthyEngine(home, first.engine.pid!);
    expect(pidAlive(first.engine.pid!)).toBe(false);
    expect(second.engine.restarts).toBeGreaterThanOrEqual(1);
    const after = await drained(project, before.total + b.userTextUuids.length);
    expect(after.total).toBeGreaterThan(before.total);
    const status = await daemonStatus(home);
    expect(status.projects[0]!.queue_depth).toBe(0);
    expect(status.projects[0]!.last_batch_at).not.toBeNull();
  }, 120_000);

  test("while the engine is down events wait unprocessed; after it returns all are processed", async () => {
    home = makeHome(CONFIG);
    const project = initProject(home, "down");
    startDaemon(home);
    const up = await healthyEngine(home);
    const path = transcriptPath(home, project, SESSION);
    const a = claudeTurns({ cwd: project, sessionId: SESSION, turns: 5, tag: "a", startMs: Date.now() - 3_600_000 });
    appendLines(path, a.lines);
    const before = await drained(project, a.userTextUuids.length);

    // The engine stops answering (frozen): capture keeps storing, the batcher's requests cannot succeed.
    const enginePid = up.engine.pid!;
    process.kill(enginePid, "SIGSTOP");
    try {
      const b = claudeTurns({ cwd: project, sessionId: SESSION, turns: 15, tag: "b", startMs: Date.now() - 1_800_000 });
      appendLines(path, b.lines);
      const stored = await waitFor("the new events to be stored", () => {
        const c = projectEvents(project);
        return c.total >= before.total + b.userTextUuids.length ? c : undefined;
      });
      // Several batch intervals pass with the engine unable to commit anything.
      await Bun.sleep(3_000);
      const waiting = projectEvents(project);
      expect(waiting.total).toBeGreaterThanOrEqual(stored.total);
      expect(waiting.unprocessed).toBe(waiting.total - before.total);
      const newRows = queryProject<{ n: number }>(
        project,
        "SELECT COUNT(*) AS n FROM events WHERE processed_at IS NOT NULL AND json_extract(content_json, '$.record_id') LIKE 'b-%'",
      );
      expect(newRows[0]!.n).toBe(0);
      // The daemon itself still answers while the engine is frozen.
      const status = await daemonStatus(home);
      expect(status.projects[0]!.queue_depth).toBe(waiting.unprocessed);
    } finally {
      // The frozen engine dies; the in-flight batch fails and is kept; the supervisor starts a new engine.
      killQuietly(enginePid, "SIGKILL");
      killQuietly(enginePid, "SIGCONT");
    }
    await healthyEngine(home, enginePid);
    const after = await drained(project, before.total + 1);
    expect(after.unprocessed).toBe(0);
    const processedLate = queryProject<{ n: number }>(
      project,
      "SELECT COUNT(*) AS n FROM events WHERE processed_at IS NULL",
    );
    expect(processedLate[0]!.n).toBe(0);
    // The batch that was in flight when the frozen engine died failed and was kept for the retry.
    const logs = home.sqrl(["daemon", "logs", "-n", "2000"]).stdout;
    expect(logs).toMatch(/batch of \d+ events for .* failed \(.*\); kept them, retrying/);
  }, 120_000);

  test("a daemon killed with SIGKILL leaves no engine behind (it sees its parent go); the next daemon starts its own", async () => {
    home = makeHome(CONFIG);
    initProject(home, "orphan");
    const daemon = startDaemon(home);
    const first = await healthyEngine(home);
    killQuietly(daemon.pid, "SIGKILL");
    await waitFor("daemon gone", () => !pidAlive(daemon.pid));
    await waitFor("the orphaned engine to exit on its own", () => !pidAlive(first.engine.pid!), 15_000);

    const next = startDaemon(home);
    expect(next.pid).not.toBe(daemon.pid);
    const second = await healthyEngine(home, first.engine.pid!);
    expect(second.pid).toBe(next.pid);
  }, 120_000);
});
