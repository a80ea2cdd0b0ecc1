/**
 * The daemon process: one per machine (lock file), serving its API, supervising the engine, running capture
 * and the batcher.
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, watch, writeSync, type FSWatcher } from "node:fs";
import type { DaemonStatus } from "../shared/api.ts";
import { configureLog, log as rootLog } from "../shared/log.ts";
import { processConfig } from "../shared/config.ts";
import { sqrlHome } from "../shared/paths.ts";
import { listProjects } from "../shared/projects.ts";
import { isThisHomesDaemon } from "../shared/daemon-identity.ts";
import {
  daemonLockPath,
  isPidAlive,
  readLockPid,
  readRuntimeInfo,
  removeRuntimeInfo,
  writeRuntimeInfo,
  type RuntimeInfo,
} from "../shared/runtime-files.ts";
import { nowIso } from "../shared/time.ts";
import { VERSION } from "../version.ts";
import { Batcher } from "./batcher.ts";
import { CaptureService } from "./capture-service.ts";
import { EngineSupervisor } from "./engine-supervisor.ts";
import { attachLogFile, type LogFileHandle } from "./log-file.ts";
import type { AgentView } from "./ui/routes.ts";
import { startDaemonServer, uptime, type DaemonServer } from "./server.ts";

const log = rootLog.child({ service: "daemon" });

export interface RunDaemonOptions {
  /** Started by `ensureDaemon`: stderr already goes to a file, so log only to the rotating log. */
  detached?: boolean;
  /** The MCP tools' answers for the page's "What the agent sees" (src/mcp/agent-view.ts, via the CLI). */
  agentView?: AgentView;
}

export type RunDaemonResult =
  | { kind: "stopped" }
  | { kind: "already_running"; pid: number; info: RuntimeInfo | undefined };

/**
 * Take the one-daemon-per-home lock (`~/.sqrl/daemon.lock`, created exclusively, holding the pid).
 * A lock whose pid is not this home's daemon (dead, or reused by another process, another home's
 * daemon included) is stale and replaced. Returns the live owner's pid when it is taken.
 */
export async function acquireDaemonLock(): Promise<{ ok: true } | { ok: false; pid: number }> {
  const path = daemonLockPath();
  mkdirSync(sqrlHome(), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = readLockPid(path);
      if (owner !== undefined && owner !== process.pid && (await isThisHomesDaemon(owner)))
        return { ok: false, pid: owner };
      log.info(
        `removing stale daemon.lock${owner ? ` of pid ${owner} (${isPidAlive(owner) ? "alive, but not this home's sqrl daemon" : "dead"})` : ""}`,
      );
      rmSync(path, { force: true });
      continue;
    }
    // Two starters may both have removed the same stale lock: whoever's pid is in it now wins.
    await Bun.sleep(25);
    const owner = readLockPid(path);
    if (owner === process.pid) return { ok: true };
    if (owner !== undefined && (await isThisHomesDaemon(owner))) return { ok: false, pid: owner };
  }
  throw new Error(`could not take ${path}; remove it if no sqrl daemon is running`);
}

function releaseDaemonLock(): void {
  if (readLockPid() === process.pid) rmSync(daemonLockPath(), { force: true });
}

/**
 * `sqrl daemon run`: the one daemon of this machine. Serves the local API, supervises the engine,
 * runs capture and the batcher, follows projects.json, and shuts down cleanly on SIGTERM/SIGINT.
 * Resolves when it has stopped (or at once when another daemon already runs).
 */
export async function runDaemon(opts: RunDaemonOptions = {}): Promise<RunDaemonResult> {
  const lock = await acquireDaemonLock();
  if (!lock.ok) return { kind: "already_running", pid: lock.pid, info: readRuntimeInfo("daemon") };

  let logFile: LogFileHandle;
  try {
    logFile = attachLogFile({ stderr: !opts.detached });
    configureLog(processConfig().get()["log.level"]);
  } catch (err) {
    releaseDaemonLock(); // a bad config or an unwritable log: the next start must not meet this lock
    throw err;
  }
  const stale = readRuntimeInfo("daemon");
  if (stale && stale.pid !== process.pid) {
    removeRuntimeInfo("daemon", stale.pid);
    log.info(`removed stale daemon.json of pid ${stale.pid}`);
  }
  try {
    await new Daemon(logFile, opts.agentView).run();
  } finally {
    removeRuntimeInfo("daemon");
    releaseDaemonLock();
    logFile.detach();
  }
  return { kind: "stopped" };
}

class Daemon {
  private readonly startedAt = Date.now();
  private readonly logFile: LogFileHandle;
  private projects: string[] = [];
  private lastError: string | null = null;
  private readonly supervisor: EngineSupervisor;
  private readonly batcher: Batcher;
  private readonly capture: CaptureService;
  private server: DaemonServer | undefined;
  private watcher: FSWatcher | undefined;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private reloading: Promise<void> = Promise.resolve();

  private readonly agentView: AgentView | undefined;

