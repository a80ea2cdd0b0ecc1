/**
 * Tailing that never loses a line.
 *
 * A `TailFile` remembers how far a transcript was read. `readTail` reads `[offset, EOF)`, consumes
 * only complete lines (a partial last line stays for later), counts and skips malformed lines, and
 * restarts at 0 when the file shrank or was replaced (other inode or other first bytes); dedup
 * absorbs the repeats; what the old normalizer still held back is released first. `safeOffset`
 * never passes a line whose events the normalizer still holds back, so a restart from the persisted
 * offset re-reads them.
 *
 * Memory stays bounded whatever a writer does (issue 30): a partial last line is never buffered
 * again on each change (only the new bytes are searched for its newline), and a line that grows
 * past MAX_LINE_BYTES is dropped at once, its rest skipped up to the next newline without being
 * buffered (`skipping`, persisted with the offset so a restart does not parse the middle of it).
 *
 * Gemini's rewritten-JSON documents are re-read whole whenever they change (`readDocument`), and so
 * are zstd-compressed logs (Codex compresses rollouts idle for a week to `.jsonl.zst` and deletes
 * the plain file): decompressed whole, their lines go through a fresh normalizer; dedup absorbs what
 * the plain file already gave.
 */
import { closeSync, fstatSync, readSync, type Stats } from "node:fs";
import { createHash } from "node:crypto";
import type { NormalizedEvent } from "../shared/event.ts";
import type { LineNormalizer } from "./normalize/types.ts";
import { openRegularFile } from "./safe-open.ts";

export type TailSource = "claude" | "codex" | "gemini" | "qwen" | "copilot";

/** Bytes of the file head, and of the block that ends at the offset, hashed to notice a replaced or rewritten file. */
export const HEAD_BYTES = 4096;
/** A line longer than this is counted malformed without being parsed. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** A record nested deeper than this is counted malformed before anything recurses into it. */
export const MAX_DEPTH = 100;
/** Prefix of the hashes that also cover the block before the offset (older ones cover the head only). */
const PREFIX_HASH = "p2:";
/** Read size per chunk (bounded memory on huge files). */
export const CHUNK_BYTES = 4 * 1024 * 1024;

export interface TailFile {
  path: string;
  source: TailSource;
  /** Whole-document format (Gemini .json): re-read entirely when it changes. */
  document: boolean;
  normalizer: LineNormalizer;
  /** Bytes consumed in this process. */
  readOffset: number;
  /** Bytes whose events are all released (what is persisted). */
  safeOffset: number;
  size: number;
  mtimeMs: number;
  ino: number | null;
  /** Hash of the first bytes up to readOffset (at most HEAD_BYTES) and of the HEAD_BYTES before it. */
  headHash: string | null;
  /** Same, up to safeOffset: what is persisted next to it. */
  safeHeadHash: string | null;
  malformed: number;
  /** readOffset is inside an over-long line: everything up to its next newline is skipped unread. */
  skipping: boolean;
  /** Same, at safeOffset: what is persisted next to it. */
  safeSkipping: boolean;
  /** Bytes from readOffset known to hold no newline (a partial line already searched; not persisted). */
  noNewlineUntil: number;
}

export interface TailRead {
  events: NormalizedEvent[];
  lines: number;
  malformed: number;
  /** The file was truncated or replaced and was read again from 0. */
  reset: boolean;
  /** The file does not exist (any more). */
  missing: boolean;
  /** File offsets where over-long lines began that this read dropped (each said once by the caller). */
  overlong: number[];
}

export function newTailFile(
  path: string,
  source: TailSource,
  document: boolean,
  normalizer: LineNormalizer,
  from?: {
    offset: number;
    size: number;
    ino: number | null;
    head_hash: string | null;
    malformed: number;
    skipping?: number | boolean;
  },
): TailFile {
  return {
    path,
    source,
    document,
    normalizer,
    readOffset: from?.offset ?? 0,
    safeOffset: from?.offset ?? 0,
    size: from?.size ?? 0,
    mtimeMs: 0,
    ino: from?.ino ?? null,
    headHash: from?.head_hash ?? null,
    safeHeadHash: from?.head_hash ?? null,
    malformed: from?.malformed ?? 0,
    skipping: Boolean(from?.skipping),
    safeSkipping: Boolean(from?.skipping),
    noNewlineUntil: 0,
  };
}

