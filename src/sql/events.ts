/**
 * Queries of the events table: insert (plain or packed across threads), unprocessed batches, counts.
 */
import type { Database } from "bun:sqlite";
import type { EventDTO } from "../shared/event.ts";

interface EventRow extends Omit<EventDTO, "file_paths"> {
  file_paths: string;
}

export function rowToEvent(row: EventRow): EventDTO {
  return { ...row, file_paths: JSON.parse(row.file_paths) as string[] } as EventDTO;
}

export interface InsertResult {
  added: number;
  duplicates: number;
  addedIds: string[];
}

/**
 * A row whose (project_id, hash) exists is a duplicate, except a response that grew (same record
 * id, written block by block, see dedup.ts): its longer version replaces the stored content.
 */
const INSERT_EVENT_SQL = `INSERT INTO events (id, project_id, user_id, source_tool, session_id, timestamp, event_type, content_json, file_paths, hash, processed_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (project_id, hash) DO UPDATE SET content_json = excluded.content_json
   WHERE events.event_type = 'assistant_response' AND length(excluded.content_json) > length(events.content_json)`;

/** Insert events in one transaction; rows whose (project_id, hash) already exists are dropped. */
export function insertEvents(db: Database, events: readonly EventDTO[]): InsertResult {
  const stmt = db.query(INSERT_EVENT_SQL); // compiled once per connection (bun:sqlite caches it)
  const result: InsertResult = { added: 0, duplicates: 0, addedIds: [] };
  db.transaction(() => {
    for (const e of events) {
      const res = stmt.run(
        e.id,
        e.project_id,
        e.user_id,
        e.source_tool,
        e.session_id,
        e.timestamp,
        e.event_type,
        e.content_json,
        JSON.stringify(e.file_paths),
        e.hash,
        e.processed_at,
      );
      if (res.changes > 0) {
        result.added++;
        result.addedIds.push(e.id);
      } else result.duplicates++;
    }
  }).immediate();
  return result;
}

/** Values per row in `packEvents` / `insertPackedEvents`. */
export const PACKED_EVENT_WIDTH = 8;

/**
 * Rows of one project and user as one flat array (id, source_tool, session_id, timestamp,
 * event_type, content_json, file_paths as JSON, hash per row), after `header`: cheap to hand between
 * threads (an array of strings crosses `postMessage` several times faster than the same inside an object).
 */
export function packEvents(events: readonly EventDTO[], header: readonly string[] = []): (string | null)[] {
  const out = new Array<string | null>(header.length + events.length * PACKED_EVENT_WIDTH);
  let i = 0;
  for (const h of header) out[i++] = h;
  for (const e of events) {
    out[i++] = e.id;
    out[i++] = e.source_tool;
    out[i++] = e.session_id;
    out[i++] = e.timestamp;
    out[i++] = e.event_type;
    out[i++] = e.content_json;
    out[i++] = JSON.stringify(e.file_paths);
    out[i++] = e.hash;
  }
  return out;
}

/**
 * `insertEvents` for rows packed by `packEvents` (all of `projectId`/`userId`, unprocessed), from
 * index `from` of `packed` on (what comes before is the sender's header).
 */
export function insertPackedEvents(
  db: Database,
  projectId: string,
  userId: string,
  packed: readonly (string | null)[],
  from = 0,
): InsertResult {
  const stmt = db.query(INSERT_EVENT_SQL);
  const result: InsertResult = { added: 0, duplicates: 0, addedIds: [] };
  db.transaction(() => {
    for (let i = from; i + PACKED_EVENT_WIDTH <= packed.length; i += PACKED_EVENT_WIDTH) {
      const id = packed[i] as string;
      const res = stmt.run(
        id,
        projectId,
        userId,
        packed[i + 1] ?? null,
        packed[i + 2] ?? null,
        packed[i + 3] ?? null,
        packed[i + 4] ?? null,
        packed[i + 5] ?? null,
        packed[i + 6] ?? null,
        packed[i + 7] ?? null,
        null,
      );
      if (res.changes > 0) {
        result.added++;
        result.addedIds.push(id);
      } else result.duplicates++;
    }
  }).immediate();
  return result;
}

/** Oldest unprocessed events of a project (reference §4.2.5). */
export function unprocessedEvents(db: Database, projectId: string, limit: number): EventDTO[] {
  const rows = db
    .query(`SELECT * FROM events WHERE project_id = ? AND processed_at IS NULL ORDER BY timestamp, id LIMIT ?`)
    .all(projectId, limit) as EventRow[];
  return rows.map(rowToEvent);
}

export function markProcessed(db: Database, ids: readonly string[], at: string): void {
  const stmt = db.prepare(`UPDATE events SET processed_at = ? WHERE id = ? AND processed_at IS NULL`);
  db.transaction(() => {
    for (const id of ids) stmt.run(at, id);
  }).immediate();
}

export function countEvents(db: Database, projectId?: string): { total: number; unprocessed: number } {
  const where = projectId === undefined ? "" : "WHERE project_id = ?";
  const params = projectId === undefined ? [] : [projectId];
  const row = db
    .query(`SELECT COUNT(*) AS total, COALESCE(SUM(processed_at IS NULL), 0) AS unprocessed FROM events ${where}`)
    .get(...params) as { total: number; unprocessed: number };
  return row;
}

export function eventsByIds(db: Database, ids: readonly string[]): EventDTO[] {
  if (ids.length === 0) return [];
  const rows = db
    .query(`SELECT * FROM events WHERE id IN (SELECT value FROM json_each(?)) ORDER BY timestamp, id`)
    .all(JSON.stringify(ids)) as EventRow[];
  return rows.map(rowToEvent);
}
