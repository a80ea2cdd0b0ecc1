/**
 * One transcript file → rows ready to insert: the CPU-heavy half of an ingest (read, parse,
 * normalize, route to projects, cut, redact, hash, serialize). Pure of database writes, so it runs
 * either in the caller's thread or in an ingest worker (`ingest-worker.ts`) while the caller's
 * thread inserts the previous batch. Both ways give the same rows in the same order.
 */
import type { EventDTO, NormalizedEvent } from "../shared/event.ts";
import { packEvents } from "../sql/events.ts";
import { mergeUnmatched, routeEvents } from "./ingest.ts";
import { isSliceAware } from "./normalize/slice.ts";
import type { LineNormalizer } from "./normalize/types.ts";
import { newTailFile, readTail, type TailFile, type TailSource } from "./tail.ts";
import { claudeSource } from "./watchers/claude.ts";
import { codexSource } from "./watchers/codex.ts";
import { geminiSource } from "./watchers/gemini.ts";
import { copilotSource } from "./watchers/copilot.ts";
import { qwenSource } from "./watchers/qwen.ts";
import type { NormalizerDeps, TranscriptSource } from "./watchers/transcript-source.ts";

export const TRANSCRIPT_SOURCES: Record<TailSource, TranscriptSource> = {
  claude: claudeSource,
  codex: codexSource,
  gemini: geminiSource,
  qwen: qwenSource,
  copilot: copilotSource,
};

/** What to read and where its events may go. Plain data: it crosses to a worker as is. */
export interface RowsJob {
  path: string;
  source: TailSource;
  document: boolean;
  /** Registered project roots. */
  projects: readonly string[];
  /** When set, only these roots receive events. */
  only: readonly string[] | null;
  userId: string;
}

/** Rows of consecutive events, per project in event order. */
export interface RowBatch {
  byProject: Array<[root: string, rows: EventDTO[]]>;
  events: number;
  skipped: number;
  /** Skipped events per working directory no registered project contains. */
  unmatched?: Record<string, number>;
}

/** A RowBatch as it crosses from a worker: each project's rows packed by `packEvents`. */
export interface PackedBatch {
  byProject: Array<[root: string, packed: (string | null)[]]>;
  events: number;
  skipped: number;
  unmatched?: Record<string, number>;
}

export function packBatch(batch: RowBatch): PackedBatch {
  return {
    byProject: batch.byProject.map(([root, rows]) => [root, packEvents(rows)]),
    events: batch.events,
    skipped: batch.skipped,
    ...(batch.unmatched ? { unmatched: batch.unmatched } : {}),
  };
}

export interface FileRowsSummary {
  lines: number;
  malformed: number;
}

/** Rows are handed on in batches of about this many (one insert transaction per project each). */
export const ROW_BATCH = 5000;

/** Read the whole file from byte 0 with a fresh normalizer; `sink` receives the rows batch by batch. */
export function prepareFileRows(
  job: RowsJob,
  deps: NormalizerDeps,
  sink: (batch: RowBatch) => void,
  batchRows = ROW_BATCH,
): FileRowsSummary {
  const reader = new SliceReader(job, deps, 0, batchRows);
  const summary = reader.read(undefined, true, sink);
  reader.flush(sink);
  return summary;
}

/**
 * Reads a file slice by slice with one normalizer: from `from` to a line start, then (if asked)
 * on through following slices; `flush` releases what the normalizer still holds back. Rows are
 * handed on in batches of about ROW_BATCH (big transactions insert faster) and at every slice end.
 */
export class SliceReader {
  private readonly file: TailFile;
  private readonly renew: () => LineNormalizer;
  private readonly only: ReadonlySet<string> | undefined;
  private pending = new Map<string, EventDTO[]>();
  private pendingRows = 0;
  private pendingEvents = 0;
  private pendingSkipped = 0;
  private pendingUnmatched: Record<string, number> = {};

  constructor(
    private readonly job: RowsJob,
    deps: NormalizerDeps,
    from: number,
    private readonly batchRows = ROW_BATCH,
  ) {
    const src = TRANSCRIPT_SOURCES[job.source];
    this.renew = () => src.createNormalizer(job.path, deps);
    this.only = job.only ? new Set(job.only) : undefined;
    this.file = newTailFile(job.path, job.source, job.document, this.renew(), {
      offset: from,
      size: 0,
      ino: null,
      head_hash: null,
      malformed: 0,
    });
  }

  /** Read on up to `until` (a line start; undefined: end of file). `last`: the file ends there. */
  read(until: number | undefined, last: boolean, sink: (batch: RowBatch) => void): FileRowsSummary {
    const started = this.file.readOffset;
    const read = readTail(this.file, {
      final: last,
      hold: true,
      until,
      renew: this.renew,
      sink: (events) => this.emit(events, sink),
    });
    if (read.reset && started > 0) throw new Error(`${this.job.path} shrank or was replaced while it was read`);
    this.drain(sink);
    return { lines: read.lines, malformed: read.malformed };
  }

  flush(sink: (batch: RowBatch) => void): void {
    const events = this.file.normalizer.flush();
    if (events.length > 0) this.emit(events, sink);
    this.drain(sink);
  }

  /** The rows `flush` would hand on now, computed without flushing; null when unknown (see slice.ts). */
  flushPreview(): RowBatch | null {
    const n = this.file.normalizer;
    const events = isSliceAware(n) ? n.flushPreview() : null;
    if (events === null) return null;
    const routed = routeEvents(events, this.job.projects, this.job.userId, this.only);
    return {
      byProject: [...routed.byProject],
      events: events.length,
      skipped: routed.skipped,
      unmatched: routed.unmatched,
    };
  }

  get normalizer(): LineNormalizer {
    return this.file.normalizer;
  }

  private emit(events: NormalizedEvent[], sink: (batch: RowBatch) => void): void {
    const routed = routeEvents(events, this.job.projects, this.job.userId, this.only);
    for (const [root, rows] of routed.byProject) {
      const into = this.pending.get(root);
      if (into) for (const r of rows) into.push(r);
      else this.pending.set(root, rows);
      this.pendingRows += rows.length;
    }
    this.pendingEvents += events.length;
    this.pendingSkipped += routed.skipped;
    mergeUnmatched(this.pendingUnmatched, routed.unmatched);
    if (this.pendingRows >= this.batchRows) this.drain(sink);
  }

  private drain(sink: (batch: RowBatch) => void): void {
    if (this.pendingEvents === 0) return;
    const batch: RowBatch = {
      byProject: [...this.pending],
      events: this.pendingEvents,
      skipped: this.pendingSkipped,
      unmatched: this.pendingUnmatched,
    };
    this.pendingUnmatched = {};
    this.pending = new Map();
    this.pendingRows = 0;
    this.pendingEvents = 0;
    this.pendingSkipped = 0;
    sink(batch);
  }
}
