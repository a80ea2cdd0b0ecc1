/**
 * Lexical ranking over an FTS5 table `(id UNINDEXED, body)` whose bodies were written with
 * expandCodeTokens and `tokenize = 'porter unicode61'` (memory_fts, episode_fts, the LoCoMo bench).
 *
 * 1. Query processing (query.ts): code-aware split, stop words out, one term per Porter stem.
 * 2. FTS5 proposes a candidate pool (pool.ts): OR of the terms ordered by its bm25() in a small
 *    store; in a large one, the rows covering the most query IDF (doclists read as rowids, no
 *    per-row bm25), so the cost stays bounded at 100,000 items.
 * 3. The pool is rescored in JS with BM25 (k1, b of our choice) × coverage^coordination, using the
 *    index's own statistics (row count, average length, document frequencies).
 * 4. Optional pseudo-relevance feedback adds a few words from the best documents (second pass).
 * 5. Optional context: neighbourhood smoothing (items around an item: same episode, adjacent turn)
 *    and label weighting (a query term in an item's key/tags/speaker).
 * Search, task context and bench/locomo.ts all call this, so a change here is measured there.
 */
import type { Database } from "bun:sqlite";
import {
  docTerms,
  idf,
  scoreDoc,
  stemMatcher,
  type Bm25Params,
  type DocScore,
  type StemMatcher,
  type WeightedStem,
} from "./bm25.ts";
import { boostLabels, smoothWithNeighbours, type Neighbour } from "./context.ts";
import { expansionTerms, type FeedbackParams } from "./feedback.ts";
import { assertIdentifier, collectionStats, documentFrequencies } from "./fts-stats.ts";
import { fetchPool } from "./pool.ts";
import type { Candidate, PoolSource, PoolStrategy, PoolTerm } from "./types.ts";
import { analyzeQuery } from "./query.ts";

export type { Neighbour } from "./context.ts";
export type { PoolStrategy } from "./types.ts";

export interface LexicalHit {
  id: string;
  /** Higher is better. */
  score: number;
  /** Query words the item itself contains (empty when it ranks only through its neighbours). */
  matched: string[];
}

export interface LexicalOptions {
  /** FTS5 table name, e.g. `memory_fts` or `episode_fts`. */
  table: string;
  /** Name of the id column of that table, e.g. `memory_id`. */
  idColumn: string;
  limit: number;
  /** Indexed text column (default `body`). */
  bodyColumn?: string;
  /** Candidates FTS5 proposes for rescoring (default max(limit, RANKER_DEFAULTS.pool)). */
  pool?: number;
  /** How the pool is proposed (default `auto`; see pool.ts). */
  poolStrategy?: PoolStrategy;
  /** BM25 and coordination parameters (default RANKER_DEFAULTS.bm25). */
  bm25?: Bm25Params;
  /** Pseudo-relevance feedback; `false` or absent = off. */
  feedback?: FeedbackParams | false;
  /** Neighbours (with closeness 0..1) of the given ids; enables neighbourhood smoothing. */
  neighbours?: (ids: readonly string[]) => ReadonlyMap<string, readonly Neighbour[]>;
  /** Weight of the neighbours' scores (default RANKER_DEFAULTS.neighbourWeight). */
  neighbourWeight?: number;
  /** Short labels of the given ids (key, tags, speaker); enables label weighting. */
  labels?: (ids: readonly string[]) => ReadonlyMap<string, string>;
  /** Lift of an item whose label holds a query term, relative to the best score (default RANKER_DEFAULTS.labelWeight). */
  labelWeight?: number;
  /**
   * Exponent of the length prior (length / average length)^γ applied to the final score: longer
   * items state more facts (default RANKER_DEFAULTS.lengthPrior; 0 = off). Items that rank only
   * through their neighbours count as average length.
   */
  lengthPrior?: number;
}

/**
 * Parameters chosen on bench/locomo.ts (see docs/benchmarks.md for the step-by-step gains).
 * `feedback` holds the settings used when a caller turns feedback on; it is off by default
 * (no gain on LoCoMo for two to three times the cost).
 */
export const RANKER_DEFAULTS = {
  bm25: { k1: 0.9, b: 0.4, coordination: 1 } satisfies Bm25Params,
  neighbourWeight: 0.5,
  labelWeight: 0.5,
  lengthPrior: 0.1,
  feedback: { docs: 5, terms: 10, weight: 0.2 } satisfies FeedbackParams,
  pool: 100,
} as const;

/** The query's terms as FTS5 will see them (expanded, stop words removed, one per stem). */
export function queryTerms(query: string): string[] {
  return analyzeQuery(query).map((t) => t.word);
}

/**
 * The terms that propose candidates. A term found in more than half of the rows (a name every
 * turn carries, `project` in every memory) only costs time there — a row that matches nothing else
 * scores near zero — so in a store of some size it is left to the rescoring, unless no other term
 * of the query occurs at all.
 */
function poolTerms(terms: readonly WeightedTerm[], docs: number): PoolTerm[] {
  const all = terms.map((t) => ({ word: t.word, stem: t.stem, weight: t.weight * t.idf, df: t.df }));
  if (docs < COMMON_MIN_DOCS) return all;
  const informative = all.filter((t) => t.df > 0 && t.df <= docs * COMMON_SHARE);
  return informative.length > 0 ? informative : all;
}

const COMMON_SHARE = 0.5;
const COMMON_MIN_DOCS = 50;

interface WeightedTerm extends WeightedStem {
  word: string;
  df: number;
}

function poolSource(opts: LexicalOptions): PoolSource {
  const bodyColumn = opts.bodyColumn ?? "body";
  assertIdentifier(bodyColumn, "body column");
  return { table: opts.table, idColumn: opts.idColumn, bodyColumn };
}

