/**
 * Where to cut a big transcript into slices that the ingest workers read in parallel: at line
 * starts, preferably at a human prompt (a `user` record that carries no tool result), where the
 * lines before it rarely leave anything the next slice needs — the speculative read of the slice
 * then holds. Any cut is correct (ingest-workers.ts checks every slice); good cuts are just faster.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { SliceRange } from "./ingest-worker-protocol.ts";
import type { TailSource } from "./tail.ts";

/** Slices are about size/TARGET_SLICES long, within these bounds. */
export const MIN_SLICE_BYTES = 2 * 1024 * 1024;
const MAX_SLICE_BYTES = 16 * 1024 * 1024;
const TARGET_SLICES = 16;
/** How far past the nominal cut a prompt line is looked for. */
const WINDOW_BYTES = 1024 * 1024;

const USER = Buffer.from('"type":"user"');
const TOOL_RESULT = Buffer.from('"tool_use_id"');

/** Sources whose normalizer can be read in slices (see normalize/slice.ts). */
const SLICEABLE: ReadonlySet<TailSource> = new Set(["claude"]);

export interface SlicePlanOptions {
  /** Slice length (default: about size/16, within 2–16 MiB; no slices below twice the minimum). */
  sliceBytes?: number;
  /** Cut at prompt lines when one is near (default true); false cuts at the first line start. */
  preferPrompts?: boolean;
}

export function planSlices(path: string, size: number, source: TailSource, opts: SlicePlanOptions = {}): SliceRange[] {
  const whole: SliceRange[] = [{ index: 0, from: 0, until: null }];
  if (!SLICEABLE.has(source)) return whole;
  const minSlice = opts.sliceBytes ?? MIN_SLICE_BYTES;
  if (size < 2 * minSlice) return whole;
  const target =
    opts.sliceBytes ?? Math.min(MAX_SLICE_BYTES, Math.max(MIN_SLICE_BYTES, Math.ceil(size / TARGET_SLICES)));
  const preferPrompts = opts.preferPrompts ?? true;
  const cuts: number[] = [];
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(WINDOW_BYTES);
    let pos = target;
    while (pos < size - minSlice / 2) {
      const cut = findCut(fd, buf, pos, size, preferPrompts);
      if (cut !== null && cuts.length > 0 && cut <= cuts[cuts.length - 1]!) break;
      if (cut === null || cut >= size) break;
      cuts.push(cut);
      pos = cut + target;
    }
  } finally {
    closeSync(fd);
  }
  if (cuts.length === 0) return whole;
  const out: SliceRange[] = [];
  let from = 0;
  for (const cut of cuts) {
    out.push({ index: out.length, from, until: cut });
    from = cut;
  }
  out.push({ index: out.length, from, until: null });
  return out;
}

/**
 * Consecutive slices of about `sliceBytes`, cut at line starts, for any line source: the steps in
 * which one reader reads a file when something must happen between them (insert-pipe.ts).
 */
export function lineSlices(path: string, size: number, sliceBytes: number): SliceRange[] {
  const out: SliceRange[] = [];
  let from = 0;
  if (size > sliceBytes) {
    const fd = openSync(path, "r");
    try {
      const buf = Buffer.allocUnsafe(64 * 1024);
      while (from + sliceBytes < size) {
        const cut = findCut(fd, buf, from + sliceBytes, size, false);
        if (cut === null || cut <= from || cut >= size) break;
        out.push({ index: out.length, from, until: cut });
        from = cut;
      }
    } finally {
      closeSync(fd);
    }
  }
  out.push({ index: out.length, from, until: null });
  return out;
}

/** The start of the first prompt line in the window after `pos`, else of the first line there. */
function findCut(fd: number, buf: Buffer, pos: number, size: number, preferPrompts: boolean): number | null {
  let at = pos;
  while (at < size) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
    if (got <= 0) return null;
    const first = buf.indexOf(10, 0);
    if (first < 0 || first + 1 >= got) {
      at += got; // one long line: look further
      continue;
    }
    let start = first + 1;
    for (; preferPrompts; ) {
      const nl = buf.indexOf(10, start);
      if (nl < 0 || nl >= got) break;
      const line = buf.subarray(start, nl);
      if (line.indexOf(USER) >= 0 && line.indexOf(TOOL_RESULT) < 0) return at + start;
      start = nl + 1;
    }
    return at + first + 1;
  }
  return null;
}
