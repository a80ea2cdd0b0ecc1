/**
 * The relevance formula applied to items: 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path,
 * explained.
 */
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { cosine, itemVectors, queryVector } from "./vectors.ts";
import type { RetrievalContext } from "../retrieval-context.ts";
import type { LexicalCandidate } from "./candidates.ts";
import {
  buildQueryModel,
  combine,
  explain,
  itemStems,
  pathMatch,
  recencyScore,
  stemsOfWords,
  termCoverage,
  type QueryModel,
  type ScoreParts,
} from "./scoring.ts";

/** One item scored by the relevance formula, with its explanation. */
export interface Scored {
  item: MemoryItem;
  parts: ScoreParts;
  score: number;
  reason: string;
  /** IDF-weighted term coverage (0..1), before any blend. */
  coverage: number;
  cosine?: number;
}

export interface ScoreOptions {
  /** The task description or search query. */
  text: string;
  /** Active files (task context) or scope paths (search bias, pitfalls). */
  paths: readonly string[];
  /**
   * `absolute` (task context, pitfalls): similarity is the term coverage, comparable across queries, so
   * a threshold can abstain. `relative` (search): coverage blended with the ranker's BM25 relative to
   * the best hit — better ordering, no abstention.
   */
  similarity: "absolute" | "relative";
  /** The ranker's view of the lexical candidates: score (relative mode) and matched words (coverage). */
  lexical?: ReadonlyMap<string, LexicalCandidate>;
  /** Precomputed query vector (hybrid), when the caller already embedded the query. */
  queryVec?: Float32Array;
  model?: QueryModel;
}

/** Score items by 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path_match, best first. */
export async function scoreItems(
  ctx: RetrievalContext,
  items: readonly MemoryItem[],
  opts: ScoreOptions,
): Promise<Scored[]> {
  const model = opts.model ?? buildQueryModel(ctx.db, opts.text);
  let qv = opts.queryVec;
  let vectors: Map<string, Float32Array> | undefined;
  if (ctx.embedder && items.length > 0) {
    qv ??= await queryVector(ctx.embedder, opts.text);
    if (qv) vectors = await itemVectors(ctx.db, ctx.projectId, items, ctx.embedder);
  }
  let maxLex = 0;
  if (opts.lexical) for (const v of opts.lexical.values()) maxLex = Math.max(maxLex, v.score);
  const out: Scored[] = [];
  for (const item of items) {
    const hit = opts.lexical?.get(item.id);
    // The ranker already tokenized its hits: use the words it found instead of re-reading the item.
    const cov = termCoverage(model, hit?.matched ? stemsOfWords(hit.matched) : itemStems(item));
    let lexSim = cov.score;
    if (opts.similarity === "relative") {
      const bm = hit?.score ?? 0;
      lexSim = 0.5 * cov.score + 0.5 * (maxLex > 0 ? Math.max(0, bm) / maxLex : 0);
    }
    const vec = vectors?.get(item.id);
    const cos = vec && qv ? Math.max(0, cosine(qv, vec)) : undefined;
    const similarity = cos === undefined ? lexSim : 0.5 * lexSim + 0.5 * cos;
    const pm = pathMatch(item.file_paths, opts.paths);
    const parts: ScoreParts = {
      similarity,
      importance: clamp01(item.importance),
      recency: recencyScore(item.updated_at, ctx.nowMs),
      path: pm.score,
    };
    const score = combine(parts);
    const why = { matchedTerms: cov.matched, matchedPaths: pm.matched, ...(cos === undefined ? {} : { cosine: cos }) };
    let reason: string | undefined;
    out.push({
      item,
      parts,
      score,
      // Built on first read: only the items actually shown need one.
      get reason() {
        reason ??= explain(item, parts, why, ctx.nowMs);
        return reason;
      },
      coverage: cov.score,
      ...(cos === undefined ? {} : { cosine: cos }),
    });
  }
  out.sort(
    (a, b) =>
      b.score - a.score || b.item.updated_at.localeCompare(a.item.updated_at) || a.item.id.localeCompare(b.item.id),
  );
  return out;
}

export function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
