/**
 * Insert worker (a Bun `Worker`): the SQLite half of a big file's ingest, on its own connections to
 * the projects' data.db, while the thread that started it builds the next rows (insert-pipe.ts).
 * Rows are inserted in the order they come, one transaction per message; after a failure the rest of
 * that file's rows are dropped (as the in-thread path stops at its first failed batch), every message
 * still answered so the sender knows where it stands.
 */
import type { Database } from "bun:sqlite";
import { insertPackedEvents } from "../sql/events.ts";
import { openProjectDb } from "../sql/open.ts";
import {
  readRowsHeader,
  ROWS_HEADER,
  type InsertWorkerReply,
  type InsertWorkerRequest,
} from "./insert-worker-protocol.ts";

declare const self: Worker;

/** Open connections of the current file, per project root. */
const dbs = new Map<string, Database>();
/** The job and batch that failed: later batches of that job are dropped. */
let failed: { job: number; batch: number } | null = null;

function post(msg: InsertWorkerReply): void {
  self.postMessage(msg);
}

function db(root: string): Database {
  let d = dbs.get(root);
  if (!d) {
    d = openProjectDb(root);
    d.exec("PRAGMA cache_size = -32768"); // as ProjectDbPool: big batches keep the indexes in memory
    d.exec("PRAGMA wal_autocheckpoint = 8192");
    dbs.set(root, d);
  }
  return d;
}

function closeAll(): void {
  for (const d of dbs.values()) d.close();
  dbs.clear();
}

function insertRows(msg: (string | null)[]): void {
  const head = readRowsHeader(msg);
  if (!head) return;
  const { job, batch, root } = head;
  if (failed && failed.job === job && batch > failed.batch) {
    post({ kind: "ack", job, batch, root, added: 0, duplicates: 0, dropped: true });
    return;
  }
  try {
    const r = insertPackedEvents(db(root), root, head.userId, msg, ROWS_HEADER);
    post({ kind: "ack", job, batch, root, added: r.added, duplicates: r.duplicates });
  } catch (err) {
    failed = { job, batch };
    const e = err as { message?: string; code?: unknown };
    const code = typeof e.code === "string" ? e.code : undefined;
    post({
      kind: "ack",
      job,
      batch,
      root,
      added: 0,
      duplicates: 0,
      dropped: true,
      error: { message: String(e.message ?? err), ...(code ? { code } : {}) },
    });
  }
}

self.onmessage = (event: MessageEvent<InsertWorkerRequest>) => {
  const msg = event.data;
  if (Array.isArray(msg)) insertRows(msg);
  else if (msg.kind === "end") {
    try {
      closeAll();
    } catch {
      // every row is committed already; a failed checkpoint is done at the next close
    }
    if (failed?.job === msg.job) failed = null;
    post({ kind: "ended", job: msg.job });
  }
};
