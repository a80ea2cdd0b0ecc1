/**
 * Queries of memory items (`memory_items` joined with `memory_meta`) and their FTS index.
 */
import type { Database } from "bun:sqlite";
import type { MemoryType } from "../shared/api.ts";
import { expandCodeTokens } from "../shared/code-tokens.ts";

export type MemoryScope = "user" | "project";
export type UpdateDecision = "ADD_NEW" | "UPDATE_EXISTING" | "NOOP" | "DELETE_AND_ADD";

/** A memory item: the reference `memory_items` row joined with its `memory_meta` (evidence, lineage). */
export interface MemoryItem {
  id: string;
  project_id: string;
  user_id: string | null;
  scope: MemoryScope;
  type: MemoryType;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  created_at: string;
  updated_at: string;
  source_episode_id: string | null;
  source_event_ids: string[];
  embedding: Uint8Array | null;
  graph_neighbors: string[] | null;
  deleted: boolean;
  confidence: number;
  file_paths: string[];
  evidence_episode_ids: string[];
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
  superseded_by_episode: string | null;
  decision: UpdateDecision;
  extractor: string;
  /** When sqrl learned it on this machine (stored it, or a person wrote it); decay counts from here. */
  learned_at: string;
}

export type NewMemoryItem = Omit<
  MemoryItem,
  | "deleted"
  | "valid_to"
  | "superseded_by"
  | "superseded_by_episode"
  | "embedding"
  | "graph_neighbors"
  | "valid_from"
  | "learned_at"
> & { valid_from?: string; learned_at?: string };

interface Row {
  [k: string]: unknown;
}

const SELECT = `SELECT m.*, mm.confidence, mm.file_paths, mm.evidence_episode_ids, mm.valid_from, mm.valid_to,
  mm.superseded_by, mm.superseded_by_episode, mm.decision, mm.extractor, mm.learned_at
  FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id`;

function parseList(v: unknown): string[] {
  return typeof v === "string" && v.length > 0 ? (JSON.parse(v) as string[]) : [];
}

export function rowToItem(r: Row): MemoryItem {
  return {
    id: r.id as string,
    project_id: r.project_id as string,
    user_id: (r.user_id as string | null) ?? null,
    scope: r.scope as MemoryScope,
    type: r.type as MemoryType,
    key: r.key as string,
    content: r.content as string,
    tags: parseList(r.tags),
    importance: r.importance as number,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
    source_episode_id: (r.source_episode_id as string | null) ?? null,
    source_event_ids: parseList(r.source_event_ids),
    embedding: (r.embedding as Uint8Array | null) ?? null,
    graph_neighbors: r.graph_neighbors == null ? null : parseList(r.graph_neighbors),
    deleted: r.deleted === 1,
    confidence: r.confidence as number,
    file_paths: parseList(r.file_paths),
    evidence_episode_ids: parseList(r.evidence_episode_ids),
    valid_from: r.valid_from as string,
    valid_to: (r.valid_to as string | null) ?? null,
    superseded_by: (r.superseded_by as string | null) ?? null,
    superseded_by_episode: (r.superseded_by_episode as string | null) ?? null,
    decision: r.decision as UpdateDecision,
    extractor: r.extractor as string,
    learned_at: (r.learned_at as string | null) ?? (r.created_at as string),
  };
}

/** The text the full-text index holds for an item: content, key, tags and paths, code-aware. */
export function searchBody(item: Pick<MemoryItem, "content" | "key" | "tags" | "file_paths" | "type">): string {
  return expandCodeTokens(
    [item.content, item.key, item.tags.join(" "), item.file_paths.join(" "), item.type].join(" \n"),
  );
}

/**
 * The full-text row of an item shares the item's own rowid (schema v2), so it is found and replaced
 * by rowid: `memory_id` is UNINDEXED in FTS5 and a lookup by it would scan the whole index.
 */
function itemRowid(db: Database, id: string): number | null {
  const r = db.query("SELECT rowid AS r FROM memory_items WHERE id = ?").get(id) as { r: number } | null;
  return r ? r.r : null;
}

function deleteFts(db: Database, id: string): void {
  const rowid = itemRowid(db, id);
  if (rowid !== null) db.query("DELETE FROM memory_fts WHERE rowid = ?").run(rowid);
}

function writeFts(
  db: Database,
  item: Pick<MemoryItem, "id" | "content" | "key" | "tags" | "file_paths" | "type">,
  fresh = false,
): void {
  const rowid = itemRowid(db, item.id);
  if (rowid === null) return;
  if (!fresh) db.query("DELETE FROM memory_fts WHERE rowid = ?").run(rowid);
  db.query("INSERT INTO memory_fts (rowid, memory_id, body) VALUES (?, ?, ?)").run(rowid, item.id, searchBody(item));
}

