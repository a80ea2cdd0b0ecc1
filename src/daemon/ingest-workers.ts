/**
 * Parallel ingest of one big file: the ingest workers read its slices into rows (parse, normalize,
 * redact, hash, serialize — the CPU-heavy part) while this thread inserts them, in file order.
 *
 * Slice 0 is read exactly (a fresh normalizer at the start of the file is what a one-go read has).
 * Every later slice is read speculatively by a fresh normalizer on whichever worker is free, and
 * its rows wait here. Once the slice before it is read exactly, its end state decides
 * (`sliceFollows`): either the speculative rows are exactly what a one-go read gives — then the
 * earlier slice's held-back events are released, the waiting rows go in, and the slice counts as
 * read exactly — or they are dropped and the worker holding the earlier slice's normalizer reads
 * the slice again, on from where it stopped. The rows, and their order, are those of a one-go read.
 *
 * Workers are started on first use, kept while files keep coming, stopped after a few idle seconds,
 * and never keep the process alive on their own.
 */
import { availableParallelism } from "node:os";
import { log as rootLog } from "../shared/log.ts";
import { othersBusyCores } from "./machine-load.ts";
import type { FileRowsSummary, PackedBatch, RowsJob } from "./file-rows.ts";
import type { IngestWorkerReply, IngestWorkerRequest, SliceRange } from "./ingest-worker-protocol.ts";
import { sliceFollows, stateAfter, type SliceAssumptions, type SliceSeed, type SliceState } from "./normalize/slice.ts";
import type { ToolUseInfo } from "./normalize/types.ts";
import { sqrlEnv } from "../shared/env.ts";

const log = rootLog.child({ service: "capture" });

/** Batches one worker may post ahead of this thread taking them. */
const MAX_AHEAD = 4;
/** Slices read speculatively and not yet confirmed, at most (bounds the rows waiting here). */
const MAX_SPECULATIVE = 4;
/** Slice reads queued per worker: the next one is there when the current one ends, while this thread is busy inserting. */
const READS_PER_WORKER = 2;
const IDLE_STOP_MS = 5000;

type SliceStatus = "unassigned" | "speculating" | "speculated" | "reading" | "read" | "flushing" | "done";

interface SliceRun {
  range: SliceRange;
  status: SliceStatus;
  /** The worker reading it, or holding its normalizer. */
  worker: number;
  buffer: PackedBatch[];
  summary?: FileRowsSummary;
  state?: SliceState | null;
  assumptions?: SliceAssumptions | null;
  /** The rows a flush of its normalizer would hand on (null: unknown, flush for real). */
  flushRows?: PackedBatch | null;
  /** Once read exactly: the exact normalizer state at its end (its own cwd etc. completed from before). */
  exact?: SliceState | null;
}

interface Slot {
  worker: Worker;
  /** Slice reads sent and not yet ended. */
  reads: number;
  credit: Int32Array;
  creditBuffer: SharedArrayBuffer;
  /** This slot has been told about the current job. */
  joined: boolean;
}

interface FileRun {
  id: number;
  job: RowsJob;
  runs: SliceRun[];
  /** The slice being read exactly, or read and held, or being flushed: every row before it is in. */
  head: number;
  /** Every tool_use of the slices read exactly so far (the latest of each id). */
  tools: Map<string, ToolUseInfo>;
  totals: FileRowsSummary;
  onBatch: (batch: PackedBatch) => void;
  settle: (r: FileRowsSummary | Error) => void;
}

