/**
 * Opening a transcript without trusting what the name points at. A FIFO, socket or device named
 * `*.jsonl` would block `open()` (and with it the daemon's one thread) or feed it endless bytes, so
 * only regular files are read: the path is checked with lstat, opened non-blocking, and checked
 * again on the descriptor. A symlink is followed only when its target lies inside the agent's own
 * folder (`within`); a link to `/etc/shadow` in a watched folder is refused.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync } from "node:fs";
import { sep } from "node:path";

export type RefusedReason = "missing" | "not_regular" | "link_outside" | "link_loop";

export interface OpenedFile {
  fd: number;
}

/** Is `path` (real) inside `root` (real)? */
function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** A symlink that cannot be resolved: "link_loop" for a loop (ELOOP), else "missing" (dangling). */
function unresolved(path: string): RefusedReason {
  try {
    realpathSync(path);
    return "missing";
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ELOOP" ? "link_loop" : "missing";
  }
}

/**
 * A read-only descriptor of a regular file, or why not. `within`: the folder a symlink's target
 * must stay in (undefined: a path the user named explicitly, followed wherever it points).
 */
export function openRegularFile(path: string, within?: string): OpenedFile | RefusedReason {
  let st: import("node:fs").Stats;
  try {
    st = lstatSync(path);
  } catch {
    return "missing";
  }
  if (st.isSymbolicLink()) {
    const target = realOrNull(path);
    if (target === null) return unresolved(path);
    if (within !== undefined) {
      const root = realOrNull(within);
      if (root === null || !inside(target, root)) return "link_outside";
    }
  } else if (!st.isFile()) return "not_regular";
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return "missing";
  }
  try {
    if (fstatSync(fd).isFile()) return { fd };
  } catch {
    // fall through: refused below
  }
  closeSync(fd);
  return "not_regular";
}

/** Why `path` would be refused (without opening it), for the log; undefined when it would be read or is gone. */
export function refusalOf(path: string, within?: string): Exclude<RefusedReason, "missing"> | undefined {
  const opened = openRegularFile(path, within);
  if (typeof opened !== "string") {
    closeSync(opened.fd);
    return undefined;
  }
  return opened === "missing" ? undefined : opened;
}
