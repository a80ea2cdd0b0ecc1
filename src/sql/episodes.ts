/**
 * Queries of episodes (`episodes` joined with `episode_state`), their events and their FTS index.
 */
import type { Database } from "bun:sqlite";
import { expandCodeTokens } from "../shared/code-tokens.ts";
import type { EventDTO } from "../shared/event.ts";
import { rowToEvent } from "./events.ts";

/** An episode: the reference `episodes` row joined with its `episode_state` (life cycle, outcome, paths). */
export interface Episode {
  id: string;
  project_id: string;
  user_id: string;
  session_id: string | null;
  start_ts: string;
  end_ts: string;
  event_count: number;
  summary: string;
  importance: number;
  created_at: string;
  status: "open" | "closed";
  closed_at: string | null;
  extracted_at: string | null;
  extractor: string | null;
  summary_source: "none" | "offline" | "llm";
  outcome: string;
  file_paths: string[];
}

const SELECT = `SELECT e.*, COALESCE(s.status, 'open') AS status, s.closed_at, s.extracted_at, s.extractor,
  COALESCE(s.summary_source, 'none') AS summary_source, COALESCE(s.outcome, '') AS outcome, COALESCE(s.file_paths, '[]') AS state_paths
  FROM episodes e LEFT JOIN episode_state s ON s.episode_id = e.id`;

function rowToEpisode(r: Record<string, unknown>): Episode {
  return {
    id: r.id as string,
    project_id: r.project_id as string,
    user_id: r.user_id as string,
    session_id: (r.session_id as string | null) ?? null,
    start_ts: r.start_ts as string,
    end_ts: r.end_ts as string,
    event_count: r.event_count as number,
    summary: r.summary as string,
    importance: r.importance as number,
    created_at: r.created_at as string,
    status: r.status as "open" | "closed",
    closed_at: (r.closed_at as string | null) ?? null,
    extracted_at: (r.extracted_at as string | null) ?? null,
    extractor: (r.extractor as string | null) ?? null,
    summary_source: r.summary_source as Episode["summary_source"],
    outcome: r.outcome as string,
    file_paths: JSON.parse(r.state_paths as string) as string[],
  };
}

export function insertEpisode(db: Database, ep: Episode): void {
  db.query(
    `INSERT INTO episodes (id, project_id, user_id, session_id, start_ts, end_ts, event_count, summary, importance, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    ep.id,
    ep.project_id,
    ep.user_id,
    ep.session_id,
    ep.start_ts,
    ep.end_ts,
    ep.event_count,
    ep.summary,
    ep.importance,
    ep.created_at,
  );
  db.query(
    `INSERT INTO episode_state (episode_id, status, closed_at, extracted_at, extractor, summary_source, outcome, file_paths) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    ep.id,
    ep.status,
    ep.closed_at,
    ep.extracted_at,
    ep.extractor,
    ep.summary_source,
    ep.outcome,
    JSON.stringify(ep.file_paths),
  );
}

/** Write back the mutable fields of an episode (range, count, summary, importance, state). */
export function saveEpisode(db: Database, ep: Episode): void {
  db.query(
    `UPDATE episodes SET start_ts = ?, end_ts = ?, event_count = ?, summary = ?, importance = ? WHERE id = ?`,
  ).run(ep.start_ts, ep.end_ts, ep.event_count, ep.summary, ep.importance, ep.id);
  db.query(
    `INSERT INTO episode_state (episode_id, status, closed_at, extracted_at, extractor, summary_source, outcome, file_paths) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(episode_id) DO UPDATE SET status = excluded.status, closed_at = excluded.closed_at, extracted_at = excluded.extracted_at,
       extractor = excluded.extractor, summary_source = excluded.summary_source, outcome = excluded.outcome, file_paths = excluded.file_paths`,
  ).run(
    ep.id,
    ep.status,
    ep.closed_at,
    ep.extracted_at,
    ep.extractor,
    ep.summary_source,
    ep.outcome,
    JSON.stringify(ep.file_paths),
  );
}