/**
 * What the bytes before `upto` looked like: the file's head and the block that ends at `upto`. An
 * in-place rewrite that keeps the head (a tool rewriting a transcript) changes the second part.
 */
function hashHead(fd: number, upto: number): string | null {
  const n = Math.min(upto, HEAD_BYTES);
  if (n <= 0) return null;
  const buf = Buffer.allocUnsafe(n);
  const h = createHash("sha1");
  h.update(buf.subarray(0, readSync(fd, buf, 0, n, 0)));
  if (upto > HEAD_BYTES) {
    const from = Math.max(HEAD_BYTES, upto - HEAD_BYTES);
    h.update(buf.subarray(0, readSync(fd, buf, 0, upto - from, from)));
  }
  return PREFIX_HASH + h.digest("hex");
}

/** Does the file still hold what was read up to `upto`? (A hash from before p2 compares the head only.) */
function samePrefix(fd: number, upto: number, saved: string): boolean {
  if (saved.startsWith(PREFIX_HASH)) return hashHead(fd, upto) === saved;
  const n = Math.min(upto, HEAD_BYTES);
  const buf = Buffer.allocUnsafe(n);
  return (
    createHash("sha1")
      .update(buf.subarray(0, readSync(fd, buf, 0, n, 0)))
      .digest("hex") === saved
  );
}

function statOrNull(fd: number): Stats | null {
  try {
    return fstatSync(fd);
  } catch {
    return null;
  }
}

/** Only regular files are opened (a FIFO would block); symlinks only when they stay inside `within`. */
function openOrNull(path: string, within: string | undefined): number | null {
  const opened = openRegularFile(path, within);
  return typeof opened === "string" ? null : opened.fd;
}

/**
 * Nesting depth of a parsed record is at most `max`? The walk stops at `max` levels, so a line
 * nested 100,000 deep (which JSON.parse takes) is refused before any recursive code sees it.
 */
export function withinDepth(v: unknown, max = MAX_DEPTH): boolean {
  if (v === null || typeof v !== "object") return true;
  if (max === 0) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x !== null && typeof x === "object" && !withinDepth(x, max - 1)) return false;
    }
    return true;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (x !== null && typeof x === "object" && !withinDepth(x, max - 1)) return false;
  }
  return true;
}

let scratchBuffer: Buffer | null = null;
let scratchInUse = false;

function scratch(): Buffer {
  if (!scratchBuffer) scratchBuffer = Buffer.allocUnsafe(CHUNK_BYTES);
  return scratchBuffer;
}

/** Parse one line; undefined when it is not JSON (malformed or binary). Blank lines are null. */
function parseLine(buf: Buffer, start: number, end: number): unknown | undefined | null {
  let e = end;
  if (e > start && buf[e - 1] === 13) e--; // \r\n
  if (e <= start) return null;
  if (e - start > MAX_LINE_BYTES) return undefined;
  const text = buf.toString("utf8", start, e);
  if (text.trim().length === 0) return null;
  let v: unknown;
  try {
    v = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  return withinDepth(v) ? v : undefined;
}

export interface ReadOptions {
  /** One-shot read (backfill, explicit ingest): a last line without newline counts if it parses, and held events are flushed. */
  final?: boolean;
  /** Called to make a fresh normalizer when the file must be re-read from 0. */
  renew: () => LineNormalizer;
  /** Receive events chunk by chunk (bounded memory on huge files) instead of collecting them all. */
  sink?: (events: NormalizedEvent[]) => void;
  /** Read only up to this byte offset (a line start): one slice of a file read in parallel slices. */
  until?: number;
  /** With `final`: take the last line as final does, but keep the normalizer's held-back events (the next slice may still need them). */
  hold?: boolean;
  /** The agent's own folder: a symlinked transcript is read only when its target is inside it. */
  within?: string;
}

/** Bytes read at a time while searching ahead for a newline (nothing read that way is kept). */
const PROBE_BYTES = 1024 * 1024;
let probeBuffer: Buffer | null = null;

/** File offset of the first newline in `[from, to)`, or -1. */
function findNewline(fd: number, from: number, to: number): number {
  probeBuffer ??= Buffer.allocUnsafe(PROBE_BYTES);
  const buf = probeBuffer;
  let pos = from;
  while (pos < to) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
    if (got <= 0) return -1;
    const nl = buf.subarray(0, got).indexOf(10);
    if (nl >= 0) return pos + nl;
    pos += got;
  }
  return -1;
}