interface Pass {
  candidates: Candidate[];
  query: WeightedStem[];
  scored: Map<string, DocScore>;
}

export function rankLexical(db: Database, query: string, opts: LexicalOptions): LexicalHit[] {
  assertIdentifier(opts.table, "table");
  assertIdentifier(opts.idColumn, "id column");
  const terms = analyzeQuery(query);
  if (terms.length === 0 || opts.limit <= 0) return [];
  const pool = Math.max(opts.limit, opts.pool ?? RANKER_DEFAULTS.pool);
  const params = opts.bm25 ?? RANKER_DEFAULTS.bm25;
  const stats = collectionStats(db, opts.table);
  const df = documentFrequencies(
    db,
    opts.table,
    terms.map((t) => t.stem),
  );
  const weighted: WeightedTerm[] = terms.map((t) => {
    const n = df.get(t.stem) ?? 0;
    return { word: t.word, stem: t.stem, weight: 1, df: n, idf: idf(stats?.docs ?? 0, n) };
  });
  // One matcher for the whole query: the pool reads term sets with it, the rescoring reuses them.
  const matcher = stemMatcher(terms.map((t) => t.stem));
  const src = { ...poolSource(opts), matcher };
  const candidates = fetchPool(db, src, poolTerms(weighted, stats?.docs ?? 0), pool, opts.poolStrategy);
  if (candidates.length === 0) return [];
  const docs = stats?.docs ?? candidates.length;
  const avgLength = stats?.avgLength ?? 0;

  const typedQuery = terms.map((t) => ({ stem: t.stem, weight: 1, idf: idf(docs, df.get(t.stem) ?? 0) }));
  let pass: Pass = {
    candidates,
    query: typedQuery,
    scored: scorePool(candidates, typedQuery, avgLength, params, matcher),
  };
  if (opts.feedback) pass = withFeedback(db, opts, opts.feedback, pass, { docs, avgLength, pool, params });

  const own = new Map<string, number>();
  for (const [id, s] of pass.scored) if (s.score > 0) own.set(id, s.score);
  let final = new Map(own);
  if (opts.neighbours) {
    final = smoothWithNeighbours(
      own,
      opts.neighbours([...own.keys()]),
      opts.neighbourWeight ?? RANKER_DEFAULTS.neighbourWeight,
    );
  }
  if (opts.labels) {
    final = boostLabels(
      final,
      opts.labels([...final.keys()]),
      typedQuery,
      opts.labelWeight ?? RANKER_DEFAULTS.labelWeight,
    ).scores;
  }
  applyLengthPrior(final, pass.scored, avgLength, opts.lengthPrior ?? RANKER_DEFAULTS.lengthPrior);

  const words = new Map(terms.map((t) => [t.stem, t.word]));
  return [...final]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, opts.limit)
    .map(([id, score]) => ({
      id,
      score,
      matched: (pass.scored.get(id)?.matched ?? []).flatMap((s) => (words.has(s) ? [words.get(s)!] : [])),
    }));
}

/** RM3 second pass: add the feedback words, fetch what they match, rescore everything. */
function withFeedback(
  db: Database,
  opts: LexicalOptions,
  feedback: FeedbackParams,
  first: Pass,
  ctx: { docs: number; avgLength: number; pool: number; params: Bm25Params },
): Pass {
  const ranked = first.candidates
    .map((c) => ({ body: c.body, score: first.scored.get(c.id)?.score ?? 0 }))
    .sort((a, b) => b.score - a.score);
  const typed = new Set(first.query.map((q) => q.stem));
  const extra = expansionTerms(ranked, typed, feedback, (s) => documentFrequencies(db, opts.table, s), ctx.docs);
  if (extra.length === 0) return first;
  const extraDf = documentFrequencies(
    db,
    opts.table,
    extra.map((e) => e.stem),
  );
  const query = [
    ...first.query,
    ...extra.map((e) => ({ stem: e.stem, weight: e.weight, idf: idf(ctx.docs, extraDf.get(e.stem) ?? 0) })),
  ];
  const seen = new Set(first.candidates.map((c) => c.id));
  const extraTerms = extra.map((e) => ({
    word: e.word,
    stem: e.stem,
    weight: e.weight * idf(ctx.docs, extraDf.get(e.stem) ?? 0),
    df: extraDf.get(e.stem) ?? 0,
  }));
  const fresh = fetchPool(db, poolSource(opts), extraTerms, ctx.pool, opts.poolStrategy).filter((c) => !seen.has(c.id));
  const candidates = [...first.candidates, ...fresh];
  return { candidates, query, scored: scorePool(candidates, query, ctx.avgLength, ctx.params) };
}

/** Multiply by (length / average)^γ; items known only through neighbours count as average. */
function applyLengthPrior(
  scores: Map<string, number>,
  scored: ReadonlyMap<string, DocScore>,
  avgLength: number,
  gamma: number,
): void {
  if (gamma === 0 || avgLength <= 0) return;
  for (const [id, score] of scores) {
    const length = scored.get(id)?.length;
    if (length !== undefined && length > 0) scores.set(id, score * (length / avgLength) ** gamma);
  }
}

function scorePool(
  candidates: readonly Candidate[],
  query: readonly WeightedStem[],
  avgLength: number,
  params: Bm25Params,
  matcher: StemMatcher = stemMatcher(query.map((q) => q.stem)),
): Map<string, DocScore> {
  const out = new Map<string, DocScore>();
  for (const c of candidates) {
    if (out.has(c.id)) continue;
    const doc = c.terms?.matcher === matcher ? c.terms.doc : docTerms(c.body ?? "", matcher);
    out.set(c.id, scoreDoc(doc, query, avgLength, params));
  }
  return out;
}
