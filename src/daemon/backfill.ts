/**
 * One-shot reading of whole transcript files (backfill, `sqrl ingest <files>`, the rescan after a new
 * project registration). Reads from byte 0 with a fresh normalizer, flushes at the end, ingests in
 * big batches; never touches the daemon's persisted offsets — dedup makes re-reading free of effect.
 *
 * Big files go one of two ways, the same rows in the same order as when everything runs here:
 * - with cores to spare, on the ingest workers, which build the rows (parse, normalize, redact, hash,
 *   serialize) while this thread inserts them (ingest-workers.ts);
 * - on two cores, with one free, through the insert pipe: this thread builds the rows while the insert
 *   worker writes them to SQLite (insert-pipe.ts).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { basename } from "node:path";
import { PACKED_EVENT_WIDTH } from "../sql/events.ts";
import {
  prepareFileRows,
  ROW_BATCH,
  SliceReader,
  type FileRowsSummary,
  type PackedBatch,
  type RowBatch,
  type RowsJob,
} from "./file-rows.ts";
import {
  emptyIngestResult,
  insertPacked,
  insertRouted,
  lookupStoredToolUse,
  mergeIngestResult,
  mergeUnmatched,
  ProjectWriteError,
  type IngestContext,
  type IngestResult,
} from "./ingest.ts";
import { ingestParallelism, prepareInWorkers, slotsInUse } from "./ingest-workers.ts";
import { InsertPipe, insertWorkerEnv, PIPE_BATCH_ROWS, PIPE_MIN_BYTES, PIPE_SLICE_BYTES } from "./insert-pipe.ts";
import { lineSlices, planSlices, type SlicePlanOptions } from "./slice-plan.ts";
import { decompressZstd, isZstd, type TailSource } from "./tail.ts";
import type { NormalizerDeps } from "./watchers/transcript-source.ts";

export { TRANSCRIPT_SOURCES } from "./file-rows.ts";

/** Events are inserted once this many are waiting (one transaction per project per batch). */
export const INGEST_BATCH = 5000;
/** Files from this size on are read by the ingest workers (below it, the pipeline costs more than it saves). */
export const WORKER_MIN_BYTES = 1024 * 1024;

export interface FileIngestResult extends IngestResult {
  path: string;
  source: TailSource;
  lines: number;
  malformed: number;
  events: number;
  /** Ingest workers that read the file (0: read in this thread). */
  workers: number;
  /** The insert worker wrote the file's rows while this thread built them (insert-pipe.ts). */
  insertWorker: boolean;
}

export interface FileIngestOptions {
  /**
   * Ingest workers to read the file with: 0 reads it in this thread; default: line files of
   * WORKER_MIN_BYTES and more on as many as `ingestParallelism()` says (none on a busy machine).
   */
  workers?: number;
  /** How the file is cut into slices for the workers. */
  slices?: SlicePlanOptions;
  /**
   * The insert pipe (insert-pipe.ts): true sends the rows to the insert worker whatever the load,
   * false never; default: line files of PIPE_MIN_BYTES and more not read by ingest workers, when
   * `insertPipeAllowed()` and the other processes leave about a core free (none when `workers` is given).
   */
  insertWorker?: boolean;
  /** How the insert pipe reads and hands on (default: PIPE_SLICE_BYTES, PIPE_BATCH_ROWS). */
  pipe?: { sliceBytes?: number; batchRows?: number };
}

export function normalizerDeps(ctx: IngestContext): NormalizerDeps {
  return {
    lookupToolUse: (cwd, session, id) => lookupStoredToolUse(ctx, cwd, session, id),
    projects: () => ctx.projects,
  };
}

