/**
 * The daemon's engine supervisor: runs `sqrl engine` as a child, checks its /health and restarts it with
 * backoff.
 */
import type { Subprocess } from "bun";
import { runtimeHealthy, sqrlCommand } from "../shared/daemon-launch.ts";
import { log as rootLog } from "../shared/log.ts";
import { isPidAlive, readRuntimeInfo, removeRuntimeInfo, type RuntimeInfo } from "../shared/runtime-files.ts";
import { sqrlEnvNumber } from "../shared/env.ts";

const log = rootLog.child({ service: "supervisor" });

export interface EngineStatus {
  healthy: boolean;
  pid: number | null;
  port: number | null;
  restarts: number;
  last_error: string | null;
}

export interface SupervisorOptions {
  /** Receives every line the engine prints (stdout and stderr). */
  onOutput?: (line: string) => void;
  /** Called each time an engine (first or restarted) is healthy. */
  onReady?: (info: RuntimeInfo) => void;
  /** Called when the engine stops being usable (exit, failed health checks). */
  onDown?: (reason: string) => void;
  /** Health-check interval while running; `SQRL_ENGINE_HEALTH_INTERVAL_MS` overrides (default 10 s). */
  healthIntervalMs?: number;
  /** How long a starting engine may take to write memory-service.json and answer /health. */
  startTimeoutMs?: number;
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/** Backoff step kept after the exit of an engine that had been healthy (500 ms × 2³ = 4 s at most). */
const HEALTHY_MAX_ATTEMPT = 3;
/** An engine that stayed up this long resets the backoff. */
const STABLE_AFTER_MS = 60_000;
const FAILED_CHECKS_BEFORE_RESTART = 3;
/** After a failed health check, the next one comes this soon (ms). */
const RECHECK_AFTER_FAILURE_MS = 1_000;
const STOP_GRACE_MS = 5_000;

function healthIntervalFromEnv(): number | undefined {
  const n = sqrlEnvNumber("SQRL_ENGINE_HEALTH_INTERVAL_MS");
  return n !== undefined && n >= 100 ? n : undefined;
}

/**
 * Runs `sqrl engine` as a child process: waits for its memory-service.json and /health, checks its
 * health periodically, restarts it with exponential backoff when it dies or stops answering, and
 * stops it on shutdown. The daemon reaches the engine only through `current()`.
 */
export class EngineSupervisor {
  private readonly opts: SupervisorOptions;
  private readonly healthIntervalMs: number;
  private child: Subprocess | undefined;
  private info: RuntimeInfo | undefined;
  private restarts = 0;
  private attempt = 0;
  private lastError: string | null = null;
  private stopping = false;
  private startedAt = 0;
  private failedChecks = 0;
  private healthTimer: ReturnType<typeof setTimeout> | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private readyWaiters: Array<(info: RuntimeInfo | undefined) => void> = [];

  constructor(opts: SupervisorOptions = {}) {
    this.opts = opts;
    this.healthIntervalMs = opts.healthIntervalMs ?? healthIntervalFromEnv() ?? 10_000;
  }

  /** The healthy engine's runtime info, or undefined while it is down or starting. */
  current(): RuntimeInfo | undefined {
    return this.info;
  }

  status(): EngineStatus {
    return {
      healthy: this.info !== undefined,
      pid: this.child?.pid ?? null,
      port: this.info?.port ?? null,
      restarts: this.restarts,
      last_error: this.lastError,
    };
  }

