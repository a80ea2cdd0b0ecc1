/** Messages between the ingest workers and the thread that inserts their rows (see ingest-workers.ts). */
import type { FileRowsSummary, PackedBatch, RowsJob } from "./file-rows.ts";
import type { SliceAssumptions, SliceSeed, SliceState } from "./normalize/slice.ts";

/** A byte range of the file: `from` and `until` are line starts (`until` null: to the end). */
export interface SliceRange {
  index: number;
  from: number;
  until: number | null;
}

export type IngestWorkerRequest =
  /** Read a slice with a fresh normalizer and keep that normalizer under the slice's index. */
  | { kind: "slice"; job: number; spec: RowsJob; slice: SliceRange; credit: SharedArrayBuffer; maxAhead: number }
  /** Read `slice` on with the normalizer kept under `held` (now kept under `slice.index`), seeded first. */
  | { kind: "continue"; job: number; held: number; slice: SliceRange; seed: SliceSeed | null }
  /** Release what the normalizer of `index` still holds back (seeded first), then forget it. */
  | { kind: "flush"; job: number; index: number; seed: SliceSeed | null }
  /** Forget the normalizer of `index` (its slice is read again elsewhere). */
  | { kind: "drop"; job: number; index: number }
  /** The file is done: forget everything of the job. */
  | { kind: "end"; job: number };

export type IngestWorkerReply =
  | { kind: "rows"; job: number; index: number; batch: PackedBatch }
  | {
      kind: "sliceEnd";
      job: number;
      index: number;
      summary: FileRowsSummary;
      state: SliceState | null;
      assumptions: SliceAssumptions | null;
      /** What flushing this slice's normalizer would hand on now (null: ask with "flush"). */
      flushRows: PackedBatch | null;
    }
  | { kind: "flushed"; job: number; index: number }
  | { kind: "error"; job: number; message: string };
