/**
 * `llm_waits` (data.db v6): closed episodes waiting for the model after an LLM call failed for a
 * passing reason. Rows are written by the engine's extraction, removed in the transaction that marks
 * the episode extracted, and counted by `sqrl status` and the daemon's batcher.
 */
import type { Database } from "bun:sqlite";

export interface LlmWait {
  episode_id: string;
  reason: string;
  detail: string;
  attempts: number;
  first_failed_at: string;
  last_tried_at: string;
  next_try_at: string;
}

export function getLlmWait(db: Database, episodeId: string): LlmWait | null {
  return (db.query(`SELECT * FROM llm_waits WHERE episode_id = ?`).get(episodeId) as LlmWait | null) ?? null;
}

/** Record one more failed try (the first one opens the wait; first_failed_at never moves). */
export function recordLlmWait(
  db: Database,
  w: { episode_id: string; reason: string; detail: string; at: string; next_try_at: string },
): void {
  db.query(
    `INSERT INTO llm_waits (episode_id, reason, detail, attempts, first_failed_at, last_tried_at, next_try_at)
     VALUES (?, ?, ?, 1, ?, ?, ?)
     ON CONFLICT (episode_id) DO UPDATE SET reason = excluded.reason, detail = excluded.detail,
       attempts = attempts + 1, last_tried_at = excluded.last_tried_at, next_try_at = excluded.next_try_at`,
  ).run(w.episode_id, w.reason, w.detail, w.at, w.at, w.next_try_at);
}

export function deleteLlmWait(db: Database, episodeId: string): void {
  db.query(`DELETE FROM llm_waits WHERE episode_id = ?`).run(episodeId);
}

/** Episode ids of a project that wait for the model. */
export function waitingEpisodeIds(db: Database, projectId: string): string[] {
  return (
    db
      .query(
        `SELECT w.episode_id FROM llm_waits w JOIN episodes e ON e.id = w.episode_id WHERE e.project_id = ? ORDER BY e.start_ts, e.id`,
      )
      .all(projectId) as Array<{ episode_id: string }>
  ).map((r) => r.episode_id);
}

export interface LlmWaitSummary {
  count: number;
  /** Waiting episodes per reason of their last failure. */
  by_reason: Record<string, number>;
  /** When the soonest retry is due, and when the oldest wait began (ISO), or null. */
  next_try_at: string | null;
  oldest_since: string | null;
  /** The last failure's message (the most recent try). */
  last_detail: string | null;
}

export function llmWaitSummary(db: Database): LlmWaitSummary {
  const rows = db.query(`SELECT reason, COUNT(*) AS n FROM llm_waits GROUP BY reason`).all() as Array<{
    reason: string;
    n: number;
  }>;
  const agg = db.query(`SELECT MIN(next_try_at) AS next, MIN(first_failed_at) AS oldest FROM llm_waits`).get() as {
    next: string | null;
    oldest: string | null;
  };
  const last = db.query(`SELECT detail FROM llm_waits ORDER BY last_tried_at DESC LIMIT 1`).get() as {
    detail: string;
  } | null;
  return {
    count: rows.reduce((a, r) => a + r.n, 0),
    by_reason: Object.fromEntries(rows.map((r) => [r.reason, r.n])),
    next_try_at: agg.next,
    oldest_since: agg.oldest,
    last_detail: last?.detail ?? null,
  };
}

/** Whether some waiting episode's retry is due at `nowIso` (the batcher then asks the engine to try). */
export function llmWaitDue(db: Database, nowIso: string): boolean {
  return db.query(`SELECT 1 FROM llm_waits WHERE next_try_at <= ? LIMIT 1`).get(nowIso) !== null;
}
