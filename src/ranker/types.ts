/**
 * Shapes shared by the candidate pool (pool.ts) and its helpers (fts-bodies.ts, term-masks.ts):
 * kept apart so that the helpers need not import the pool that imports them.
 */
import type { DocTerms, StemMatcher } from "./bm25.ts";

/** How the pool is proposed (see pool.ts). */
export type PoolStrategy = "auto" | "rank" | "coverage";

export interface PoolTerm {
  /** Surface word FTS5 is asked to match. */
  word: string;
  /** Its stem, as the index stores it. */
  stem: string;
  /** Weight of the term in the coverage mass (its idf × query weight). */
  weight: number;
  /** Rows containing the term (document frequency). */
  df: number;
}

export interface PoolSource {
  table: string;
  idColumn: string;
  bodyColumn: string;
  /**
   * The rescoring's matcher (every query stem). When given, bodies the pool tokenizes to learn
   * their exact term sets carry the result, and the rescoring does not tokenize them again.
   */
  matcher?: StemMatcher;
}

export interface Candidate {
  id: string;
  body: string;
  /** Terms of the body, counted with `matcher` (see PoolSource.matcher). */
  terms?: { matcher: StemMatcher; doc: DocTerms };
}
