/**
 * Reading a repository file for a memory check: only regular files inside the project, at most
 * 10 MB, text only (a NUL byte in the first 8 KB means binary). What cannot be read says why, so the
 * check can call the memory unverifiable instead of failing.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, sep } from "node:path";

export const MAX_SOURCE_BYTES = 10 * 1024 * 1024;

export interface FileStamp {
  mtimeMs: number;
  size: number;
}

export type SourceRead =
  | { ok: true; text: string; stamp: FileStamp }
  | { ok: false; why: "missing" | "not_file" | "binary" | "too_large" | "outside"; stamp: FileStamp | null };

/** Is `rel` a path inside the project (no `..`, not absolute)? */
export function insideRepo(rel: string): boolean {
  if (!rel || isAbsolute(rel)) return false;
  const n = normalize(rel);
  return n !== ".." && !n.startsWith(`..${sep}`);
}

/** mtime and size of `rel`, or null when it is missing or not a regular file. */
export function stampOf(root: string, rel: string): FileStamp | null {
  try {
    const st = statSync(join(root, rel));
    return st.isFile() ? { mtimeMs: st.mtimeMs, size: st.size } : null;
  } catch {
    return null;
  }
}

function looksBinary(path: string, size: number): boolean {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(Math.min(8192, size));
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(0);
  } finally {
    closeSync(fd);
  }
}

export function readSource(root: string, rel: string): SourceRead {
  if (!insideRepo(rel)) return { ok: false, why: "outside", stamp: null };
  const path = join(root, rel);
  let st;
  try {
    st = statSync(path);
  } catch {
    return { ok: false, why: "missing", stamp: null };
  }
  if (!st.isFile()) return { ok: false, why: "not_file", stamp: null };
  const stamp = { mtimeMs: st.mtimeMs, size: st.size };
  if (st.size > MAX_SOURCE_BYTES) return { ok: false, why: "too_large", stamp };
  try {
    if (looksBinary(path, st.size)) return { ok: false, why: "binary", stamp };
    return { ok: true, text: readFileSync(path, "utf8"), stamp };
  } catch {
    return { ok: false, why: "missing", stamp: null };
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A regex that finds `name` as a whole word (identifier characters on neither side). */
export function wordRe(name: string, flags = ""): RegExp {
  return new RegExp(`(?<![\\w$])${escapeRe(name)}(?![\\w$])`, flags);
}

/** Whitespace collapsed, trimmed, clipped: how a line of code is compared across edits. */
export function normalizeLine(line: string): string {
  return line.replace(/\s+/g, " ").trim().slice(0, 240);
}

/** The 0-based line index of the first whole-word occurrence of `name`, or -1. */
export function lineOf(text: string, name: string): number {
  const m = wordRe(name).exec(text);
  if (!m) return -1;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < m.index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