  /** Resolve with the engine's info once it is healthy, or undefined after `timeoutMs`. */
  waitReady(timeoutMs: number): Promise<RuntimeInfo | undefined> {
    if (this.info || this.stopping) return Promise.resolve(this.info);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        resolve(undefined);
      }, timeoutMs);
      const done = (info: RuntimeInfo | undefined) => {
        clearTimeout(timer);
        resolve(info);
      };
      this.readyWaiters.push(done);
    });
  }

  async start(): Promise<void> {
    await this.stopOrphan();
    await this.spawnEngine();
  }

  /** An engine left running by a daemon that was killed: stop it so only ours writes. */
  private async stopOrphan(): Promise<void> {
    const old = readRuntimeInfo("engine");
    if (!old) return;
    if (!isPidAlive(old.pid)) {
      removeRuntimeInfo("engine", old.pid);
      return;
    }
    if (!(await runtimeHealthy(old, 1500))) return; // not provably an sqrl engine: leave that pid alone
    log.info(`stopping engine pid ${old.pid} left over from an earlier daemon`);
    await terminatePid(old.pid, STOP_GRACE_MS);
    removeRuntimeInfo("engine", old.pid);
  }

  private async spawnEngine(): Promise<void> {
    if (this.stopping) return;
    const cmd = sqrlCommand(["engine"]);
    let child: Subprocess;
    try {
      child = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: process.env });
    } catch (err) {
      this.fail(`could not start the engine (${(err as Error).message})`);
      return;
    }
    this.child = child;
    this.startedAt = Date.now();
    this.pipeOutput(child.stdout as ReadableStream<Uint8Array>);
    this.pipeOutput(child.stderr as ReadableStream<Uint8Array>);
    void child.exited.then((code) => this.onExit(child, code));
    log.info(`engine starting (pid ${child.pid})`);
    const info = await this.awaitStartup(child);
    if (child !== this.child || this.stopping) return;
    if (!info) {
      this.lastError = `engine pid ${child.pid} did not become healthy within ${Math.round(this.startTimeout() / 1000)} s`;
      log.warn(this.lastError);
      child.kill("SIGKILL"); // onExit schedules the restart
      return;
    }
    this.markReady(info);
  }

  private startTimeout(): number {
    return this.opts.startTimeoutMs ?? 20_000;
  }

  /** Poll memory-service.json for this child's pid, then /health (start-up only). */
  private async awaitStartup(child: Subprocess): Promise<RuntimeInfo | undefined> {
    const deadline = Date.now() + this.startTimeout();
    while (Date.now() < deadline && child === this.child && child.exitCode === null && !this.stopping) {
      const info = readRuntimeInfo("engine");
      if (info && info.pid === child.pid && (await runtimeHealthy(info, 1000))) return info;
      await Bun.sleep(50);
    }
    return undefined;
  }

  private markReady(info: RuntimeInfo): void {
    this.info = info;
    this.failedChecks = 0;
    log.info(`engine ready (pid ${info.pid}, port ${info.port})`);
    for (const w of this.readyWaiters.splice(0)) w(info);
    this.opts.onReady?.(info);
    this.scheduleHealthCheck();
  }

  private scheduleHealthCheck(delayMs = this.healthIntervalMs): void {
    clearTimeout(this.healthTimer);
    if (this.stopping) return;
    this.healthTimer = setTimeout(() => void this.healthCheck(), delayMs);
  }

  private async healthCheck(): Promise<void> {
    const info = this.info;
    const child = this.child;
    if (!info || !child || this.stopping) return;
    const ok = await runtimeHealthy(info, Math.max(250, Math.min(2000, this.healthIntervalMs)));
    if (child !== this.child || this.stopping) return;
    if (ok) {
      this.failedChecks = 0;
      if (this.attempt > 0 && Date.now() - this.startedAt > STABLE_AFTER_MS) this.attempt = 0;
    } else if (++this.failedChecks >= FAILED_CHECKS_BEFORE_RESTART) {
      this.goDown(`engine pid ${child.pid} failed ${this.failedChecks} health checks; restarting it`);
      child.kill("SIGKILL");
      return;
    } else {
      log.warn(`engine health check failed (${this.failedChecks}/${FAILED_CHECKS_BEFORE_RESTART})`);
      // a stuck engine (SIGSTOP, a tight loop) is found out within seconds, not after three full intervals
      this.scheduleHealthCheck(Math.min(this.healthIntervalMs, RECHECK_AFTER_FAILURE_MS));
      return;
    }
    this.scheduleHealthCheck();
  }

  private goDown(reason: string): void {
    this.lastError = reason;
    if (this.info) {
      this.info = undefined;
      log.warn(reason);
      this.opts.onDown?.(reason);
    }
  }

  private onExit(child: Subprocess, code: number | null): void {
    if (child !== this.child) return;
    clearTimeout(this.healthTimer);
    removeRuntimeInfo("engine", child.pid);
    if (this.stopping) return;
    const how = child.signalCode ? `signal ${child.signalCode}` : `code ${code}`;
    const wasReady = this.info !== undefined && this.info.pid === child.pid;
    this.goDown(`engine pid ${child.pid} exited (${how})`);
    if (Date.now() - this.startedAt > STABLE_AFTER_MS) this.attempt = 0;
    // an engine that had come up healthy is not a start-up crash loop: back off a little, not up to 30 s
    else if (wasReady) this.attempt = Math.min(this.attempt, HEALTHY_MAX_ATTEMPT);
    this.scheduleRestart();
  }

  private fail(reason: string): void {
    this.goDown(reason);
    this.lastError = reason;
    log.error(reason);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopping) return;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** this.attempt);
    this.attempt++;
    this.restarts++;
    log.info(`restarting the engine in ${delay} ms (restart #${this.restarts})`);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.spawnEngine(), delay);
  }

  private pipeOutput(stream: ReadableStream<Uint8Array>): void {
    const onOutput = this.opts.onOutput;
    void (async () => {
      const decoder = new TextDecoder();
      let buf = "";
      for await (const chunk of stream) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trimEnd();
          buf = buf.slice(nl + 1);
          if (line) onOutput?.(line);
        }
      }
      if (buf.trim()) onOutput?.(buf.trim());
    })().catch(() => undefined);
  }

  /** Stop the engine: SIGTERM, then SIGKILL after a grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.healthTimer);
    clearTimeout(this.restartTimer);
    this.info = undefined;
    for (const w of this.readyWaiters.splice(0)) w(undefined);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(STOP_GRACE_MS).then(() => false)]);
    if (!exited) {
      log.warn(`engine pid ${child.pid} ignored SIGTERM for ${STOP_GRACE_MS} ms; killing it`);
      child.kill("SIGKILL");
      await child.exited;
    }
    removeRuntimeInfo("engine", child.pid);
  }
}

/** SIGTERM a pid, wait up to `graceMs` for it to go, then SIGKILL. */
export async function terminatePid(pid: number, graceMs: number): Promise<boolean> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return true;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isPidAlive(pid)) return true;
    await Bun.sleep(50);
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return true;
  }
  return false;
}
