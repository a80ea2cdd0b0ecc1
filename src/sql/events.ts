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

/** Insert events in one transaction; rows whose (project_id, hash) already exists are dropped. */
export function insertEvents(db: Database, events: readonly EventDTO[]): InsertResult {
  const stmt = db.prepare(
    `INSERT OR IGNORE INTO events (id, project_id, user_id, source_tool, session_id, timestamp, event_type, content_json, file_paths, hash, processed_at)
     VALUES ($id, $project_id, $user_id, $source_tool, $session_id, $timestamp, $event_type, $content_json, $file_paths, $hash, $processed_at)`,
  );
  const result: InsertResult = { added: 0, duplicates: 0, addedIds: [] };
  db.transaction(() => {
    for (const e of events) {
      const res = stmt.run({ ...e, file_paths: JSON.stringify(e.file_paths) });
      if (res.changes > 0) {
        result.added++;
        result.addedIds.push(e.id);
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
  const rows = db.query(`SELECT * FROM events WHERE id IN (SELECT value FROM json_each(?)) ORDER BY timestamp, id`).all(JSON.stringify(ids)) as EventRow[];
  return rows.map(rowToEvent);
}
