/**
 * Pseudo-relevance feedback (RM3-style): the best-scored documents of a first pass vote for the
 * words they use, weighted by how much of each document the word is, the document's score and
 * the word's rarity; the top words not already in the query are added with a small weight.
 */
import { idf } from "./bm25.ts";
import { foldToken, stemCached } from "./query.ts";
import { isStopWord } from "./stop-words.ts";

export interface FeedbackParams {
  /** Documents that vote. */
  docs: number;
  /** Words added. */
  terms: number;
  /** Share of the final query weight given to the added words (RM3's 1 − λ). */
  weight: number;
}

export interface FeedbackDoc {
  body: string;
  score: number;
}

export interface ExpansionTerm {
  /** A surface form seen in the documents (what FTS5 is asked to match). */
  word: string;
  stem: string;
  /** Query weight relative to a typed term (typed terms weigh 1). */
  weight: number;
}

export function expansionTerms(
  top: readonly FeedbackDoc[],
  queryStems: ReadonlySet<string>,
  params: FeedbackParams,
  docFreq: (stems: string[]) => Map<string, number>,
  docs: number,
): ExpansionTerm[] {
  const voters = top.slice(0, params.docs).filter((d) => d.score > 0);
  if (voters.length === 0 || params.terms <= 0 || params.weight <= 0) return [];
  const best = voters[0]!.score;
  const mass = new Map<string, number>();
  const surface = new Map<string, string>();
  for (const d of voters) {
    const words = d.body
      .split(/[^\p{L}\p{N}\p{M}]+/u)
      .filter((w) => w.length > 0)
      .map(foldToken);
    if (words.length === 0) continue;
    for (const w of words) {
      if (w.length < 3 || isStopWord(w) || /^\d+$/.test(w)) continue;
      const s = stemCached(w);
      if (queryStems.has(s)) continue;
      mass.set(s, (mass.get(s) ?? 0) + d.score / best / words.length);
      if (!surface.has(s)) surface.set(s, w);
    }
  }
  const df = docFreq([...mass.keys()]);
  const ranked = [...mass]
    .map(([s, m]) => ({ stem: s, value: m * idf(docs, df.get(s) ?? 0) }))
    .filter((t) => (df.get(t.stem) ?? 0) > 1)
    .sort((a, b) => b.value - a.value)
    .slice(0, params.terms);
  const total = ranked.reduce((a, t) => a + t.value, 0);
  if (total <= 0) return [];
  const typed = Math.max(1, queryStems.size);
  // Typed terms keep weight 1 each (λ share); added terms share (1 − λ) of the same total.
  const scale = ((params.weight / (1 - params.weight)) * typed) / total;
  return ranked.map((t) => ({ word: surface.get(t.stem)!, stem: t.stem, weight: t.value * scale }));
}