export function getEpisode(db: Database, id: string): Episode | undefined {
  const r = db.query(`${SELECT} WHERE e.id = ?`).get(id) as Record<string, unknown> | null;
  return r ? rowToEpisode(r) : undefined;
}

/** Episodes of one (project, user, session), oldest first. */
export function sessionEpisodes(db: Database, projectId: string, userId: string, sessionId: string | null): Episode[] {
  return (
    db
      .query(`${SELECT} WHERE e.project_id = ? AND e.user_id = ? AND e.session_id IS ? ORDER BY e.start_ts, e.id`)
      .all(projectId, userId, sessionId) as Array<Record<string, unknown>>
  ).map(rowToEpisode);
}

/** Not-yet-extracted episodes of a user whose time range overlaps [fromTs, toTs] (neighbours for a short orphan). */
export function unextractedNear(
  db: Database,
  projectId: string,
  userId: string,
  fromTs: string,
  toTs: string,
): Episode[] {
  return (
    db
      .query(
        `${SELECT} WHERE e.project_id = ? AND e.user_id = ? AND e.end_ts >= ? AND e.start_ts <= ? AND s.extracted_at IS NULL ORDER BY e.start_ts, e.id`,
      )
      .all(projectId, userId, fromTs, toTs) as Array<Record<string, unknown>>
  ).map(rowToEpisode);
}

export function openEpisodes(db: Database, projectId: string): Episode[] {
  return (
    db
      .query(`${SELECT} WHERE e.project_id = ? AND s.status = 'open' ORDER BY e.start_ts, e.id`)
      .all(projectId) as Array<Record<string, unknown>>
  ).map(rowToEpisode);
}

/** Closed episodes whose extraction has not run yet, oldest first. */
export function closedUnextracted(db: Database, projectId: string): Episode[] {
  return (
    db
      .query(
        `${SELECT} WHERE e.project_id = ? AND s.status = 'closed' AND s.extracted_at IS NULL ORDER BY e.start_ts, e.id`,
      )
      .all(projectId) as Array<Record<string, unknown>>
  ).map(rowToEpisode);
}

export function listEpisodes(db: Database, projectId: string, limit = 1000): Episode[] {
  return (
    db.query(`${SELECT} WHERE e.project_id = ? ORDER BY e.start_ts, e.id LIMIT ?`).all(projectId, limit) as Array<
      Record<string, unknown>
    >
  ).map(rowToEpisode);
}

