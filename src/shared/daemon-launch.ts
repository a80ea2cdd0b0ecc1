/**
 * Finding or starting the daemon: health checks of runtime files and a detached `sqrl daemon start`.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, realpathSync, statSync, truncateSync } from "node:fs";
import { join, resolve } from "node:path";
import { DaemonUnreachableError } from "./errors.ts";
import { Health } from "./api.ts";
import { ensurePrivateDir } from "./fs-atomic.ts";
import { homePaths, sqrlHome } from "./paths.ts";
import { isPidAlive, readRuntimeInfo, type RuntimeInfo } from "./runtime-files.ts";

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

/** Open `~/.sqrl/logs/daemon.out` for a detached daemon's raw stdout/stderr (reset when large). */
function openDaemonOut(): number {
  const dir = homePaths.logs();
  ensurePrivateDir(dir);
  const path = join(dir, "daemon.out");
  try {
    if (statSync(path).size > OUT_MAX_BYTES) truncateSync(path, 0);
  } catch {
    // missing: created below
  }
  return openSync(path, "a", 0o600);
}

/** Start `sqrl daemon run --detached` as a detached background process (no wait). */
export function spawnDaemonDetached(): number | undefined {
  const fd = openDaemonOut();
  try {
    const [cmd, ...args] = sqrlCommand(["daemon", "run", "--detached"]);
    const child = spawn(cmd!, args, { detached: true, stdio: ["ignore", fd, fd], env: process.env });
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/**
 * The running daemon's runtime info; when none answers, start one detached and wait for its /health.
 * A stale daemon.json (dead pid) is ignored and replaced by the new daemon.
 */
export async function ensureDaemon(opts: { timeoutMs?: number; onStart?: () => void } = {}): Promise<RuntimeInfo> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const current = readRuntimeInfo("daemon");
  if (current && (await daemonHealthy(current))) return current;
  const deadline = Date.now() + timeoutMs;
  const start = () => {
    opts.onStart?.();
    spawnDaemonDetached();
  };
  // A live pid that does not answer yet may be a daemon still starting: give it a moment first.
  if (!current || !isPidAlive(current.pid)) start();
  else if (!(await waitHealthy(Math.min(deadline, Date.now() + 2000)))) start();
  const info = await waitHealthy(deadline);
  if (info) return info;
  throw new DaemonUnreachableError(
    `it did not answer within ${Math.round(timeoutMs / 1000)} s of being started; see \`sqrl daemon logs\``,
  );
}

/** Poll daemon.json + /health until `deadline` (only while a start is awaited, never when idle). */
async function waitHealthy(deadline: number): Promise<RuntimeInfo | undefined> {
  while (Date.now() < deadline) {
    const info = readRuntimeInfo("daemon");
    if (info && (await daemonHealthy(info))) return info;
    await Bun.sleep(50);
  }
  return undefined;
}
