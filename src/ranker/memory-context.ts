/**
 * Context callbacks for ranking memory_fts: an item's label is its key, tags and type; its
 * neighbours are the other scored items extracted from the same episode (closeness 0.5 each).
 * Only primary-key look-ups of the ids the ranker already holds: no scan, whatever the store size.
 *
 *   rankLexical(db, query, { table: "memory_fts", idColumn: "memory_id", limit, ...memoryContext(db) })
 */
import type { Database } from "bun:sqlite";
import type { Neighbour } from "./context.ts";
import type { LexicalOptions } from "./lexical.ts";

export const SAME_EPISODE_CLOSENESS = 0.5;

interface ItemRow {
  id: string;
  key: string;
  tags: string;
  type: string;
  episode: string | null;
}

function rowsFor(db: Database, ids: readonly string[]): ItemRow[] {
  if (ids.length === 0) return [];
  return db
    .query(
      `SELECT id, key, tags, type, source_episode_id AS episode FROM memory_items
       WHERE id IN (SELECT value FROM json_each(?)) AND deleted = 0`,
    )
    .all(JSON.stringify(ids)) as ItemRow[];
}

function tagsText(raw: string): string {
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === "string").join(" ") : "";
  } catch {
    return "";
  }
}

export function memoryNeighbours(db: Database, ids: readonly string[]): Map<string, Neighbour[]> {
  const byEpisode = new Map<string, string[]>();
  for (const r of rowsFor(db, ids)) {
    if (!r.episode) continue;
    byEpisode.set(r.episode, [...(byEpisode.get(r.episode) ?? []), r.id]);
  }
  const out = new Map<string, Neighbour[]>();
  for (const members of byEpisode.values()) {
    if (members.length < 2) continue;
    for (const id of members)
      out.set(
        id,
        members.filter((m) => m !== id).map((m) => ({ id: m, weight: SAME_EPISODE_CLOSENESS })),
      );
  }
  return out;
}

export function memoryLabels(db: Database, ids: readonly string[]): Map<string, string> {
  return new Map(rowsFor(db, ids).map((r) => [r.id, `${r.key} ${tagsText(r.tags)} ${r.type}`]));
}

export function memoryContext(db: Database): Pick<LexicalOptions, "neighbours" | "labels"> {
  return {
    neighbours: (ids) => memoryNeighbours(db, ids),
    labels: (ids) => memoryLabels(db, ids),
  };
}
