/**
 * Context signals applied after per-document scoring, both generic:
 * - neighbourhood smoothing: an item's score is blended with the scores of the items around it
 *   (for memories: items of the same episode; for a conversation: the adjacent turns), so an
 *   answer that shares no word with the query still ranks when the item next to it matches;
 * - label (field) weighting: short labels of an item (a memory's key, tags and type; a turn's
 *   speaker) that contain a query term lift the item, since a term naming what the item is about
 *   is stronger evidence than the same term somewhere in its text.
 */
import { expandCodeTokens } from "../shared/code-tokens.ts";
import type { WeightedStem } from "./bm25.ts";
import { bodyStems } from "./query.ts";

export interface Neighbour {
  id: string;
  /** How close the neighbour is, 0..1 (e.g. 1 for adjacent, 0.5 for two apart). */
  weight: number;
}

/**
 * score'(i) = score(i) + weight · Σ_j closeness(i, j) · score(j) over i's scored neighbours j.
 * Items that only appear as neighbours enter the result with their propagated score.
 */
export function smoothWithNeighbours(
  scores: ReadonlyMap<string, number>,
  neighbours: ReadonlyMap<string, readonly Neighbour[]>,
  weight: number,
): Map<string, number> {
  const out = new Map(scores);
  if (weight <= 0) return out;
  for (const [id, score] of scores) {
    if (score <= 0) continue;
    for (const n of neighbours.get(id) ?? []) {
      if (n.id === id || n.weight <= 0) continue;
      out.set(n.id, (out.get(n.id) ?? 0) + weight * n.weight * score);
    }
  }
  return out;
}

/**
 * Adds weight · best (the best score in the list) to every scored item whose label contains a
 * query term, so labelled items move up as a block while keeping their order among themselves.
 */
export function boostLabels(
  scores: ReadonlyMap<string, number>,
  labels: ReadonlyMap<string, string>,
  query: readonly WeightedStem[],
  weight: number,
): { scores: Map<string, number>; labelled: Set<string> } {
  const out = new Map(scores);
  const labelled = new Set<string>();
  if (weight <= 0 || labels.size === 0 || query.length === 0) return { scores: out, labelled };
  let best = 0;
  for (const v of scores.values()) best = Math.max(best, v);
  if (best <= 0) return { scores: out, labelled };
  const stemCache = new Map<string, Set<string>>();
  for (const [id, label] of labels) {
    if (!out.has(id)) continue;
    let stems = stemCache.get(label);
    if (!stems) {
      stems = new Set(bodyStems(expandCodeTokens(label)));
      stemCache.set(label, stems);
    }
    if (query.some((q) => stems.has(q.stem))) {
      out.set(id, out.get(id)! + weight * best);
      labelled.add(id);
    }
  }
  return { scores: out, labelled };
}