/** Insert an item with its meta and full-text entry (call inside a transaction for batches). */
export function insertMemoryItem(db: Database, item: NewMemoryItem): MemoryItem {
  db.query(
    `INSERT INTO memory_items (id, project_id, user_id, scope, type, key, content, tags, importance, created_at, updated_at, source_episode_id, source_event_ids, deleted)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  ).run(
    item.id,
    item.project_id,
    item.user_id,
    item.scope,
    item.type,
    item.key,
    item.content,
    JSON.stringify(item.tags),
    item.importance,
    item.created_at,
    item.updated_at,
    item.source_episode_id,
    JSON.stringify(item.source_event_ids),
  );
  db.query(
    `INSERT INTO memory_meta (memory_id, confidence, file_paths, evidence_episode_ids, valid_from, decision, extractor, learned_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    item.id,
    item.confidence,
    JSON.stringify(item.file_paths),
    JSON.stringify(item.evidence_episode_ids),
    item.valid_from ?? item.created_at,
    item.decision,
    item.extractor,
    item.learned_at ?? item.created_at,
  );
  writeFts(db, item, true);
  return getMemoryItem(db, item.id)!;
}

export function getMemoryItem(db: Database, id: string): MemoryItem | undefined {
  const row = db.query(`${SELECT} WHERE m.id = ?`).get(id) as Row | null;
  return row ? rowToItem(row) : undefined;
}

/** Valid (not superseded, not forgotten) items of a project, optionally of some types. */
export function currentItems(db: Database, projectId: string, types: readonly MemoryType[] = []): MemoryItem[] {
  const typeFilter = types.length > 0 ? "AND m.type IN (SELECT value FROM json_each(?))" : "";
  const params: string[] = [projectId];
  if (types.length > 0) params.push(JSON.stringify(types));
  return (
    db
      .query(
        `${SELECT} WHERE m.project_id = ? AND m.deleted = 0 ${typeFilter} ORDER BY m.importance DESC, m.updated_at DESC`,
      )
      .all(...params) as Row[]
  ).map(rowToItem);
}

export interface Anchor {
  project_id: string;
  type: MemoryType;
  key: string;
  scope: MemoryScope;
  user_id: string | null;
}

/** Valid items with the same update anchor (project_id, type, key, scope, user_id). */
export function itemsByAnchor(db: Database, a: Anchor): MemoryItem[] {
  return (
    db
      .query(
        `${SELECT} WHERE m.project_id = ? AND m.type = ? AND m.key = ? AND m.scope = ? AND m.user_id IS ? AND m.deleted = 0 ORDER BY m.updated_at DESC`,
      )
      .all(a.project_id, a.type, a.key, a.scope, a.user_id) as Row[]
  ).map(rowToItem);
}

export interface ItemPatch {
  content?: string;
  tags?: string[];
  importance?: number;
  confidence?: number;
  updated_at: string;
  source_event_ids?: string[];
  file_paths?: string[];
  evidence_episode_ids?: string[];
  source_episode_id?: string | null;
}

/** Update an item in place (UPDATE_EXISTING and NOOP refreshes) and its index entry. */
export function updateMemoryItem(db: Database, id: string, patch: ItemPatch): MemoryItem {
  const cur = getMemoryItem(db, id);
  if (!cur) throw new Error(`memory item ${id} not found`);
  const next = { ...cur, ...patch };
  db.query(
    `UPDATE memory_items SET content = ?, tags = ?, importance = ?, updated_at = ?, source_event_ids = ?, source_episode_id = ? WHERE id = ?`,
  ).run(
    next.content,
    JSON.stringify(next.tags),
    next.importance,
    next.updated_at,
    JSON.stringify(next.source_event_ids),
    next.source_episode_id,
    id,
  );
  db.query(`UPDATE memory_meta SET confidence = ?, file_paths = ?, evidence_episode_ids = ? WHERE memory_id = ?`).run(
    next.confidence,
    JSON.stringify(next.file_paths),
    JSON.stringify(next.evidence_episode_ids),
    id,
  );
  writeFts(db, next);
  return getMemoryItem(db, id)!;
}

/** Mark an item superseded by another (DELETE_AND_ADD): kept for history, gone from views. */
export function supersedeMemoryItem(
  db: Database,
  oldId: string,
  newId: string | null,
  episodeId: string | null,
  at: string,
): void {
  db.query(`UPDATE memory_items SET deleted = 1 WHERE id = ?`).run(oldId);
  db.query(`UPDATE memory_meta SET valid_to = ?, superseded_by = ?, superseded_by_episode = ? WHERE memory_id = ?`).run(
    at,
    newId,
    episodeId,
    oldId,
  );
  deleteFts(db, oldId);
}

/**
 * Replace `item` with a new version (`patch` over its fields, a new id, valid from `at`), the old row
 * kept as history and linked to it: how an edit, a moved file or a renamed path changes a memory.
 * Call inside a transaction.
 */
export function replaceWithVersion(
  db: Database,
  item: MemoryItem,
  id: string,
  at: string,
  patch: Partial<NewMemoryItem>,
): MemoryItem {
  const {
    deleted: _d,
    valid_to: _v,
    superseded_by: _s,
    superseded_by_episode: _e,
    embedding: _m,
    graph_neighbors: _g,
    ...rest
  } = item;
  const next = insertMemoryItem(db, { ...rest, ...patch, id, valid_from: at });
  supersedeMemoryItem(db, item.id, next.id, null, at);
  return next;
}

/**
 * The rows an item replaced, newest first (itself excluded): its chain of versions and, where the
 * consolidation merged or replaced items of other keys into it, theirs too (each with its own chain).
 */
export function predecessors(db: Database, id: string): MemoryItem[] {
  const out: MemoryItem[] = [];
  const seen = new Set([id]);
  let frontier = [id];
  const q = db.query(`${SELECT} WHERE mm.superseded_by = ? ORDER BY mm.valid_to DESC, m.updated_at DESC`);
  for (let depth = 0; depth < 1000 && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const cursor of frontier)
      for (const row of q.all(cursor) as Row[]) {
        const item = rowToItem(row);
        if (seen.has(item.id)) continue;
        seen.add(item.id);
        out.push(item);
        next.push(item.id);
      }
    frontier = next;
  }
  return out;
}

export function countItemsByType(db: Database, projectId: string): Record<string, number> {
  const rows = db
    .query(`SELECT type, COUNT(*) AS n FROM memory_items WHERE project_id = ? AND deleted = 0 GROUP BY type`)
    .all(projectId) as Array<{ type: string; n: number }>;
  return Object.fromEntries(rows.map((r) => [r.type, r.n]));
}
