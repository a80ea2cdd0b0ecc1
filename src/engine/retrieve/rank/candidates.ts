/**
 * Candidate retrieval that scales: never a scan of every item. The FTS5 index proposes the items
 * whose text matches the query (ranker), path look-ups propose items about the active files, and only
 * those (a few hundred at most) are loaded and scored in JS.
 */
import type { Database } from "bun:sqlite";
import type { MemoryType } from "../../../shared/api.ts";
import { splitIdentifier } from "../../../shared/code-tokens.ts";
import { rowToItem, type MemoryItem } from "../../../sql/memory-items.ts";
import { listUserStyle, type UserStyleItem } from "../../../sql/user-style.ts";
import { indexStamp } from "../../../ranker/fts-stats.ts";
import { rankLexical } from "../../../ranker/lexical.ts";

export const LEXICAL_CANDIDATES = 60;
export const PATH_CANDIDATES = 30;

export interface LexicalCandidate {
  /** Ranker score, higher is better (0 for safety-net matches). */
  score: number;
  /** Query words the item contains, as the ranker saw them (undefined: unknown, re-check). */
  matched?: string[];
}

/** Item ids proposed by the lexical ranker, with its score and the query words each contains. */
export function lexicalCandidates(
  db: Database,
  text: string,
  limit = LEXICAL_CANDIDATES,
): Map<string, LexicalCandidate> {
  const out = new Map<string, LexicalCandidate>();
  for (const hit of rankLexical(db, text, { table: "memory_fts", idColumn: "memory_id", limit })) {
    if (!out.has(hit.id)) out.set(hit.id, { score: hit.score, matched: hit.matched });
  }
  if (out.size === 0) for (const id of plainMatch(db, text, limit)) out.set(id, { score: 0 });
  return out;
}

/**
 * Safety net when the ranker proposes nothing: a plain FTS5 OR of the words. (In a tiny index every
 * real word sits in more than half of the rows, and the ranker's pool then uses only the words the
 * index lacks — so a one-item project would never match.) Candidates only; scoring stays the same.
 */
function plainMatch(db: Database, text: string, limit: number): string[] {
  const words = [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter((w) => w.length > 1),
    ),
  ].slice(0, 32);
  if (words.length === 0) return [];
  try {
    return (
      db
        .query(`SELECT memory_id AS id FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?`)
        .all(words.map((w) => `"${w}"`).join(" OR "), limit) as Array<{ id: string }>
    ).map((r) => r.id);
  } catch {
    return [];
  }
}

/**
 * Items about the active paths themselves: for a file, items whose indexed paths hold that exact path
 * (its joined token, e.g. `srcauthjwtts`); for a folder, items with a path inside it (phrase of the
 * folder's parts). Only these can pass the relevance gate without sharing words with the task (path
 * score 1); items merely in the same folder are reached through the text. Callers verify with pathMatch.
 */
export function pathCandidates(db: Database, paths: readonly string[], limit = PATH_CANDIDATES): Set<string> {
  const out = new Set<string>();
  // Newest rows first: FTS5 walks the doclist backwards and stops at the limit, so a folder with
  // 20,000 items costs what a file with 20 does (ORDER BY rank would score every row).
  const stmt = db.query<{ id: string }, [string, number]>(
    `SELECT memory_id AS id FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?`,
  );
  for (const raw of paths.slice(0, 20)) {
    const p = raw.replace(/\\/g, "/").replace(/\/+$/, "");
    const last = p.slice(p.lastIndexOf("/") + 1);
    const isFolder = !last.includes(".");
    const clause = isFolder ? phrase(splitIdentifier(p)) : phrase([p.toLowerCase().replace(/[^a-z0-9]+/g, "")]);
    if (!clause) continue;
    try {
      for (const r of stmt.all(clause, limit)) out.add(r.id);
    } catch {
      // A path FTS5 cannot parse as a query adds no candidates.
    }
  }
  return out;
}

function phrase(parts: readonly string[]): string | undefined {
  const words = parts.filter((w) => w.length > 0);
  return words.length > 0 ? `"${words.join(" ")}"` : undefined;
}

const SELECT_ITEMS = `SELECT m.*, mm.confidence, mm.file_paths, mm.evidence_episode_ids, mm.valid_from, mm.valid_to,
  mm.superseded_by, mm.superseded_by_episode, mm.decision, mm.extractor, mm.learned_at
  FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id`;

/** Items read so far per connection (null: no such item), until the memory index may have changed. */
const itemCache = new WeakMap<Database, { stamp: string; items: Map<string, MemoryItem | null> }>();
const ITEM_CACHE_MAX = 20_000;

