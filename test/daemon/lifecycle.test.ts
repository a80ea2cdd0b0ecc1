import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  appendLines,
  claudeTurns,
  daemonStatus,
  initProject,
  makeHome,
  pidAlive,
  projectEvents,
  readRuntime,
  SQRL_BIN,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
} from "./harness.ts";

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

describe.skipIf(!existsSync(SQRL_BIN))("sqrl daemon lifecycle (compiled binary)", () => {
  test("start → status → a second start/run reports the running one → stop removes runtime files", async () => {
    home = makeHome();
    const project = initProject(home, "alpha");
    const info = startDaemon(home);
    expect(pidAlive(info.pid)).toBe(true);
    expect(info.host).toBe("127.0.0.1");
    expect(statSync(join(home.sqrlHome, "daemon.json")).mode & 0o777).toBe(0o600);

    const engine = await waitFor("a healthy engine in /status", async () => {
      const s = await daemonStatus(home!);
      return s.engine.healthy ? s : undefined;
    });
    expect(engine.pid).toBe(info.pid);
    expect(engine.projects.map((p) => p.project_id)).toEqual([project]);
    expect(engine.sources.map((s) => s.name).sort()).toEqual([
      "claude",
      "codex",
      "copilot",
      "gemini",
      "git",
      "opencode",
      "qwen",
    ]);
    const engineInfo = readRuntime(home, "engine")!;
    expect(engine.engine.pid).toBe(engineInfo.pid);
    expect(statSync(join(home.sqrlHome, "memory-service.json")).mode & 0o777).toBe(0o600);

    const statusCli = home.sqrl(["daemon", "status", "--json"]);
    expect(statusCli.code).toBe(0);
    const parsed = JSON.parse(statusCli.stdout);
    expect(parsed).toMatchObject({ running: true, pid: info.pid, port: info.port });
    expect(parsed.projects[0]).toMatchObject({ project_id: project, queue_depth: 0 });

    const human = home.sqrl(["daemon", "status"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`pid ${info.pid}`);
    expect(human.stdout).toContain(project);

    const again = home.sqrl(["daemon", "start", "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ state: "already_running", pid: info.pid, port: info.port });

    const second = home.sqrl(["daemon", "run"]);
    expect(second.code).toBe(1); // a refusal is a failure (issue 13 item 9)
    expect(second.stderr).toContain(`already running (pid ${info.pid}`);
    expect(readRuntime(home, "daemon")?.pid).toBe(info.pid);

    const stop = home.sqrl(["daemon", "stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`stopped (pid ${info.pid})`);
    expect(pidAlive(info.pid)).toBe(false);
    await waitFor("the engine to exit", () => !pidAlive(engineInfo.pid), 10_000);
    expect(existsSync(join(home.sqrlHome, "daemon.json"))).toBe(false);
    expect(existsSync(join(home.sqrlHome, "daemon.lock"))).toBe(false);
    expect(existsSync(join(home.sqrlHome, "memory-service.json"))).toBe(false);

    const after = home.sqrl(["daemon", "status"]);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("not running");

    const logs = home.sqrl(["daemon", "logs", "-n", "500"]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain("listening on 127.0.0.1");
    expect(logs.stdout).toContain("engine ready");
    expect(logs.stdout).toContain("daemon stopped");
  }, 90_000);

  test("a stale daemon.json and daemon.lock of a dead pid are cleaned up by the next start", async () => {
    home = makeHome();
    initProject(home, "alpha");
    const dead = Bun.spawnSync(["true"]).pid;
    expect(pidAlive(dead)).toBe(false);
    writeFileSync(
      join(home.sqrlHome, "daemon.json"),
      JSON.stringify({
        pid: dead,
        host: "127.0.0.1",
        port: 9,
        token: "x".repeat(32),
        started_at: new Date().toISOString(),
      }),
      { mode: 0o600 },
    );
    writeFileSync(join(home.sqrlHome, "daemon.lock"), `${dead}\n`);

    const status = home.sqrl(["daemon", "status"]);
    expect(status.code).toBe(1);

    const info = startDaemon(home);
    expect(info.pid).not.toBe(dead);
    expect(readFileSync(join(home.sqrlHome, "daemon.lock"), "utf8").trim()).toBe(String(info.pid));
    expect((await daemonStatus(home)).pid).toBe(info.pid);

    // `stop` on a stale file reports "not running" and removes it.
    expect(home.sqrl(["daemon", "stop"]).code).toBe(0);
    writeFileSync(
      join(home.sqrlHome, "daemon.json"),
      JSON.stringify({
        pid: dead,
        host: "127.0.0.1",
        port: 9,
        token: "x".repeat(32),
        started_at: new Date().toISOString(),
      }),
    );
    const stopStale = home.sqrl(["daemon", "stop"]);
    expect(stopStale.stdout).toContain("not running (removed a stale daemon.json)");
    expect(existsSync(join(home.sqrlHome, "daemon.json"))).toBe(false);
  }, 90_000);

  test("a project added by `sqrl init` while the daemon runs is watched without a restart", async () => {
    home = makeHome("[daemon]\nbatch_interval_seconds = 1\n");
    initProject(home, "alpha");
    const info = startDaemon(home);
    await waitFor("engine healthy", async () => (await daemonStatus(home!)).engine.healthy);

    const beta = initProject(home, "beta");
    await waitFor(
      "beta in /status",
      async () => (await daemonStatus(home!)).projects.some((p) => p.project_id === beta),
      15_000,
    );

    const turns = claudeTurns({
      cwd: beta,
      sessionId: "b0b0b0b0-0000-4000-8000-000000000001",
      turns: 3,
      startMs: Date.now() - 60_000,
    });
    appendLines(transcriptPath(home, beta, "b0b0b0b0-0000-4000-8000-000000000001"), turns.lines);
    const counts = await waitFor("beta's events to be stored and processed", () => {
      const c = projectEvents(beta);
      return c.total > 0 && c.unprocessed === 0 ? c : undefined;
    });
    expect(counts.total).toBeGreaterThanOrEqual(turns.userTextUuids.length);
    expect((await daemonStatus(home)).pid).toBe(info.pid); // same daemon, no restart
  }, 90_000);

  test("SIGTERM and SIGINT shut a foreground `daemon run` down cleanly", async () => {
    home = makeHome();
    initProject(home, "alpha");
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const child = Bun.spawn([SQRL_BIN, "daemon", "run"], { env: home.env, stdout: "pipe", stderr: "pipe" });
      const info = await waitFor("daemon.json of the foreground daemon", () => {
        const i = readRuntime(home!, "daemon");
        return i?.pid === child.pid ? i : undefined;
      });
      const engine = await waitFor("engine healthy", async () => {
        const s = await daemonStatus(home!);
        return s.engine.healthy ? s.engine : undefined;
      });
      child.kill(signal);
      expect(await child.exited).toBe(0);
      const stderr = await new Response(child.stderr).text();
      expect(stderr).toContain(`${signal}: stopping the daemon`);
      expect(stderr).toContain("daemon stopped");
      expect(pidAlive(info.pid)).toBe(false);
      await waitFor("engine gone", () => !pidAlive(engine.pid!), 10_000);
      expect(existsSync(join(home.sqrlHome, "daemon.json"))).toBe(false);
      expect(existsSync(join(home.sqrlHome, "memory-service.json"))).toBe(false);
      expect(existsSync(join(home.sqrlHome, "daemon.lock"))).toBe(false);
    }
  }, 90_000);
});