/**
 * The line that starts at `lineStart` is longer than MAX_LINE_BYTES: count it malformed once and skip
 * it without buffering it (`searchedTo`: no newline before it). Returns where reading goes on.
 */
function dropLongLine(
  file: TailFile,
  fd: number,
  lineStart: number,
  searchedTo: number,
  end: number,
  out: TailRead,
): number {
  out.lines++;
  out.malformed++;
  file.malformed++;
  out.overlong.push(lineStart);
  return skipToNewline(file, fd, searchedTo, end);
}

/** Skipping an over-long line: on past its newline when it came, else to `end` (still skipping). */
function skipToNewline(file: TailFile, fd: number, from: number, end: number): number {
  const nl = findNewline(fd, from, end);
  file.skipping = nl < 0;
  file.noNewlineUntil = 0;
  file.readOffset = nl < 0 ? Math.max(from, end) : nl + 1;
  return file.readOffset;
}

/** Read what was appended since the last call. Synchronous: one file is read and handed on at a time. */
export function readTail(file: TailFile, opts: ReadOptions): TailRead {
  const out: TailRead = { events: [], lines: 0, malformed: 0, reset: false, missing: false, overlong: [] };
  const fd = openOrNull(file.path, opts.within);
  if (fd === null) {
    out.missing = true;
    return out;
  }
  try {
    const st = statOrNull(fd);
    if (!st) {
      out.missing = true;
      return out;
    }
    if (file.document) return readDocumentFd(file, fd, st, opts, out);
    const replaced =
      (file.ino !== null && st.ino !== file.ino) ||
      st.size < file.readOffset ||
      (file.readOffset > 0 && file.headHash !== null && !samePrefix(fd, file.readOffset, file.headHash));
    if (replaced) {
      // What the old content's normalizer still held back (a response that might have grown) was
      // read from complete lines: it is released, not dropped with the normalizer.
      for (const e of file.normalizer.flush({ idle: true })) out.events.push(e);
      file.readOffset = 0;
      file.safeOffset = 0;
      file.malformed = 0;
      file.skipping = false;
      file.noNewlineUntil = 0;
      file.normalizer = opts.renew();
      out.reset = true;
    }
    file.ino = st.ino;
    const end = opts.until === undefined ? st.size : Math.min(opts.until, st.size);
    let pos = file.readOffset;
    if (file.skipping) pos = skipToNewline(file, fd, pos, end);
    if (!file.skipping && !opts.final && file.noNewlineUntil > pos && file.noNewlineUntil <= end) {
      // A partial line searched before: only the bytes written since can end it.
      const nl = findNewline(fd, file.noNewlineUntil, end);
      if (nl < 0) {
        if (end - pos > MAX_LINE_BYTES) pos = dropLongLine(file, fd, pos, end, end, out);
        else {
          file.noNewlineUntil = end;
          pos = end; // nothing to read: the line is still unfinished
        }
      }
    }
    // One read buffer per thread, reused (fresh 4 MiB buffers cost a page fault per 4 KiB); the
    // unfinished line of a chunk moves to its front and the next bytes follow it.
    const own = scratchInUse;
    let chunk = own ? Buffer.allocUnsafe(CHUNK_BYTES) : scratch();
    scratchInUse = true;
    try {
      let keep = 0;
      let carryStart = pos;
      while (pos < end && !file.skipping) {
        const want = Math.min(CHUNK_BYTES, end - pos);
        if (keep + want > chunk.length) {
          // The unfinished line outgrew the buffer: look ahead for its end before buffering more.
          const limit = Math.min(end, carryStart + MAX_LINE_BYTES + 2);
          const nl = findNewline(fd, pos, limit);
          if (nl < 0 && limit < end) {
            // over the cap: dropped unbuffered, reading goes on after its newline
            pos = dropLongLine(file, fd, carryStart, limit, end, out);
            keep = 0;
            carryStart = pos;
            continue;
          }
          if (nl < 0 && !opts.final) {
            file.noNewlineUntil = end; // still being written: wait for its newline
            break;
          }
          const lineEnd = nl < 0 ? end : nl + 1;
          const bigger = Buffer.allocUnsafe(lineEnd - carryStart + CHUNK_BYTES);
          chunk.copy(bigger, 0, 0, keep);
          chunk = bigger;
          if (!own && bigger.length <= 4 * CHUNK_BYTES) scratchBuffer = bigger;
        }
        const got = readSync(fd, chunk, keep, want, pos);
        if (got <= 0) break;
        pos += got;
        const total = keep + got;
        const view = chunk.subarray(0, total);
        const base = carryStart; // file offset of chunk[0]
        let lineStart = 0;
        for (;;) {
          const nl = view.indexOf(10, lineStart);
          if (nl < 0) break;
          consumeLine(file, view, lineStart, nl, base + lineStart, out);
          lineStart = nl + 1;
        }
        file.readOffset = base + lineStart;
        keep = total - lineStart;
        if (keep > 0 && lineStart > 0) chunk.copyWithin(0, lineStart, total);
        carryStart = base + lineStart;
        file.noNewlineUntil = keep > 0 ? pos : 0;
        if (opts.sink && out.events.length > 0) {
          opts.sink(out.events);
          out.events = [];
        }
      }
      if (keep > 0 && opts.final && !file.skipping && pos >= end) {
        // A complete record without its newline (the writer is done): take it if it parses.
        const v = parseLine(chunk, 0, keep);
        if (v !== undefined && v !== null) {
          consumeLine(file, chunk, 0, keep, carryStart, out);
          file.readOffset = carryStart + keep;
          file.noNewlineUntil = 0;
        }
      }
    } finally {
      if (!own) scratchInUse = false;
    }
    const after = file.normalizer.afterBatch?.();
    if (after) out.events.push(...after);
    if (opts.final && !opts.hold) out.events.push(...file.normalizer.flush());
    if (opts.sink && out.events.length > 0) {
      opts.sink(out.events);
      out.events = [];
    }
    file.size = st.size;
    file.mtimeMs = st.mtimeMs;
    file.headHash = hashHead(fd, file.readOffset);
    updateSafeOffset(file);
    file.safeHeadHash = file.safeOffset === file.readOffset ? file.headHash : hashHead(fd, file.safeOffset);
    return out;
  } finally {
    closeSync(fd);
  }
}

