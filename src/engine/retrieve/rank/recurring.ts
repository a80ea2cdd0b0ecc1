/**
 * The project's recurring items: what most of its sessions meet again whatever the task says (the
 * package manager, the wrapper that breaks `bun run test`, the checks a commit runs). An opening such
 * as "commit this" or "continue" shares no word with them, so the relevance gate never lets them
 * through, yet the session goes on to need them.
 *
 * Measured with `bun run bench eval` (issue 27): on the packmind sessions with model-made memory, the
 * most needed item (a tool pitfall met again in nearly every session) was never a candidate for any
 * opening. An item counts as recurring when the episodes that confirmed it span at least
 * MIN_SESSIONS sessions and at least MIN_SHARE of the project's sessions since it was first seen
 * (both read as of `nowMs`, so a replay sees what stood then).
 */
import type { Database } from "bun:sqlite";
import { indexStamp } from "../../../ranker/fts-stats.ts";
import { nowIso } from "../../../shared/time.ts";

export const MIN_SESSIONS = 3;
export const MIN_SHARE = 0.3;

export interface Recurring {
  id: string;
  /** Sessions whose episodes confirmed it. */
  sessions: number;
  /** The project's sessions since the first of them (that one included). */
  since: number;
}

/** The last answer per connection, until the memory index or the sessions before `now` change. */
const remembered = new WeakMap<Database, { key: string; items: Recurring[] }>();

/** Recurring project items, the most regular first. */
export function recurringItems(db: Database, projectId: string, nowMs: number): Recurring[] {
  const now = nowIso(nowMs);
  const last = db
    .query(
      `SELECT (SELECT MAX(rowid) FROM episodes) AS r, (SELECT MAX(start_ts) FROM episodes WHERE project_id = ? AND start_ts < ?) AS t`,
    )
    .get(projectId, now) as { r: number | null; t: string | null };
  const key = `${indexStamp(db, "memory_fts")}|${projectId}|${last.r}|${last.t}`;
  const hit = remembered.get(db);
  if (hit?.key === key) return hit.items;
  const items = readRecurring(db, projectId, now);
  remembered.set(db, { key, items });
  return items;
}

function readRecurring(db: Database, projectId: string, now: string): Recurring[] {
  // memory_meta alone first: joining memory_items on every call scanned 10k items in ~12 ms, this
  // takes ~0.3 ms (bench retrieval's realistic 10k store).
  const many = db
    .query(
      `SELECT memory_id AS id, evidence_episode_ids AS ev FROM memory_meta
       WHERE valid_to IS NULL AND length(evidence_episode_ids) >= 13 AND json_array_length(evidence_episode_ids) >= ?`,
    )
    .all(MIN_SESSIONS) as Array<{ id: string; ev: string }>;
  if (many.length === 0) return [];
  const mine = new Set(
    (
      db
        .query(
          `SELECT id FROM memory_items WHERE id IN (SELECT value FROM json_each(?))
           AND project_id = ? AND deleted = 0 AND scope = 'project'`,
        )
        .all(JSON.stringify(many.map((r) => r.id)), projectId) as Array<{ id: string }>
    ).map((r) => r.id),
  );
  const rows = many.filter((r) => mine.has(r.id));
  if (rows.length === 0) return [];
  const met = db.query(
    `SELECT COUNT(DISTINCT COALESCE(session_id, id)) AS n, MIN(start_ts) AS first FROM episodes
     WHERE id IN (SELECT value FROM json_each(?)) AND start_ts < ?`,
  );
  const since = db.query(
    `SELECT COUNT(DISTINCT COALESCE(session_id, id)) AS n FROM episodes WHERE project_id = ? AND start_ts >= ? AND start_ts < ?`,
  );
  const out: Recurring[] = [];
  for (const r of rows) {
    const m = met.get(r.ev, now) as { n: number; first: string | null };
    if (m.n < MIN_SESSIONS || !m.first) continue;
    const total = (since.get(projectId, m.first, now) as { n: number }).n;
    if (total > 0 && m.n / total >= MIN_SHARE) out.push({ id: r.id, sessions: m.n, since: total });
  }
  return out.sort((a, b) => b.sessions / b.since - a.sessions / a.since || b.sessions - a.sessions);
}
