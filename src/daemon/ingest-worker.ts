/**
 * Ingest worker (a Bun `Worker`): reads slices of one file at a time into rows (`SliceReader`) and
 * posts them batch by batch; the thread that started it inserts them (ingest-workers.ts). Opens
 * data.db only read-only, to find a stored tool_use; never writes.
 *
 * Flow control: `credit[0]` counts batches posted but not yet taken; past `maxAhead` the worker
 * waits (Atomics) so a slow disk never piles rows up in memory.
 */
import type { Database } from "bun:sqlite";
import { resolve } from "node:path";
import { projectForPath } from "../shared/projects.ts";
import { openProjectDb } from "../sql/open.ts";
import { packBatch, SliceReader, type RowBatch, type RowsJob } from "./file-rows.ts";
import { lookupToolUseIn } from "./ingest.ts";
import type { IngestWorkerReply, IngestWorkerRequest } from "./ingest-worker-protocol.ts";
import { isSliceAware, type SliceSeed } from "./normalize/slice.ts";
import type { NormalizerDeps } from "./watchers/transcript-source.ts";

declare const self: Worker;

interface JobState {
  id: number;
  spec: RowsJob;
  deps: NormalizerDeps;
  credit: Int32Array;
  maxAhead: number;
  readers: Map<number, SliceReader>;
  dbs: Map<string, Database>;
}

let current: JobState | null = null;

function post(msg: IngestWorkerReply): void {
  self.postMessage(msg);
}

function endJob(): void {
  if (!current) return;
  for (const db of current.dbs.values()) db.close();
  current = null;
}

function startJob(id: number, spec: RowsJob, credit: SharedArrayBuffer, maxAhead: number): JobState {
  endJob();
  const dbs = new Map<string, Database>();
  const readonlyDb = (root: string): Database | undefined => {
    let db = dbs.get(root);
    if (!db) {
      try {
        db = openProjectDb(root, { readonly: true });
      } catch {
        return undefined; // not created yet: nothing stored to find
      }
      dbs.set(root, db);
    }
    return db;
  };
  const deps: NormalizerDeps = {
    projects: () => spec.projects,
    lookupToolUse: (cwd, sessionId, toolUseId) => {
      const root = cwd ? projectForPath(resolve(cwd), spec.projects) : undefined;
      const db = root ? readonlyDb(root) : undefined;
      return db && root ? lookupToolUseIn(db, root, sessionId, toolUseId) : undefined;
    },
  };
  current = { id, spec, deps, credit: new Int32Array(credit), maxAhead, readers: new Map(), dbs };
  return current;
}

function sinkFor(job: JobState, index: number): (batch: RowBatch) => void {
  return (batch) => {
    for (;;) {
      const ahead = Atomics.load(job.credit, 0);
      if (ahead < job.maxAhead) break;
      Atomics.wait(job.credit, 0, ahead, 1000);
    }
    Atomics.add(job.credit, 0, 1);
    post({ kind: "rows", job: job.id, index, batch: packBatch(batch) });
  };
}

function readSlice(job: JobState, reader: SliceReader, index: number, until: number | null): void {
  const summary = reader.read(until ?? undefined, until === null, sinkFor(job, index));
  job.readers.set(index, reader);
  const n = reader.normalizer;
  const aware = isSliceAware(n);
  const preview = until === null ? null : reader.flushPreview(); // the last slice is flushed for real
  post({
    kind: "sliceEnd",
    job: job.id,
    index,
    summary,
    state: aware ? n.sliceState() : null,
    assumptions: aware ? n.sliceAssumptions() : null,
    flushRows: preview ? packBatch(preview) : null,
  });
}

function seed(reader: SliceReader, with_: SliceSeed | null): void {
  const n = reader.normalizer;
  if (with_ && isSliceAware(n)) n.seed(with_);
}

function handle(msg: IngestWorkerRequest): void {
  if (msg.kind === "slice") {
    const job = current && current.id === msg.job ? current : startJob(msg.job, msg.spec, msg.credit, msg.maxAhead);
    readSlice(job, new SliceReader(job.spec, job.deps, msg.slice.from), msg.slice.index, msg.slice.until);
    return;
  }
  const job = current;
  if (!job || job.id !== msg.job) return;
  if (msg.kind === "continue") {
    const reader = job.readers.get(msg.held);
    if (!reader) throw new Error(`no reader kept for slice ${msg.held}`);
    job.readers.delete(msg.held);
    seed(reader, msg.seed);
    readSlice(job, reader, msg.slice.index, msg.slice.until);
  } else if (msg.kind === "flush") {
    const reader = job.readers.get(msg.index);
    job.readers.delete(msg.index);
    if (reader) seed(reader, msg.seed);
    reader?.flush(sinkFor(job, msg.index));
    post({ kind: "flushed", job: job.id, index: msg.index });
  } else if (msg.kind === "drop") job.readers.delete(msg.index);
  else if (msg.kind === "end") endJob();
}

self.onmessage = (event: MessageEvent<IngestWorkerRequest>) => {
  const msg = event.data;
  try {
    handle(msg);
  } catch (err) {
    post({ kind: "error", job: msg.job, message: err instanceof Error ? err.message : String(err) });
  }
};
