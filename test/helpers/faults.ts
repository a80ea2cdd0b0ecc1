/**
 * Shared by the fault tests and `bun run bench faults`: Claude Code lines made to order, a real
 * tmpfs (mounted when this machine allows it; null otherwise), and a filler that fills a disk.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** One Claude Code user record (one user_message event) with text `user message number <i> in the session`, optionally padded. */
export function claudeLine(cwd: string, sessionId: string, i: number, pad = 0): string {
  const text = `user message number ${i} in the session${pad > 0 ? ` ${"lorem ipsum ".repeat(Math.ceil(pad / 12)).slice(0, pad)}` : ""}`;
  const ts = new Date(Date.UTC(2026, 2, 1, 10, 0, 0) + i * 1000).toISOString();
  return `${JSON.stringify({ type: "user", uuid: `u-${sessionId.slice(0, 8)}-${i}`, sessionId, timestamp: ts, cwd, message: { role: "user", content: text } })}\n`;
}

export interface Mounted {
  path: string;
  unmount(): void;
}

/** Mount a tmpfs of `size` (e.g. "3m") at `path`; null when mounting is not allowed here. */
export function mountTmpfs(path: string, size: string): Mounted | null {
  mkdirSync(path, { recursive: true });
  const res = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", path], {
    stdout: "ignore",
    stderr: "ignore",
  });
  if (res.exitCode !== 0) return null;
  return {
    path,
    unmount: () => {
      Bun.spawnSync(["umount", "-l", path], { stdout: "ignore", stderr: "ignore" });
    },
  };
}

/** Write a filler file in `dir` until the disk is full; returns its path (remove it to free the space). */
export function fillDisk(dir: string): string {
  const path = join(dir, "filler.bin");
  const fd = openSync(path, "w");
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) {
      try {
        writeSync(fd, block);
      } catch {
        break;
      }
    }
    // and the last few bytes
    for (;;) {
      try {
        writeSync(fd, block.subarray(0, 512));
      } catch {
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

export function removeQuietly(path: string): void {
  rmSync(path, { force: true, recursive: true });
}