/** Which of these event ids already belong to an episode (idempotent reprocessing). */
export function assignedEvents(db: Database, eventIds: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (eventIds.length === 0) return out;
  const rows = db
    .query(`SELECT event_id, episode_id FROM episode_events WHERE event_id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(eventIds)) as Array<{ event_id: string; episode_id: string }>;
  for (const r of rows) out.set(r.event_id, r.episode_id);
  return out;
}

export function addEpisodeEvents(db: Database, episodeId: string, eventIds: readonly string[]): void {
  const stmt = db.prepare(`INSERT OR IGNORE INTO episode_events (episode_id, event_id) VALUES (?, ?)`);
  for (const id of eventIds) stmt.run(episodeId, id);
}

/** Move every event of `fromId` into `toId` and drop the emptied episode (merging a short one into a neighbour). */
export function mergeEpisodeInto(db: Database, fromId: string, toId: string): void {
  db.query(`UPDATE episode_events SET episode_id = ? WHERE episode_id = ?`).run(toId, fromId);
  deleteEpisodeFts(db, fromId);
  db.query(`DELETE FROM episode_state WHERE episode_id = ?`).run(fromId);
  db.query(`DELETE FROM episodes WHERE id = ?`).run(fromId);
}

/** The events of an episode in time order. */
export function episodeEvents(db: Database, episodeId: string): EventDTO[] {
  const rows = db
    .query(
      `SELECT ev.* FROM episode_events ee JOIN events ev ON ev.id = ee.event_id WHERE ee.episode_id = ? ORDER BY ev.timestamp, ev.id`,
    )
    .all(episodeId) as Array<Parameters<typeof rowToEvent>[0]>;
  return rows.map(rowToEvent);
}

/** Size of an episode's raw events in characters (the summary scheduler's savings estimate). */
export function episodeRawChars(db: Database, episodeId: string): number {
  const r = db
    .query(
      `SELECT COALESCE(SUM(LENGTH(ev.content_json)), 0) AS n FROM episode_events ee JOIN events ev ON ev.id = ee.event_id WHERE ee.episode_id = ?`,
    )
    .get(episodeId) as { n: number };
  return r.n;
}

/**
 * The FTS row of an episode uses the episode's own rowid, so it is found and replaced by rowid
 * (an index lookup) instead of a scan of the unindexed `episode_id` column.
 */
function episodeRowid(db: Database, episodeId: string): number | null {
  const r = db.query(`SELECT rowid AS r FROM episodes WHERE id = ?`).get(episodeId) as { r: number } | null;
  return r ? r.r : null;
}

function deleteEpisodeFts(db: Database, episodeId: string): void {
  const rowid = episodeRowid(db, episodeId);
  if (rowid !== null) db.query(`DELETE FROM episode_fts WHERE rowid = ?`).run(rowid);
}

/** Keep `episode_fts` in step with an episode's summary (and the paths it touched). */
export function writeEpisodeFts(db: Database, episodeId: string, summary: string, filePaths: readonly string[]): void {
  const rowid = episodeRowid(db, episodeId);
  if (rowid === null) return;
  db.query(`DELETE FROM episode_fts WHERE rowid = ?`).run(rowid);
  if (summary.trim().length === 0) return;
  db.query(`INSERT INTO episode_fts (rowid, episode_id, body) VALUES (?, ?, ?)`).run(
    rowid,
    episodeId,
    expandCodeTokens(`${summary}\n${filePaths.join(" ")}`),
  );
}

/** Latest event time of a project (closes episodes whose session went quiet while others went on). */
export function latestEventTs(db: Database, projectId: string): string | null {
  const r = db.query(`SELECT MAX(timestamp) AS ts FROM events WHERE project_id = ?`).get(projectId) as {
    ts: string | null;
  };
  return r.ts;
}

/** Episodes still to be summarized (or upgraded to an LLM summary), biggest raw size first; not those waiting for the model (their extraction call writes the summary). */
export function episodesForSummary(
  db: Database,
  projectId: string,
  sources: ReadonlyArray<Episode["summary_source"]>,
  limit: number,
): Array<Episode & { raw_chars: number }> {
  const rows = db
    .query(
      `${SELECT.replace("FROM episodes e", ", (SELECT COALESCE(SUM(LENGTH(ev.content_json)), 0) FROM episode_events ee JOIN events ev ON ev.id = ee.event_id WHERE ee.episode_id = e.id) AS raw_chars FROM episodes e")}
       WHERE e.project_id = ? AND COALESCE(s.summary_source, 'none') IN (SELECT value FROM json_each(?)) AND COALESCE(s.status, 'open') = 'closed'
         AND e.id NOT IN (SELECT episode_id FROM llm_waits)
       ORDER BY raw_chars - LENGTH(e.summary) DESC, e.start_ts LIMIT ?`,
    )
    .all(projectId, JSON.stringify(sources), limit) as Array<Record<string, unknown>>;
  return rows.map((r) => ({ ...rowToEpisode(r), raw_chars: r.raw_chars as number }));
}

/** Set the summary (and its source) of an episode and refresh its full-text entry. */
export function setEpisodeSummary(
  db: Database,
  episodeId: string,
  summary: string,
  source: Episode["summary_source"],
): void {
  db.query(`UPDATE episodes SET summary = ? WHERE id = ?`).run(summary, episodeId);
  db.query(`UPDATE episode_state SET summary_source = ? WHERE episode_id = ?`).run(source, episodeId);
  const ep = getEpisode(db, episodeId);
  if (ep) writeEpisodeFts(db, episodeId, summary, ep.file_paths);
}