/** Guess the format of a file given explicitly: Codex (`session_meta` / `{type, payload}`), Gemini (JSON document or metadata+`$set` JSONL), Qwen Code (`message.parts`), else Claude Code. */
export function sniffSource(path: string): { source: TailSource; document: boolean } {
  if (!existsSync(path)) return { source: "claude", document: false };
  const fd = openSync(path, "r");
  const buf = Buffer.alloc(64 * 1024);
  const n = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  if (isZstd(buf.subarray(0, n))) {
    // A compressed line log (Codex writes them) is read whole, like a document; its lines say the format.
    const text = decompressZstd(readFileSync(path));
    const inner = text
      ? sniffHead(text.toString("utf8", 0, Math.min(text.length, 64 * 1024)), path)
      : { source: "codex" as const, document: false };
    return { source: inner.document ? "codex" : inner.source, document: true };
  }
  return sniffHead(buf.toString("utf8", 0, n), path);
}

function sniffHead(head: string, path: string): { source: TailSource; document: boolean } {
  const firstLine = head.split("\n", 1)[0] ?? "";
  let first: Record<string, unknown> | undefined;
  try {
    first = JSON.parse(firstLine) as Record<string, unknown>;
  } catch {
    first = undefined;
  }
  if (!first) {
    // Not a line of JSON: a pretty-printed document (Gemini's rewritten format).
    if (/^\s*\{/.test(head) && /"messages"\s*:/.test(head)) return { source: "gemini", document: true };
    return { source: basename(path).startsWith("rollout-") ? "codex" : "claude", document: false };
  }
  if (Array.isArray(first.messages) && typeof first.sessionId === "string") return { source: "gemini", document: true };
  if (first.type === "session_meta" || ("payload" in first && typeof first.type === "string" && "timestamp" in first))
    return { source: "codex", document: false };
  if (typeof first.sessionId === "string" && "projectHash" in first && !("type" in first))
    return { source: "gemini", document: false };
  // Copilot CLI: `{type: "session.start", data: {producer: "copilot-agent", …}}` first.
  if (first.type === "session.start" && typeof first.data === "object") return { source: "copilot", document: false };
  // Qwen Code: Claude-like records whose message holds Gemini-style `parts`.
  const message = first.message as Record<string, unknown> | undefined;
  if (typeof first.uuid === "string" && Array.isArray(message?.parts)) return { source: "qwen", document: false };
  return { source: "claude", document: false };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function emptyFileResult(path: string, source: TailSource): FileIngestResult {
  return {
    ...emptyIngestResult(),
    path,
    source,
    lines: 0,
    malformed: 0,
    events: 0,
    workers: 0,
    insertWorker: false,
  };
}

/** In-thread insert of each batch of rows as it is built. */
function insertInto(into: FileIngestResult, ctx: IngestContext): (batch: RowBatch) => void {
  return (batch) => {
    into.events += batch.events;
    mergeIngestResult(
      into,
      insertRouted(
        { byProject: new Map(batch.byProject), skipped: batch.skipped, unmatched: batch.unmatched },
        ctx.pool,
      ),
    );
  };
}

/**
 * A worker failed part way: read the whole file again in this thread. What was committed before
 * (`done`) comes back as duplicates: counted as added, as it was added by this ingest.
 */
function redoInThread(job: RowsJob, ctx: IngestContext, done: IngestResult): FileIngestResult {
  const again = emptyFileResult(job.path, job.source);
  const read = prepareFileRows(job, normalizerDeps(ctx), insertInto(again, ctx));
  again.duplicates -= done.added;
  for (const [root, n] of done.addedByProject)
    again.addedByProject.set(root, (again.addedByProject.get(root) ?? 0) + n);
  return { ...again, added: again.added + done.added, lines: read.lines, malformed: read.malformed };
}

/**
 * Build the rows here and insert them through the insert pipe, reading the file in slices (the
 * pipe's answers are taken between them). Undefined when the pipe cannot be used: a normalizer that
 * releases events at the end of each read (Gemini's lines), or the pipe unavailable or in use.
 */
async function readThroughPipe(
  job: RowsJob,
  ctx: IngestContext,
  size: number,
  result: FileIngestResult,
  opts: FileIngestOptions,
): Promise<FileRowsSummary | undefined> {
  const reader = new SliceReader(job, normalizerDeps(ctx), 0, opts.pipe?.batchRows ?? PIPE_BATCH_ROWS);
  if (reader.normalizer.afterBatch) return undefined;
  const pipe = InsertPipe.open(ctx, job.path, opts.insertWorker === true);
  if (!pipe) return undefined;
  const sink = (batch: RowBatch) => {
    result.events += batch.events;
    pipe.post(batch);
  };
  const summary: FileRowsSummary = { lines: 0, malformed: 0 };
  try {
    for (const slice of lineSlices(job.path, size, opts.pipe?.sliceBytes ?? PIPE_SLICE_BYTES)) {
      const read = reader.read(slice.until ?? undefined, slice.until === null, sink);
      summary.lines += read.lines;
      summary.malformed += read.malformed;
      await pipe.room();
    }
    reader.flush(sink);
    mergeIngestResult(result, await pipe.finish());
  } catch (err) {
    const committed = await pipe.settle();
    if (!(err instanceof ProjectWriteError)) mergeIngestResult(result, committed);
    throw err;
  } finally {
    result.insertWorker = pipe.usedWorker;
  }
  return summary;
}

/** Read one file from the start and ingest all of it. */
export async function ingestFileOnce(
  path: string,
  source: TailSource,
  document: boolean,
  ctx: IngestContext,
  opts: FileIngestOptions = {},
): Promise<FileIngestResult> {
  const job: RowsJob = {
    path,
    source,
    document,
    projects: [...ctx.projects],
    only: ctx.only ? [...ctx.only] : null,
    userId: ctx.userId,
  };
  const result = emptyFileResult(path, source);
  // a worker hands over a slice's rows at its end: gather them into transactions of about ROW_BATCH
  const gathered = new Map<string, (string | null)[]>();
  let gatheredRows = 0;
  const insertGathered = () => {
    mergeIngestResult(result, insertPacked([...gathered], 0, ctx.userId, ctx.pool));
    gathered.clear();
    gatheredRows = 0;
  };
  const insertPackedBatch = (batch: PackedBatch) => {
    result.events += batch.events;
    result.skipped += batch.skipped;
    if (batch.unmatched) mergeUnmatched((result.unmatched ??= {}), batch.unmatched);
    for (const [root, packed] of batch.byProject) {
      const into = gathered.get(root);
      if (into) for (const v of packed) into.push(v);
      else gathered.set(root, packed);
      gatheredRows += packed.length / PACKED_EVENT_WIDTH;
    }
    if (gatheredRows >= ROW_BATCH) insertGathered();
  };
  const size = sizeOf(path);
  const workers = document ? 0 : (opts.workers ?? (size >= WORKER_MIN_BYTES ? ingestParallelism() : 0));
  let summary: FileRowsSummary | undefined;
  if (workers > 0) {
    try {
      summary = await prepareInWorkers(job, planSlices(path, size, source, opts.slices), insertPackedBatch, workers);
      insertGathered();
    } catch {
      // The worker died part way: do the whole file here; what it inserted comes back as duplicates.
      insertGathered();
      return redoInThread(job, ctx, result);
    }
  }
  const pipe =
    !summary &&
    !document &&
    (opts.insertWorker ?? (opts.workers === undefined && (size >= PIPE_MIN_BYTES || insertWorkerEnv() === true)));
  if (summary) result.workers = slotsInUse();
  else if (pipe) {
    try {
      summary = await readThroughPipe(job, ctx, size, result, opts);
    } catch (err) {
      if (err instanceof ProjectWriteError) throw err; // as in this thread: the caller retries later
      // Anything else (the file replaced while read…): do the whole file here, dedup absorbs the rest.
      return redoInThread(job, ctx, result);
    }
  }
  summary ??= prepareFileRows(job, normalizerDeps(ctx), insertInto(result, ctx));
  result.lines = summary.lines;
  result.malformed = summary.malformed;
  await Bun.sleep(0); // let a daemon's API breathe between files
  return result;
}
