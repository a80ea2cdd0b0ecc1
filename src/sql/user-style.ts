/**
 * Queries of the global style memory in `~/.sqrl/user.db`: `user_style_items` (one current row per
 * (user_id, key), reference §3.4), `user_style_meta` (evidence, confidence) and `user_style_history`
 * (every superseded version, so nothing is destroyed).
 */
import type { Database } from "bun:sqlite";

export interface StyleEvidence {
  project_id: string;
  episode_id: string;
  event_ids: string[];
}

export interface UserStyleItem {
  id: string;
  user_id: string;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  created_at: string;
  updated_at: string;
  source: string;
  confidence: number;
  evidence: StyleEvidence[];
}

export interface UserStyleHistoryRow {
  id: string;
  user_id: string;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  created_at: string;
  updated_at: string;
  source: string;
  valid_to: string;
  superseded_by: string;
  superseded_by_episode: string | null;
  decision: string;
}

function rowToItem(r: Record<string, unknown>): UserStyleItem {
  return {
    id: r.id as string,
    user_id: r.user_id as string,
    key: r.key as string,
    content: r.content as string,
    tags: JSON.parse(r.tags as string) as string[],
    importance: r.importance as number,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
    source: r.source as string,
    confidence: (r.confidence as number | null) ?? 0.5,
    evidence: JSON.parse((r.evidence as string | null) ?? "[]") as StyleEvidence[],
  };
}

const SELECT = `SELECT i.*, m.confidence, m.evidence FROM user_style_items i LEFT JOIN user_style_meta m ON m.item_id = i.id`;

export function getUserStyle(db: Database, userId: string, key: string): UserStyleItem | undefined {
  const r = db.query(`${SELECT} WHERE i.user_id = ? AND i.key = ?`).get(userId, key) as Record<string, unknown> | null;
  return r ? rowToItem(r) : undefined;
}

export function getUserStyleById(db: Database, id: string): UserStyleItem | undefined {
  const r = db.query(`${SELECT} WHERE i.id = ?`).get(id) as Record<string, unknown> | null;
  return r ? rowToItem(r) : undefined;
}

export function listUserStyle(db: Database, userId: string): UserStyleItem[] {
  return (
    db.query(`${SELECT} WHERE i.user_id = ? ORDER BY i.importance DESC, i.updated_at DESC`).all(userId) as Array<
      Record<string, unknown>
    >
  ).map(rowToItem);
}

export function insertUserStyle(db: Database, item: UserStyleItem): void {
  db.query(
    `INSERT INTO user_style_items (id, user_id, key, content, tags, importance, created_at, updated_at, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    item.id,
    item.user_id,
    item.key,
    item.content,
    JSON.stringify(item.tags),
    item.importance,
    item.created_at,
    item.updated_at,
    item.source,
  );
  db.query(`INSERT INTO user_style_meta (item_id, confidence, evidence) VALUES (?, ?, ?)`).run(
    item.id,
    item.confidence,
    JSON.stringify(item.evidence),
  );
}

/** In-place refresh of the current row (NOOP: newer time, higher importance, more evidence). */
export function refreshUserStyle(
  db: Database,
  id: string,
  patch: { updated_at: string; importance: number; confidence: number; evidence: StyleEvidence[] },
): void {
  db.query(`UPDATE user_style_items SET updated_at = ?, importance = ? WHERE id = ?`).run(
    patch.updated_at,
    patch.importance,
    id,
  );
  db.query(`UPDATE user_style_meta SET confidence = ?, evidence = ? WHERE item_id = ?`).run(
    patch.confidence,
    JSON.stringify(patch.evidence),
    id,
  );
}

/** Replace the current row of (user, key) by `next`, moving the old one to history (UPDATE/DELETE_AND_ADD). */
export function supersedeUserStyle(
  db: Database,
  oldId: string,
  next: UserStyleItem,
  decision: string,
  episodeId: string | null,
  at: string,
): void {
  archiveUserStyle(db, oldId, next.id, decision, episodeId, at);
  insertUserStyle(db, next);
}

/** Forget a global style item: moved to history with no successor (`superseded_by` empty, decision FORGET). */
export function forgetUserStyle(db: Database, id: string, at: string): void {
  archiveUserStyle(db, id, "", "FORGET", null, at);
}

/** Move the current row of an item to user_style_history; nothing is destroyed. */
function archiveUserStyle(
  db: Database,
  oldId: string,
  supersededBy: string,
  decision: string,
  episodeId: string | null,
  at: string,
): void {
  const old = getUserStyleById(db, oldId);
  if (!old) throw new Error(`user style item ${oldId} not found`);
  db.query(
    `INSERT INTO user_style_history (id, user_id, key, content, tags, importance, created_at, updated_at, source, valid_to, superseded_by, superseded_by_episode, decision)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    old.id,
    old.user_id,
    old.key,
    old.content,
    JSON.stringify(old.tags),
    old.importance,
    old.created_at,
    old.updated_at,
    old.source,
    at,
    supersededBy,
    episodeId,
    decision,
  );
  db.query(`DELETE FROM user_style_meta WHERE item_id = ?`).run(oldId);
  db.query(`DELETE FROM user_style_items WHERE id = ?`).run(oldId);
}

/** Superseded versions of (user, key), newest first. */
export function userStyleHistory(db: Database, userId: string, key: string): UserStyleHistoryRow[] {
  return (
    db
      .query(`SELECT * FROM user_style_history WHERE user_id = ? AND key = ? ORDER BY valid_to DESC`)
      .all(userId, key) as Array<Record<string, unknown>>
  ).map((r) => ({
    ...(r as unknown as UserStyleHistoryRow),
    tags: JSON.parse(r.tags as string) as string[],
  }));
}

export function countUserStyle(db: Database, userId?: string): number {
  const r = (
    userId === undefined
      ? db.query(`SELECT COUNT(*) AS n FROM user_style_items`).get()
      : db.query(`SELECT COUNT(*) AS n FROM user_style_items WHERE user_id = ?`).get(userId)
  ) as { n: number };
  return r.n;
}

/**
 * Wordings of (user, key) a person rejected: forgotten (decision FORGET) or replaced by their own edit
 * (a version whose successor's source is `manual`), oldest first.
 */
export function userStyleRejected(
  db: Database,
  userId: string,
  key: string,
): Array<{ id: string; content: string; decision: string }> {
  return db
    .query(
      `SELECT h.id, h.content, h.decision FROM user_style_history h
       WHERE h.user_id = ? AND h.key = ? AND (h.decision = 'FORGET'
         OR h.superseded_by IN (SELECT id FROM user_style_items WHERE source = 'manual')
         OR h.superseded_by IN (SELECT id FROM user_style_history WHERE source = 'manual'))
       ORDER BY h.valid_to`,
    )
    .all(userId, key) as Array<{ id: string; content: string; decision: string }>;
}
