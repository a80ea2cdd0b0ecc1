/**
 * Is a pid this home's sqrl daemon? daemon.lock and daemon.json only hold a pid, and a pid may be reused
 * by any other process — another home's `sqrl daemon run` included — while a copied home carries another
 * daemon's files. `sqrl daemon stop` signals, and a starting daemon yields to, only a pid shown to be
 * this home's daemon: it answers /health with this home's token and names this home; or its command
 * line is `daemon run` and its environment points at this home (Linux); or, where neither can be read,
 * it is `daemon run` and the lock is fresh (a daemon still starting has no daemon.json yet).
 */
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { runtimeHealth, sameDir } from "./daemon-launch.ts";
import { sqrlHome } from "./paths.ts";
import { daemonLockPath, isPidAlive, readRuntimeInfo } from "./runtime-files.ts";

/** How long after the lock was written a daemon may still be starting (no daemon.json yet). */
const STARTING_GRACE_MS = 30_000;

export async function isThisHomesDaemon(pid: number): Promise<boolean> {
  if (!isPidAlive(pid)) return false;
  const info = readRuntimeInfo("daemon");
  if (info && info.pid === pid) {
    const health = await runtimeHealth(info, 1500);
    if (health) return health.home === undefined || sameDir(health.home, sqrlHome());
  }
  const cmd = commandLine(pid);
  if (cmd !== undefined) {
    const args = cmd.split(/\0|\s+/);
    const i = args.indexOf("daemon");
    if (i < 0 || args[i + 1] !== "run") return false;
  }
  const home = homeOf(pid);
  if (home !== undefined) return sameDir(home, sqrlHome());
  return lockAgeMs() < STARTING_GRACE_MS;
}

function lockAgeMs(): number {
  try {
    return Date.now() - statSync(daemonLockPath()).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The command line of a pid (/proc on Linux, `ps` elsewhere); undefined when it cannot be read. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    // not Linux (or not ours to read): ask ps
  }
  try {
    const res = Bun.spawnSync(["ps", "-o", "command=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
    const out = res.stdout.toString().trim();
    return res.exitCode === 0 && out ? out : undefined;
  } catch {
    return undefined;
  }
}

/** The SQRL_HOME a process runs with, from its environment (Linux, same user); undefined when unreadable. */
function homeOf(pid: number): string | undefined {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const vars = new Map<string, string>();
  for (const kv of env.split("\0")) {
    const eq = kv.indexOf("=");
    if (eq > 0) vars.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  const fromEnv = vars.get("SQRL_HOME");
  if (fromEnv) {
    if (fromEnv.startsWith("/")) return fromEnv;
    try {
      return resolve(readlinkSync(`/proc/${pid}/cwd`), fromEnv);
    } catch {
      return undefined;
    }
  }
  const home = vars.get("HOME");
  return home ? join(home, ".sqrl") : undefined;
}
