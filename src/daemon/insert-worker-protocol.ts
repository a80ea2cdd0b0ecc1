/**
 * Messages between the insert worker (insert-worker.ts) and the thread that builds the rows
 * (insert-pipe.ts). Rows go as one flat array of strings: a header, then `packEvents`' rows (an
 * array of strings crosses `postMessage` about three times faster than the same array in an object).
 */

/** Header of a rows message: tag, job, batch number, project root, user id; the packed rows follow. */
export const ROWS_TAG = "rows";
export const ROWS_HEADER = 5;

export function rowsHeader(job: number, batch: number, root: string, userId: string): string[] {
  return [ROWS_TAG, String(job), String(batch), root, userId];
}

export interface RowsHead {
  job: number;
  /** Rows of one batch of the file (several projects: several messages) share it. */
  batch: number;
  root: string;
  userId: string;
}

export function readRowsHeader(msg: readonly (string | null)[]): RowsHead | null {
  if (msg.length < ROWS_HEADER || msg[0] !== ROWS_TAG) return null;
  return { job: Number(msg[1]), batch: Number(msg[2]), root: msg[3] ?? "", userId: msg[4] ?? "" };
}

export type InsertWorkerRequest =
  | (string | null)[]
  /** The file is done: close its connections (the last one to close checkpoints the WAL). */
  | { kind: "end"; job: number };

export type InsertWorkerReply =
  /** One rows message is committed (or dropped after a failure, `error` on the one that failed). */
  | {
      kind: "ack";
      job: number;
      batch: number;
      root: string;
      added: number;
      duplicates: number;
      dropped?: boolean;
      error?: { message: string; code?: string };
    }
  | { kind: "ended"; job: number };