function consumeLine(file: TailFile, buf: Buffer, start: number, end: number, absStart: number, out: TailRead): void {
  const v = parseLine(buf, start, end);
  if (v === null) return;
  out.lines++;
  if (v === undefined) {
    out.malformed++;
    file.malformed++;
    return;
  }
  try {
    const events = file.normalizer.push(v, absStart);
    for (const e of events) out.events.push(e);
  } catch {
    // A record shaped in a way no normalizer expected is skipped like a malformed line, never fatal.
    out.malformed++;
    file.malformed++;
  }
}

/** Release held-back events (idle timer, shutdown) and move the safe offset up. */
export function flushTail(file: TailFile): NormalizedEvent[] {
  const events = file.normalizer.flush({ idle: true });
  updateSafeOffset(file);
  if (file.safeOffset === file.readOffset) file.safeHeadHash = file.headHash;
  return events;
}

function updateSafeOffset(file: TailFile): void {
  const held = file.normalizer.heldFrom();
  file.safeOffset = held === null ? file.readOffset : Math.min(file.readOffset, held);
  // a held-back line before it: the persisted offset is that line's start, not inside the long line
  file.safeSkipping = file.skipping && file.safeOffset === file.readOffset;
}

/** The four bytes every zstd frame starts with. */
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** Does this path or these first bytes say zstd (Codex's `rollout-*.jsonl.zst`)? */
export function isZstd(pathOrHead: string | Uint8Array): boolean {
  if (typeof pathOrHead === "string") return pathOrHead.endsWith(".zst");
  return pathOrHead.length >= 4 && ZSTD_MAGIC.equals(pathOrHead.subarray(0, 4));
}

/** The whole of a zstd file decompressed, or null while it cannot be (still being written, damaged). */
export function decompressZstd(bytes: Uint8Array): Buffer | null {
  try {
    return Buffer.from(Bun.zstdDecompressSync(bytes));
  } catch {
    return null;
  }
}

/** Whole-document format: re-read when size or mtime changed; an unparsable document is a write in progress. */
function readDocumentFd(file: TailFile, fd: number, st: Stats, opts: ReadOptions, out: TailRead): TailRead {
  if (!opts.final && st.size === file.size && st.mtimeMs === file.mtimeMs && file.readOffset === st.size) return out;
  if (st.size > MAX_LINE_BYTES) {
    // Never buffered whole: counted malformed and said once, read again only once it is smaller.
    if (!file.skipping) {
      out.lines++;
      out.malformed++;
      file.malformed++;
      out.overlong.push(0);
      file.skipping = true;
    }
    file.ino = st.ino;
    file.size = st.size;
    file.mtimeMs = st.mtimeMs;
    file.readOffset = st.size;
    file.headHash = null;
    updateSafeOffset(file);
    file.safeHeadHash = null;
    return out;
  }
  file.skipping = false;
  const buf = Buffer.allocUnsafe(st.size);
  let got = 0;
  while (got < st.size) {
    const n = readSync(fd, buf, got, st.size - got, got);
    if (n <= 0) break;
    got += n;
  }
  if (isZstd(buf.subarray(0, got))) {
    const text = decompressZstd(buf.subarray(0, got));
    if (!text) return unreadable(file, opts, out);
    file.normalizer = opts.renew(); // the whole log again, from its first line
    readLines(file, text, out);
  } else {
    let doc: unknown;
    try {
      doc = JSON.parse(buf.toString("utf8", 0, got));
    } catch {
      return unreadable(file, opts, out);
    }
    const n = file.normalizer as LineNormalizer & { loadDocument?: (d: unknown) => void };
    if (n.loadDocument) n.loadDocument(doc);
    else n.push(doc, 0);
    out.lines = 1;
  }
  const n = file.normalizer;
  const after = n.afterBatch?.();
  if (after) out.events.push(...after);
  if (opts.final && !opts.hold) out.events.push(...n.flush());
  if (opts.sink && out.events.length > 0) {
    opts.sink(out.events);
    out.events = [];
  }
  file.ino = st.ino;
  file.size = st.size;
  file.mtimeMs = st.mtimeMs;
  file.readOffset = got;
  file.headHash = null;
  updateSafeOffset(file);
  file.safeHeadHash = null;
  return out;
}

/** A document that does not parse (or decompress) yet: a write in progress, or counted malformed on a final read. */
function unreadable(file: TailFile, opts: ReadOptions, out: TailRead): TailRead {
  if (opts.final) {
    out.malformed++;
    file.malformed++;
  }
  return out; // half-written: the next change re-reads it
}

/** Every line of a decompressed log; a last line without its newline counts (the file is complete). */
function readLines(file: TailFile, text: Buffer, out: TailRead): void {
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf(10, start);
    const end = nl < 0 ? text.length : nl;
    consumeLine(file, text, start, end, start, out);
    if (nl < 0) break;
    start = nl + 1;
  }
}
