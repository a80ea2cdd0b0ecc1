/**
 * Finding or starting the daemon: health checks of runtime files and a detached `sqrl daemon start`.
 */
import { spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync, truncateSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { DaemonStartError, DaemonUnreachableError } from "./errors.ts";
import { Health } from "./api.ts";
import { ensurePrivateDir } from "./fs-atomic.ts";
import { homePaths, sqrlHome } from "./paths.ts";
import { isPidAlive, readLockPid, readRuntimeInfo, type RuntimeInfo } from "./runtime-files.ts";

/** Is this code running inside the compiled `sqrl` binary (rather than `bun src/main.ts`)? */
export function isCompiled(): boolean {
  return import.meta.path.startsWith("/$bunfs") || import.meta.path.startsWith("B:\\~BUN");
}

/**
 * argv that runs `sqrl <args>` with the same binary as this process: `[execPath, ...args]` when
 * compiled, `[bun, <abs src/main.ts>, ...args]` from source.
 */
export function sqrlCommand(args: readonly string[]): string[] {
  if (isCompiled()) return [process.execPath, ...args];
  return [process.execPath, resolve(import.meta.dir, "..", "main.ts"), ...args];
}

/**
 * Does the daemon described by `info` (default: daemon.json) answer /health with its token, as this
 * home's daemon? (A copied home's daemon.json may point at another home's live daemon.)
 */
export async function daemonHealthy(
  info: RuntimeInfo | undefined = readRuntimeInfo("daemon"),
  timeoutMs = 1500,
): Promise<boolean> {
  if (!info) return false;
  const health = await runtimeHealth(info, timeoutMs);
  return health !== undefined && (health.home === undefined || sameDir(health.home, sqrlHome()));
}

/** GET /health of a daemon or engine runtime file's server; true when it answers ok with the same pid. */
export async function runtimeHealthy(info: RuntimeInfo, timeoutMs = 1500): Promise<boolean> {
  return (await runtimeHealth(info, timeoutMs)) !== undefined;
}

/** The /health answer of a runtime file's server, when it answers ok with the same pid. */
export async function runtimeHealth(info: RuntimeInfo, timeoutMs = 1500): Promise<Health | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${info.port}/health`, {
      headers: { authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return undefined;
    const body = Health.safeParse(await res.json());
    return body.success && body.data.ok && body.data.pid === info.pid ? body.data : undefined;
  } catch {
    return undefined;
  }
}

/** Are two paths the same folder (symlinks resolved when they exist)? */
export function sameDir(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}

const OUT_MAX_BYTES = 1024 * 1024;

/** Written to daemon.out before each detached start: `sqrl daemon logs` shows the output since the last one. */
export const DAEMON_OUT_MARK = "--- sqrl daemon start ";

export function daemonOutPath(): string {
  return join(homePaths.logs(), "daemon.out");
}

/** Open `~/.sqrl/logs/daemon.out` for a detached daemon's raw stdout/stderr (reset when large). */
function openDaemonOut(): { fd: number; offset: number } {
  const dir = homePaths.logs();
  ensurePrivateDir(dir);
  const path = daemonOutPath();
  try {
    if (statSync(path).size > OUT_MAX_BYTES) truncateSync(path, 0);
  } catch {
    // missing: created below
  }
  const fd = openSync(path, "a", 0o600);
  try {
    writeSync(fd, `${DAEMON_OUT_MARK}${new Date().toISOString()} ---\n`);
    return { fd, offset: fstatSync(fd).size };
  } catch (err) {
    closeSync(fd);
    // A write through a descriptor names no file (ENOSPC on a full disk): name it.
    if (err && typeof err === "object" && !("path" in err)) Object.assign(err, { path });
    throw err;
  }
}

export interface DetachedDaemon {
  pid: number | undefined;
  /** Resolves with the exit code (or signal) when the daemon process ends. */
  exited: Promise<number | string | null>;
  /** Where this daemon's own output begins in daemon.out. */
  outOffset: number;
}

/** Start `sqrl daemon run --detached` as a detached background process (no wait). */
export function spawnDaemonDetached(): DetachedDaemon {
  const { fd, offset } = openDaemonOut();
  try {
    const [cmd, ...args] = sqrlCommand(["daemon", "run", "--detached"]);
    const child = spawn(cmd!, args, { detached: true, stdio: ["ignore", fd, fd], env: process.env });
    const exited = new Promise<number | string | null>((resolve) => {
      child.once("exit", (code, signal) => resolve(code ?? signal));
      child.once("error", (err) => resolve(err.message));
    });
    child.unref();
    return { pid: child.pid, exited, outOffset: offset };
  } finally {
    closeSync(fd);
  }
}

/** What a daemon that stopped at once said, from its output in daemon.out (its `sqrl: …` line when it has one). */
export function daemonExitReason(outOffset: number): string | undefined {
  let text: string;
  try {
    const fd = openSync(daemonOutPath(), "r");
    try {
      const size = fstatSync(fd).size;
      const from = Math.max(outOffset, size - 64 * 1024);
      const buf = Buffer.alloc(Math.max(0, size - from));
      readSync(fd, buf, 0, buf.length, from);
      text = buf.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const said = lines.filter((l) => l.startsWith("sqrl: ")).pop() ?? lines.pop();
  if (!said) return undefined;
  const reason = said.replace(/^sqrl: /, "");
  return reason.length > 400 ? `${reason.slice(0, 400)}…` : reason;
}

/**
 * The running daemon's runtime info; when none answers, start one detached and wait for its /health.
 * A stale daemon.json (dead pid) is ignored and replaced by the new daemon. A daemon that stops as it
 * starts (a bad config, an unwritable or full disk, a folder where daemon.lock goes) is reported at
 * once, with what it said, rather than after the whole wait.
 */
export async function ensureDaemon(opts: { timeoutMs?: number; onStart?: () => void } = {}): Promise<RuntimeInfo> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const current = readRuntimeInfo("daemon");
  if (current && (await daemonHealthy(current))) return current;
  const deadline = Date.now() + timeoutMs;
  let started: DetachedDaemon | undefined;
  let exit: { code: number | string | null } | undefined;
  const start = () => {
    opts.onStart?.();
    started = spawnDaemonDetached();
    void started.exited.then((code) => {
      exit = { code };
    });
  };
  // A live pid that does not answer yet may be a daemon still starting: give it a moment first. One that
  // answers as another home's daemon (a copied daemon.json) is not this home's: start at once.
  if (!current || !isPidAlive(current.pid) || (await runtimeHealth(current)) !== undefined) start();
  else if (!(await waitHealthy(Math.min(deadline, Date.now() + 2000)))) start();
  const info = await waitHealthy(deadline, () => exit !== undefined);
  if (info) return info;
  if (exit && started) {
    // Another daemon of this home may have won the start (ours then stops at once): it answers soon.
    const rival = readLockPid();
    if (rival !== undefined && rival !== started.pid && isPidAlive(rival)) {
      const other = await waitHealthy(Math.max(deadline, Date.now() + 2000));
      if (other) return other;
    }
    const reason = daemonExitReason(started.outOffset);
    throw new DaemonStartError(
      reason ?? `it stopped at once (exit ${String(exit.code)}) without saying why; see \`sqrl daemon logs\``,
    );
  }
  throw new DaemonUnreachableError(
    `it did not answer within ${Math.round(timeoutMs / 1000)} s of being started; see \`sqrl daemon logs\``,
  );
}

/** Poll daemon.json + /health until `deadline` or `stop()` (only while a start is awaited, never when idle). */
async function waitHealthy(deadline: number, stop: () => boolean = () => false): Promise<RuntimeInfo | undefined> {
  while (Date.now() < deadline && !stop()) {
    const info = readRuntimeInfo("daemon");
    if (info && (await daemonHealthy(info))) return info;
    await Bun.sleep(50);
  }
  return undefined;
}