  constructor(logFile: LogFileHandle, agentView?: AgentView) {
    this.logFile = logFile;
    this.agentView = agentView;
    this.projects = this.readProjects();
    this.supervisor = new EngineSupervisor({
      onOutput: (line) => this.logFile.raw(line, "engine"),
      onReady: () => this.batcher.engineReady(),
      onDown: () => this.batcher.engineDown(),
    });
    this.batcher = new Batcher({ engine: () => this.supervisor.current(), projects: () => this.projects });
    this.capture = new CaptureService({ onEvents: (projectId, added) => this.batcher.notify(projectId, added) });
  }

  private readProjects(): string[] {
    try {
      return listProjects();
    } catch (err) {
      this.recordError(`projects.json: ${(err as Error).message}`);
      return this.projects;
    }
  }

  private recordError(message: string): void {
    this.lastError = `${nowIso()}: ${message}`;
    log.error(message);
  }

  async run(): Promise<void> {
    const stopSignal = waitForStopSignal(() => this.scheduleReload());
    const onUnexpected = (err: unknown) =>
      this.recordError(`unexpected: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.on("uncaughtException", onUnexpected);
    process.on("unhandledRejection", onUnexpected);

    this.server = startDaemonServer({
      startedAt: this.startedAt,
      status: () => this.status(),
      engine: (timeoutMs) => this.supervisor.waitReady(timeoutMs),
      agentView: this.agentView,
    });
    writeRuntimeInfo("daemon", {
      pid: process.pid,
      host: "127.0.0.1",
      port: this.server.port,
      token: this.server.token,
      started_at: nowIso(this.startedAt),
      version: VERSION,
    });
    log.info(
      `sqrl daemon ${VERSION} listening on 127.0.0.1:${this.server.port} (pid ${process.pid}), ${this.projects.length} project(s)`,
    );
    this.watchProjectsFile();

    const starting = Promise.all([
      this.supervisor.start().catch((err) => this.recordError(`engine: ${(err as Error).message}`)),
      this.capture.start().catch((err) => this.recordError(`capture: ${(err as Error).message}`)),
    ]);
    this.batcher.start();
    const first = await Promise.race([starting.then(() => "started" as const), stopSignal]);
    if (first === "started") log.info("capture and engine started");
    const signal = first === "started" ? await stopSignal : first;
    await this.shutdown(signal, starting);
    process.off("uncaughtException", onUnexpected);
    process.off("unhandledRejection", onUnexpected);
  }

  /** projects.json is replaced atomically (rename), so watch its folder and filter by name. */
  private watchProjectsFile(): void {
    try {
      this.watcher = watch(sqrlHome(), { persistent: true }, (_event, filename) => {
        if (filename === null || String(filename).startsWith("projects.json")) this.scheduleReload();
      });
      this.watcher.on("error", (err) => this.recordError(`watching projects.json: ${err.message}`));
    } catch (err) {
      this.recordError(`cannot watch ${sqrlHome()} for new projects: ${(err as Error).message}`);
    }
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloading = this.reloading.then(() => this.reloadProjects());
    }, 200);
  }

  private async reloadProjects(): Promise<void> {
    if (!existsSync(sqrlHome())) return;
    const next = this.readProjects();
    const changed = next.length !== this.projects.length || next.some((p, i) => p !== this.projects[i]);
    if (!changed) return;
    const added = next.filter((p) => !this.projects.includes(p));
    const removed = this.projects.filter((p) => !next.includes(p));
    this.projects = next;
    log.info(
      `projects.json changed: ${added.length} added${added.length ? ` (${added.join(", ")})` : ""}, ${removed.length} removed`,
    );
    try {
      await this.capture.refreshProjects();
    } catch (err) {
      this.recordError(`capture refresh: ${(err as Error).message}`);
    }
    void this.batcher.trigger();
  }

  status(): DaemonStatus {
    return {
      pid: process.pid,
      port: this.server?.port ?? 0,
      version: VERSION,
      uptime_s: uptime(this.startedAt),
      projects: this.batcher.status(),
      sources: this.capture.status(),
      engine: this.supervisor.status(),
      last_error: this.capture.problem() ?? this.lastError,
    };
  }

  private async shutdown(signal: string, starting: Promise<unknown>): Promise<void> {
    log.info(`${signal}: stopping the daemon`);
    const force = () => {
      log.warn("second signal during shutdown: exiting now");
      removeRuntimeInfo("daemon");
      releaseDaemonLock();
      process.exit(130);
    };
    process.once("SIGINT", force);
    process.once("SIGTERM", force);
    clearTimeout(this.reloadTimer);
    this.watcher?.close();
    await this.reloading.catch(() => undefined);
    await this.batcher.stop();
    await this.capture.stop().catch((err) => log.error(`stopping capture: ${(err as Error).message}`));
    await Promise.race([starting, Bun.sleep(2000)]);
    await this.supervisor.stop();
    await this.server?.stop();
    removeRuntimeInfo("daemon");
    log.info("daemon stopped");
  }
}

/** Resolves with the signal's name on the first SIGTERM/SIGINT; SIGHUP re-reads projects.json. */
function waitForStopSignal(onHup: () => void): Promise<string> {
  return new Promise((resolve) => {
    const done = (sig: string) => {
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
      process.off("SIGHUP", onHup);
      resolve(sig);
    };
    const onTerm = () => done("SIGTERM");
    const onInt = () => done("SIGINT");
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
    process.on("SIGHUP", onHup);
  });
}
