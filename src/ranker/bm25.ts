/**
 * BM25 with a coordination factor, computed in JS over the candidate bodies FTS5 returned.
 * FTS5's bm25() has fixed k1 = 1.2, b = 0.75; short memory-like documents rank better with a lower
 * length penalty and earlier saturation (see bench/locomo.ts), and the coordination factor
 * (share of the query's IDF mass a document covers) keeps an item that matches one common word
 * many times below one that matches the query's rare words.
 */
import { bodyStems, stemCached } from "./query.ts";

export interface Bm25Params {
  k1: number;
  b: number;
  /** Exponent on the covered share of query IDF (0 = plain BM25). */
  coordination: number;
}

export interface WeightedStem {
  stem: string;
  /** Query weight (1 for typed terms, less for feedback terms). */
  weight: number;
  idf: number;
}

export interface DocTerms {
  /** Number of tokens in the body (FTS5's document length). */
  length: number;
  /** Term frequency of each query stem the body contains. */
  tf: Map<string, number>;
}

/** BM25's idf, as FTS5 computes it but kept strictly positive for very common terms. */
export function idf(docs: number, df: number): number {
  const d = Math.max(df, 0);
  return Math.max(1e-6, Math.log(1 + (docs - d + 0.5) / (d + 0.5)));
}

/** Query stems plus a cheap pre-filter: the first two letters of each (Porter rewrites endings only). */
export interface StemMatcher {
  stems: ReadonlySet<string>;
  heads: ReadonlySet<number>;
  /** ASCII heads as a table: `c0 * 128 + c1` for two-letter heads, `c0` alone for one-letter stems. */
  asciiPairs: Uint8Array;
  asciiSingles: Uint8Array;
  /** word → its stem when that stem is a query stem, "" otherwise (per query). */
  memo: Map<string, string>;
}

export function stemMatcher(stems: Iterable<string>): StemMatcher {
  const set = new Set(stems);
  const heads = new Set<number>();
  const asciiPairs = new Uint8Array(128 * 128);
  const asciiSingles = new Uint8Array(128);
  for (const s of set) {
    heads.add(head(s));
    const c0 = s.charCodeAt(0);
    if (s.length < 2) {
      if (c0 < 128) asciiSingles[c0] = 1;
    } else {
      const c1 = s.charCodeAt(1);
      if (c0 < 128 && c1 < 128) asciiPairs[c0 * 128 + c1] = 1;
    }
  }
  return { stems: set, heads, asciiPairs, asciiSingles, memo: new Map() };
}

/** First two UTF-16 units (one for one-letter stems: a word like `aed` stems to `a`). */
function head(word: string): number {
  return word.length < 2 ? word.charCodeAt(0) : word.charCodeAt(0) * 65536 + word.charCodeAt(1);
}

/**
 * Length and query-term frequencies of a body. Bodies written by expandCodeTokens are lower-case
 * ASCII words separated by single spaces (fast path: one scan, no split); anything else goes
 * through the unicode61 rules of bodyStems. Only words that start like a query stem are stemmed
 * (and each distinct word once per query).
 */
export function docTerms(body: string, matcher: StemMatcher): DocTerms {
  const tf = new Map<string, number>();
  const n = body.length;
  let length = 0;
  let start = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? body.charCodeAt(i) : 32;
    if (c === 32) {
      if (start >= 0) {
        length++;
        const c0 = body.charCodeAt(start);
        if (
          matcher.asciiSingles[c0] === 1 ||
          (i - start >= 2 && matcher.asciiPairs[c0 * 128 + body.charCodeAt(start + 1)] === 1)
        ) {
          const word = body.slice(start, i);
          let stem = matcher.memo.get(word);
          if (stem === undefined) {
            const s = stemCached(word);
            stem = matcher.stems.has(s) ? s : "";
            matcher.memo.set(word, stem);
          }
          if (stem !== "") tf.set(stem, (tf.get(stem) ?? 0) + 1);
        }
        start = -1;
      }
    } else if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else {
      return unicodeDocTerms(body, matcher);
    }
  }
  return { length, tf };
}

function unicodeDocTerms(body: string, matcher: StemMatcher): DocTerms {
  const tf = new Map<string, number>();
  const stems = bodyStems(body);
  for (const stem of stems) if (matcher.stems.has(stem)) tf.set(stem, (tf.get(stem) ?? 0) + 1);
  return { length: stems.length, tf };
}

export interface DocScore {
  score: number;
  /** Query stems the document contains. */
  matched: string[];
  length: number;
}

/** BM25 · coverage^coordination of one document; also the query stems it matched. */
export function scoreDoc(doc: DocTerms, query: readonly WeightedStem[], avgLength: number, p: Bm25Params): DocScore {
  let sum = 0;
  let covered = 0;
  let total = 0;
  const matched: string[] = [];
  const norm = 1 - p.b + p.b * (avgLength > 0 ? doc.length / avgLength : 1);
  for (const q of query) {
    const w = q.weight * q.idf;
    total += w;
    const f = doc.tf.get(q.stem);
    if (!f) continue;
    covered += w;
    matched.push(q.stem);
    sum += (w * (f * (p.k1 + 1))) / (f + p.k1 * norm);
  }
  if (sum === 0 || total === 0) return { score: 0, matched, length: doc.length };
  return { score: sum * (covered / total) ** p.coordination, matched, length: doc.length };
}
