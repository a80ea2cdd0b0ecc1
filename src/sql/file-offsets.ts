/**
 * Queries of state.db `file_offsets`: the read position of every watched transcript file.
 */
import type { Database, Statement } from "bun:sqlite";

/** Read position of one watched transcript file (state.db `file_offsets`). */
export interface FileOffset {
  path: string;
  source: string;
  /** Bytes consumed (complete lines whose events are committed). */
  offset: number;
  size: number;
  ino: number | null;
  head_hash: string | null;
  malformed: number;
  /** 1: `offset` is inside an over-long line, skipped up to its next newline (state v2). */
  skipping?: number;
  updated_at: string;
}

export function getFileOffset(db: Database, path: string): FileOffset | undefined {
  return (db.query(`SELECT * FROM file_offsets WHERE path = ?`).get(path) as FileOffset | null) ?? undefined;
}

export function listFileOffsets(db: Database, source?: string): FileOffset[] {
  if (source === undefined) return db.query(`SELECT * FROM file_offsets ORDER BY path`).all() as FileOffset[];
  return db.query(`SELECT * FROM file_offsets WHERE source = ? ORDER BY path`).all(source) as FileOffset[];
}

const cache = new WeakMap<Database, Statement>();

export function putFileOffset(db: Database, o: FileOffset): void {
  let stmt = cache.get(db);
  if (!stmt) {
    stmt = db.prepare(
      `INSERT INTO file_offsets (path, source, offset, size, ino, head_hash, malformed, skipping, updated_at)
       VALUES ($path, $source, $offset, $size, $ino, $head_hash, $malformed, $skipping, $updated_at)
       ON CONFLICT(path) DO UPDATE SET source = excluded.source, offset = excluded.offset, size = excluded.size,
         ino = excluded.ino, head_hash = excluded.head_hash, malformed = excluded.malformed,
         skipping = excluded.skipping, updated_at = excluded.updated_at`,
    );
    cache.set(db, stmt);
  }
  stmt.run({ ...o, skipping: o.skipping ?? 0 });
}

export function deleteFileOffset(db: Database, path: string): void {
  db.query(`DELETE FROM file_offsets WHERE path = ?`).run(path);
}

/** Files and malformed lines per source, for status. */
export function fileOffsetCounts(db: Database): Array<{ source: string; files: number; malformed: number }> {
  return db
    .query(
      `SELECT source, COUNT(*) AS files, COALESCE(SUM(malformed), 0) AS malformed FROM file_offsets GROUP BY source`,
    )
    .all() as Array<{
    source: string;
    files: number;
    malformed: number;
  }>;
}
