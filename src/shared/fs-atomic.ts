/**
 * Atomic file writes (temp file and rename) with private modes for files that may hold tokens or personal
 * data, and the private folders they live in.
 */
import { chmodSync, mkdirSync, renameSync, writeFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";

/** Mode of files that may hold tokens or personal data. */
export const PRIVATE_MODE = 0o600;

/**
 * Write a file so that readers see either the old or the new content, never a torn one:
 * write a sibling temp file, fsync via writeFileSync's flush, then rename over the target.
 */
export function writeFileAtomic(path: string, data: string, mode = PRIVATE_MODE): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(tmp, data, { mode, flush: true });
    chmodSync(tmp, mode);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    // Name the file being written, not its temp sibling.
    const e = err as { path?: unknown; info?: { path?: unknown } };
    if (e && typeof e === "object" && e.path === tmp) e.path = path;
    if (e?.info && e.info.path === tmp) e.info.path = path;
    throw err;
  }
}

export function writeJsonAtomic(path: string, value: unknown, mode = PRIVATE_MODE): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/** Mode of folders whose files may hold tokens or personal data (SQRL_HOME, its logs). */
export const PRIVATE_DIR_MODE = 0o700;

/** Create a folder readable by its owner alone; an existing one made that way too (older installs made logs/ 0755). */
export function ensurePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
}
