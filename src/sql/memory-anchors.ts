/**
 * `memory_anchors` (data.db v5): one row per anchored memory, the anchor as JSON (its shape and
 * validation live in src/engine/anchors/anchor.ts; this file only stores text).
 */
import type { Database } from "bun:sqlite";

export function putAnchorJson(db: Database, memoryId: string, json: string, at: string): void {
  db.query(`INSERT INTO memory_anchors (memory_id, anchor_json, recorded_at) VALUES (?, ?, ?)
    ON CONFLICT (memory_id) DO UPDATE SET anchor_json = excluded.anchor_json, recorded_at = excluded.recorded_at`).run(
    memoryId,
    json,
    at,
  );
}

/** Stored anchors of some items (ids without one are absent from the map). */
export function anchorJsonOf(db: Database, ids: readonly string[]): Map<string, string> {
  if (ids.length === 0) return new Map();
  const rows = db
    .query(`SELECT memory_id, anchor_json FROM memory_anchors WHERE memory_id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as Array<{ memory_id: string; anchor_json: string }>;
  return new Map(rows.map((r) => [r.memory_id, r.anchor_json]));
}

/** Valid items of a project that have no anchor yet. */
export function unanchoredIds(db: Database, projectId: string): string[] {
  return (
    db
      .query(
        `SELECT m.id FROM memory_items m LEFT JOIN memory_anchors a ON a.memory_id = m.id WHERE m.project_id = ? AND m.deleted = 0 AND a.memory_id IS NULL`,
      )
      .all(projectId) as Array<{ id: string }>
  ).map((r) => r.id);
}