let slots: Slot[] = [];
/** Workers cannot be started in this process (a build without the worker entry point): stop trying. */
let unavailable = false;
let current: FileRun | null = null;
let nextJob = 1;
let idleTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * How many workers a file is read with (0: in the caller's thread). Two, where there are three cores
 * or more (two workers and the inserting thread each get one) and the other processes leave about one
 * of them free; on a busy machine the extra threads only add their own cost (measured: ~35% more CPU
 * for the same rows), so the file is read in-thread. On two cores they lose even when the machine is
 * quiet: `bun run bench ingest` at load 0.7, no other process busy, twice: 11.3k and 11.6k events/s on
 * 2 workers against 14.0k and 14.3k in one thread (issue 30). `SQRL_INGEST_WORKERS` (0–8) overrides it.
 */
export function ingestParallelism(): number {
  if (unavailable) return 0;
  const forced = Number.parseInt(sqrlEnv("SQRL_INGEST_WORKERS") ?? "", 10);
  if (Number.isInteger(forced) && forced >= 0) return Math.min(forced, 8);
  if (availableParallelism() < 3) return 0;
  return othersBusyCores() < OTHERS_BUSY_LIMIT ? 2 : 0;
}

/** Cores the other processes keep busy, at most, for the workers to be worth it. */
const OTHERS_BUSY_LIMIT = 0.75;

function stopWorkers(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  for (const s of slots) s.worker.terminate();
  slots = [];
}

/** Workers started (the ones the last file was read with). */
export function slotsInUse(): number {
  return slots.length;
}

/** Stop the workers now (tests, shutdown); a later file starts new ones. */
export function stopIngestWorkers(): void {
  if (!current) stopWorkers();
}

/**
 * The worker's entry point: beside this file when run from source; in the compiled binary (where
 * every module reports the binary's own URL) the second entry point of scripts/build.ts, kept under
 * its path below src/.
 */
function workerEntry(): string {
  const here = import.meta.url;
  if (here.endsWith("/ingest-workers.ts")) return new URL("./ingest-worker.ts", here).href;
  return new URL("./daemon/ingest-worker.js", here).href;
}

function spawn(index: number): Slot | null {
  let w: Worker;
  try {
    w = new Worker(workerEntry());
  } catch (err) {
    unavailable = true;
    log.debug(`ingest workers unavailable, ingesting in-thread: ${(err as Error).message}`);
    return null;
  }
  let replied = false;
  w.onmessage = (event: MessageEvent<IngestWorkerReply>) => {
    replied = true;
    onReply(index, event.data);
  };
  w.onerror = (event: ErrorEvent) => {
    if (!replied) {
      unavailable = true; // it could not even load
      log.debug(`ingest workers unavailable, ingesting in-thread: ${event.message}`);
    }
    fail(new Error(`ingest worker failed: ${event.message}`), true);
  };
  const creditBuffer = new SharedArrayBuffer(4);
  return { worker: w, reads: 0, credit: new Int32Array(creditBuffer), creditBuffer, joined: false };
}

function send(slot: number, msg: IngestWorkerRequest): void {
  slots[slot]!.worker.postMessage(msg);
}

function fail(err: Error, killWorkers: boolean): void {
  const run = current;
  current = null;
  if (killWorkers) stopWorkers();
  else if (run) for (let i = 0; i < slots.length; i++) send(i, { kind: "end", job: run.id });
  run?.settle(err);
  scheduleIdleStop();
}

function scheduleIdleStop(): void {
  for (const s of slots) s.worker.unref(); // idle: never what keeps the process alive
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(stopWorkers, IDLE_STOP_MS);
  idleTimer.unref?.();
}

/**
 * Read `job`'s file in `slices` (consecutive, covering the file) on the ingest workers; `onBatch`
 * (this thread) receives the rows in file order. Resolves undefined when no worker can be used
 * (another file is in progress, or workers are unavailable); rejects when a worker failed part way
 * (some batches may have been taken already).
 */
export function prepareInWorkers(
  job: RowsJob,
  slices: readonly SliceRange[],
  onBatch: (batch: PackedBatch) => void,
  workers?: number,
): Promise<FileRowsSummary | undefined> {
  const n = unavailable ? 0 : (workers ?? ingestParallelism());
  if (current || n === 0 || slices.length === 0) return Promise.resolve(undefined);
  while (slots.length > n) slots.pop()!.worker.terminate();
  while (slots.length < n) {
    const slot = spawn(slots.length);
    if (!slot) return Promise.resolve(undefined);
    slots.push(slot);
  }
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  for (const s of slots) {
    s.worker.ref(); // a file in flight keeps the process alive until its rows are in
    s.reads = 0;
    s.joined = false;
    Atomics.store(s.credit, 0, 0);
  }
  return new Promise<FileRowsSummary | undefined>((resolvePromise, reject) => {
    current = {
      id: nextJob++,
      job,
      runs: slices.map((range) => ({ range, status: "unassigned", worker: -1, buffer: [] })),
      head: 0,
      tools: new Map(),
      totals: { lines: 0, malformed: 0 },
      onBatch,
      settle: (r) => (r instanceof Error ? reject(r) : resolvePromise(r)),
    };
    log.debug(`ingest workers: ${job.path} in ${slices.length} slice(s) on ${slots.length} worker(s)`);
    // slice 0 is read exactly, the others speculatively as workers come free
    startRead(current, 0, 0, false);
    advance(current);
  });
}

/** Start reading a slice on a worker with a fresh normalizer. */
function startRead(file: FileRun, index: number, slot: number, speculative: boolean): void {
  const run = file.runs[index]!;
  run.worker = slot;
  run.status = speculative ? "speculating" : "reading";
  const s = slots[slot]!;
  s.reads++;
  s.joined = true;
  send(slot, {
    kind: "slice",
    job: file.id,
    spec: file.job,
    slice: run.range,
    credit: s.creditBuffer,
    maxAhead: MAX_AHEAD,
  });
}

function onReply(slot: number, msg: IngestWorkerReply): void {
  const file = current;
  if (!file || msg.job !== file.id) return;
  try {
    if (msg.kind === "rows") {
      const s = slots[slot]!;
      try {
        const run = file.runs[msg.index]!;
        if (run.status === "speculating") run.buffer.push(msg.batch);
        else file.onBatch(msg.batch); // the head slice: every row before it is in
      } finally {
        Atomics.sub(s.credit, 0, 1);
        Atomics.notify(s.credit, 0);
      }
    } else if (msg.kind === "sliceEnd") {
      slots[slot]!.reads--;
      const run = file.runs[msg.index]!;
      run.summary = msg.summary;
      run.state = msg.state;
      run.assumptions = msg.assumptions;
      run.flushRows = msg.flushRows;
      if (run.status === "speculating") run.status = "speculated";
      else if (run.status === "reading") becameExact(file, run);
      assignSpeculative(file); // first: the worker gets its next slice before this thread inserts
      advance(file);
    } else if (msg.kind === "flushed") {
      file.runs[msg.index]!.status = "done";
      const next = file.runs[msg.index + 1];
      if (!next) {
        finishFile(file);
        return;
      }
      confirm(file, next); // it was checked before the flush was asked for
      advance(file);
    } else if (msg.kind === "error") {
      fail(new Error(msg.message), true);
    }
  } catch (err) {
    fail(err instanceof Error ? err : new Error(String(err)), true);
  }
}

function becameExact(file: FileRun, run: SliceRun): void {
  run.status = "read";
  file.totals.lines += run.summary?.lines ?? 0;
  file.totals.malformed += run.summary?.malformed ?? 0;
  for (const [id, info] of run.assumptions?.toolUses ?? []) file.tools.set(id, info);
  const before = run.range.index > 0 ? file.runs[run.range.index - 1]!.exact : undefined;
  run.exact = run.state && before ? stateAfter(before, run.state) : (run.state ?? null);
}

/** What the normalizer holding `run` may lack of the exact state (and the tool_uses `need`s). */
function seedFor(file: FileRun, run: SliceRun, need: readonly string[]): SliceSeed | null {
  if (!run.exact) return null;
  const toolUses: Array<[string, ToolUseInfo]> = [];
  for (const id of need) {
    const info = file.tools.get(id);
    if (info) toolUses.push([id, info]);
  }
  return { cwd: run.exact.cwd, lastTimestamp: run.exact.lastTimestamp, toolUses };
}

/** Take every decision that can be taken now, then give free workers slices to read ahead. */
function advance(file: FileRun): void {
  for (;;) {
    const head = file.runs[file.head]!;
    if (head.status !== "read") break;
    const next = file.runs[file.head + 1];
    if (!next) {
      head.status = "flushing";
      send(head.worker, { kind: "flush", job: file.id, index: file.head, seed: seedFor(file, head, []) });
      break;
    }
    if (next.status === "speculating") break; // wait for it to end
    const follows =
      next.status === "speculated" &&
      head.exact &&
      next.assumptions &&
      sliceFollows(head.exact, next.assumptions, file.tools);
    if (!follows) {
      rereadAfter(file, head, next);
      break;
    }
    if (!head.flushRows) {
      head.status = "flushing"; // the confirmation goes on when its rows are in ("flushed")
      send(head.worker, { kind: "flush", job: file.id, index: file.head, seed: seedFor(file, head, []) });
      break;
    }
    // the head's held-back rows are known already: no round trip to its worker
    file.onBatch(head.flushRows);
    head.status = "done";
    send(head.worker, { kind: "drop", job: file.id, index: file.head });
    confirm(file, next);
  }
  assignSpeculative(file);
}

/** A speculative slice holds: its rows follow those of the slice before it, and it becomes the head. */
function confirm(file: FileRun, next: SliceRun): void {
  for (const batch of next.buffer) file.onBatch(batch);
  next.buffer = [];
  file.head = next.range.index;
  becameExact(file, next);
}

/** Drop a speculative read (if any) and read the slice on with the head slice's normalizer. */
function rereadAfter(file: FileRun, head: SliceRun, next: SliceRun): void {
  if (next.status === "speculated") send(next.worker, { kind: "drop", job: file.id, index: next.range.index });
  next.buffer = [];
  head.status = "done";
  next.worker = head.worker;
  next.status = "reading";
  file.head = next.range.index;
  slots[head.worker]!.reads++;
  // a speculative read of the slice named the tool_uses it looks up from before it; without one, all
  const seed = seedFor(file, head, next.assumptions?.missedToolIds ?? [...file.tools.keys()]);
  next.assumptions = undefined;
  send(head.worker, { kind: "continue", job: file.id, held: head.range.index, slice: next.range, seed });
}

function assignSpeculative(file: FileRun): void {
  for (let depth = 1; depth <= READS_PER_WORKER; depth++) {
    for (let slot = 0; slot < slots.length; slot++) {
      if (slots[slot]!.reads >= depth) continue;
      let waiting = 0;
      let target = -1;
      for (let i = file.head + 1; i < file.runs.length; i++) {
        const st = file.runs[i]!.status;
        if (st === "speculating" || st === "speculated") waiting++;
        else if (st === "unassigned") {
          target = i;
          break;
        }
      }
      if (target < 0 || waiting >= MAX_SPECULATIVE) return;
      startRead(file, target, slot, true);
    }
  }
}

function finishFile(file: FileRun): void {
  current = null;
  for (let i = 0; i < slots.length; i++) if (slots[i]!.joined) send(i, { kind: "end", job: file.id });
  scheduleIdleStop();
  file.settle(file.totals);
}
