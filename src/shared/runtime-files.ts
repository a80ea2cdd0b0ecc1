/**
 * Runtime files (daemon.json, memory-service.json): how clients find and authenticate to a running daemon or
 * engine.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import { writeJsonAtomic } from "./fs-atomic.ts";
import { join } from "node:path";
import { homePaths, sqrlHome } from "./paths.ts";

/** What a running daemon or engine writes so that clients can find and authenticate to it. */
export const RuntimeInfo = z.object({
  pid: z.number().int().positive(),
  host: z.literal("127.0.0.1"),
  port: z.number().int().positive(),
  token: z.string().min(16),
  started_at: z.string(),
  version: z.string().optional(),
});
export type RuntimeInfo = z.infer<typeof RuntimeInfo>;

export type RuntimeKind = "daemon" | "engine";

function pathOf(kind: RuntimeKind): string {
  return kind === "daemon" ? homePaths.daemon() : homePaths.engine();
}

/** Read daemon.json / memory-service.json; undefined when missing or unreadable. */
export function readRuntimeInfo(kind: RuntimeKind): RuntimeInfo | undefined {
  const path = pathOf(kind);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = RuntimeInfo.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function writeRuntimeInfo(kind: RuntimeKind, info: RuntimeInfo): void {
  writeJsonAtomic(pathOf(kind), info);
}

/** Remove the runtime file, but only if it still describes `pid` (a newer process may own it). */
export function removeRuntimeInfo(kind: RuntimeKind, pid = process.pid): void {
  const current = readRuntimeInfo(kind);
  if (!current || current.pid === pid) rmSync(pathOf(kind), { force: true });
}

export function daemonLockPath(): string {
  return join(sqrlHome(), "daemon.lock");
}

/** The pid in daemon.lock; undefined when missing or unreadable. */
export function readLockPid(path = daemonLockPath()): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Is a process with this pid alive (signal 0 probe)? A zombie (exited, not yet reaped) is not. */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(pid);
}

/** Linux: state `Z` in /proc/<pid>/stat (containers whose pid 1 reaps slowly keep these around). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}