/**
 * Valid items of the project among `ids`, optionally of some types. Rows are remembered per
 * connection while `indexStamp` holds (every item write touches memory_fts or is made on this
 * connection), frozen: callers share them.
 */
export function loadItems(
  db: Database,
  projectId: string,
  ids: Iterable<string>,
  types: readonly MemoryType[] = [],
): MemoryItem[] {
  const list = [...new Set(ids)];
  if (list.length === 0) return [];
  const stamp = indexStamp(db, "memory_fts");
  let cache = itemCache.get(db);
  if (!cache || cache.stamp !== stamp || cache.items.size > ITEM_CACHE_MAX)
    itemCache.set(db, (cache = { stamp, items: new Map() }));
  const missing = list.filter((id) => !cache.items.has(id));
  if (missing.length > 0) {
    const rows = db
      .query(`${SELECT_ITEMS} WHERE m.id IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(missing)) as Array<Record<string, unknown>>;
    for (const id of missing) cache.items.set(id, null);
    for (const row of rows) {
      const item = frozen(rowToItem(row));
      cache.items.set(item.id, item);
    }
  }
  const wanted = types.length > 0 ? new Set<string>(types) : null;
  const out: MemoryItem[] = [];
  for (const id of list) {
    const item = cache.items.get(id);
    if (item && item.project_id === projectId && !item.deleted && (!wanted || wanted.has(item.type))) out.push(item);
  }
  return out;
}

function frozen(item: MemoryItem): MemoryItem {
  for (const v of Object.values(item)) if (Array.isArray(v)) Object.freeze(v);
  return Object.freeze(item);
}

/** All valid items of some types (views: bounded by type, ordered by importance then recency). */
export function itemsOfTypes(
  db: Database,
  projectId: string,
  types: readonly MemoryType[],
  limit: number,
): MemoryItem[] {
  const rows = db
    .query(
      `${SELECT_ITEMS} WHERE m.project_id = ? AND m.deleted = 0 AND m.type IN (SELECT value FROM json_each(?)) ORDER BY m.importance DESC, m.updated_at DESC LIMIT ?`,
    )
    .all(projectId, JSON.stringify(types), limit) as Array<Record<string, unknown>>;
  return rows.map(rowToItem);
}

/** A global style row (user.db) in the shape the scorer reads; it has no paths and lives in no project. */
function styleAsItem(g: UserStyleItem, projectId: string): MemoryItem {
  const episodes = g.evidence.map((e) => e.episode_id);
  return {
    id: g.id,
    project_id: projectId,
    user_id: g.user_id,
    scope: "user",
    type: "user_style",
    key: g.key,
    content: g.content,
    tags: g.tags,
    importance: g.importance,
    created_at: g.created_at,
    updated_at: g.updated_at,
    source_episode_id: episodes.at(-1) ?? null,
    source_event_ids: g.evidence.flatMap((e) => e.event_ids).slice(0, 20),
    embedding: null,
    graph_neighbors: null,
    deleted: false,
    confidence: g.confidence,
    file_paths: [],
    evidence_episode_ids: episodes,
    valid_from: g.created_at,
    valid_to: null,
    superseded_by: null,
    superseded_by_episode: null,
    decision: "ADD_NEW",
    extractor: g.source,
    learned_at: g.created_at,
  };
}

/**
 * The user's global style (~/.sqrl/user.db) as candidates: personal preferences hold in every
 * project, so task context must be able to deliver them, not only the user_style view. `keep` picks
 * the rows worth scoring (e.g. those sharing a word with the task); of those, a key this project has
 * its own user_style item for is left out (the project's wins, as in the view). One row per key.
 */
export function globalStyleItems(
  db: Database,
  userDb: Database | undefined,
  projectId: string,
  userId: string,
  keep: (item: MemoryItem) => boolean,
): MemoryItem[] {
  if (!userDb) return [];
  const picked = listUserStyle(userDb, userId)
    .slice(0, 500)
    .map((g) => styleAsItem(g, projectId))
    .filter(keep);
  if (picked.length === 0) return [];
  const own = new Set(
    (
      db
        .query(
          `SELECT key FROM memory_items WHERE project_id = ? AND key IN (SELECT value FROM json_each(?)) AND type = 'user_style' AND deleted = 0`,
        )
        .all(projectId, JSON.stringify(picked.map((g) => g.key))) as Array<{ key: string }>
    ).map((r) => r.key),
  );
  return picked.filter((g) => !own.has(g.key));
}
