import type { Database } from "bun:sqlite";
import { expandCodeTokens } from "../../shared/code-tokens.ts";

/**
 * Lexical ranking over an FTS5 table `(id UNINDEXED, body)` whose bodies were written with
 * expandCodeTokens. First version: OR of the query's expanded terms, FTS5 bm25.
 * (The ranker module owns query processing; search, task context and the LoCoMo bench share it.)
 */
export interface LexicalHit {
  id: string;
  /** Higher is better (negated bm25). */
  score: number;
}

export interface LexicalOptions {
  /** FTS5 table name, e.g. `memory_fts` or `episode_fts`. */
  table: string;
  /** Name of the id column of that table, e.g. `memory_id`. */
  idColumn: string;
  limit: number;
}

/** The query's terms as FTS5 will see them (expanded, de-duplicated). */
export function queryTerms(query: string): string[] {
  return [...new Set(expandCodeTokens(query).split(" ").filter((t) => t.length > 1))];
}

export function rankLexical(db: Database, query: string, opts: LexicalOptions): LexicalHit[] {
  const terms = queryTerms(query);
  if (terms.length === 0) return [];
  const match = terms.map((t) => `"${t.replace(/"/g, "")}"`).join(" OR ");
  const rows = db
    .query(`SELECT ${opts.idColumn} AS id, bm25(${opts.table}) AS rank FROM ${opts.table} WHERE ${opts.table} MATCH ? ORDER BY rank LIMIT ?`)
    .all(match, opts.limit) as Array<{ id: string; rank: number }>;
  return rows.map((r) => ({ id: r.id, score: -r.rank }));
}
