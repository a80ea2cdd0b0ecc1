/**
 * The global style memory (~/.sqrl/user.db) as `sqrl ui` lists it beside the project's: current
 * rows are active; history rows are superseded (a successor) or forgotten (none). Reads only.
 */
import type { Database } from "bun:sqlite";
import type { MemoryDetail, MemoryListQuery, MemoryRow } from "../../shared/api.ts";
import { getEpisode } from "../../sql/episodes.ts";
import { getUserStyleById, userStyleHistory, type StyleEvidence } from "../../sql/user-style.ts";
import { originLabel, originOf } from "./render/origin.ts";

interface StyleRow {
  id: string;
  user_id: string;
  key: string;
  content: string;
  tags: string;
  importance: number;
  created_at: string;
  updated_at: string;
  source: string;
  confidence: number | null;
  evidence: string | null;
  valid_to: string | null;
  superseded_by: string | null;
  decision: string | null;
}

const CURRENT = `SELECT i.id, i.user_id, i.key, i.content, i.tags, i.importance, i.created_at, i.updated_at, i.source, m.confidence, m.evidence,
  NULL AS valid_to, NULL AS superseded_by, NULL AS decision FROM user_style_items i LEFT JOIN user_style_meta m ON m.item_id = i.id`;
const HISTORY = `SELECT id, user_id, key, content, tags, importance, created_at, updated_at, source, NULL AS confidence, NULL AS evidence,
  valid_to, superseded_by, decision FROM user_style_history`;

/** Most rows the list merges from user.db (global style stays small: one row per key). */
const MAX_STYLE_ROWS = 2000;

function statusOf(r: StyleRow): MemoryRow["status"] {
  if (r.valid_to === null) return "active";
  return r.superseded_by ? "superseded" : "forgotten";
}

function toRow(db: Database, r: StyleRow): MemoryRow {
  const evidence = JSON.parse(r.evidence ?? "[]") as StyleEvidence[];
  // Versions before this one: history rows of the key that ended before it did (all of them for the current row).
  const replaced = (
    db
      .query(`SELECT COUNT(*) AS n FROM user_style_history WHERE user_id = ? AND key = ? AND valid_to < ?`)
      .get(r.user_id, r.key, r.valid_to ?? "9999") as { n: number }
  ).n;
  return {
    memory_id: r.id,
    type: "user_style",
    scope: "user",
    key: r.key,
    content: r.content,
    tags: JSON.parse(r.tags) as string[],
    importance: r.importance,
    confidence: r.confidence ?? 0.5,
    created_at: r.created_at,
    updated_at: r.updated_at,
    status: statusOf(r),
    pinned: false,
    wrong: false,
    decision: r.decision ?? "current",
    extractor: r.source,
    origin: originLabel(
      originOf({ type: "user_style", tags: JSON.parse(r.tags) as string[], content: r.content, extractor: r.source }),
    ),
    evidence: {
      quote: "",
      episode_id: evidence.at(-1)?.episode_id ?? null,
      episode_count: evidence.length,
      event_count: evidence.reduce((a, e) => a + e.event_ids.length, 0),
    },
    replaced,
    superseded_by: r.superseded_by || null,
  };
}

/** Global style rows of `userId` matching the list's status and text, newest first. */
export function styleRows(db: Database, userId: string, q: Pick<MemoryListQuery, "status" | "q">): MemoryRow[] {
  const parts: string[] = [];
  if (q.status === "active" || q.status === "all") parts.push(`${CURRENT} WHERE i.user_id = $user`);
  if (q.status !== "active") {
    const which =
      q.status === "superseded" ? "AND superseded_by != ''" : q.status === "forgotten" ? "AND superseded_by = ''" : "";
    parts.push(`${HISTORY} WHERE user_id = $user ${which}`);
  }
  const text = q.q?.trim();
  const sql = `SELECT * FROM (${parts.join(" UNION ALL ")}) ${text ? "WHERE content LIKE $like ESCAPE '\\' OR key LIKE $like ESCAPE '\\'" : ""} ORDER BY updated_at DESC, id LIMIT ${MAX_STYLE_ROWS}`;
  const params: Record<string, string> = { user: userId };
  if (text) params.like = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return (db.query(sql).all(params) as StyleRow[]).map((r) => toRow(db, r));
}

/** One global style item (current or historical) with its versions and the episodes of this project that showed it. */
export function styleDetail(
  userDb: Database,
  projectDb: Database,
  projectId: string,
  id: string,
): MemoryDetail | undefined {
  const current = getUserStyleById(userDb, id);
  const row =
    (userDb.query(`SELECT * FROM (${CURRENT} UNION ALL ${HISTORY}) WHERE id = ?`).get(id) as StyleRow | null) ??
    undefined;
  if (!row) return undefined;
  const history = userStyleHistory(userDb, row.user_id, row.key).reverse();
  const now = userDb.query(`${CURRENT} WHERE i.user_id = ? AND i.key = ?`).get(row.user_id, row.key) as StyleRow | null;
  const lineage = [
    ...history.map((h) => ({
      memory_id: h.id,
      content: h.content,
      decision: h.decision,
      extractor: h.source,
      valid_from: h.created_at,
      valid_to: h.valid_to,
      status: h.superseded_by ? ("superseded" as const) : ("forgotten" as const),
      superseded_by_episode: h.superseded_by_episode,
    })),
    ...(now
      ? [
          {
            memory_id: now.id,
            content: now.content,
            decision: "current",
            extractor: now.source,
            valid_from: now.created_at,
            valid_to: null,
            status: "active" as const,
            superseded_by_episode: null,
          },
        ]
      : []),
  ];
  const evidence = current?.evidence ?? [];
  const episodes = evidence
    .filter((e) => e.project_id === projectId)
    .map((e) => getEpisode(projectDb, e.episode_id))
    .filter((e) => e !== undefined)
    .map((e) => ({ episode_id: e.id, start_ts: e.start_ts, end_ts: e.end_ts, summary: e.summary, outcome: e.outcome }));
  return {
    type: "memory_detail",
    project_id: projectId,
    item: toRow(userDb, row),
    tags: JSON.parse(row.tags) as string[],
    file_paths: [],
    lineage,
    marks: [],
    notes: [],
    episodes,
    events: [],
  };
}
