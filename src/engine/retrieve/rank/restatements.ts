/**
 * One item per lesson in an answer: when two items selected for a task say the same thing in other
 * words (two sessions learned the same pitfall, and the update rules kept both), the later one is
 * not served once the better ranked one is (render/budget.ts skips it), so the budget goes to another
 * lesson instead of a second copy; when the better ranked one does not fit, the shorter one still can.
 *
 * Two items of the same type restate each other when they name the same thing (a code span or a path
 * in common) and the words they share carry most of the weight of the shorter one, each word
 * weighted by its rarity in the memory index (IDF): "tmp/clones" and "cloned repos" weigh much, "bun
 * run test" little. Without a shared name, two rules on one subject ("run the evaluation before
 * merging", "squash-merge after it passes") are two lessons, however many words they share. Measured with `bun run bench eval` on the packmind
 * sessions with model-made memory (issue 27): five wordings of the tmp/clones pitfall filled the
 * budget of every "commit" opening; see RESTATEMENT_OVERLAP.
 */
import type { Database } from "bun:sqlite";
import { collectionStats, documentFrequencies } from "../../../ranker/fts-stats.ts";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { itemStems } from "./scoring.ts";

/** Share of the shorter item's weight that shared words must carry. */
export const RESTATEMENT_OVERLAP = 0.45;

/** For each item of `ranked`, the better ranked items it restates (only items that restate one). */
export function restatements(db: Database, ranked: ReadonlyArray<{ item: MemoryItem }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (ranked.length < 2) return out;
  // Pairs that name the same thing first (a regex per item); words and their rarity only for those.
  const names = ranked.map((s) => namesIn(s.item.content));
  const pairs: Array<[number, number]> = [];
  for (let i = 1; i < ranked.length; i++)
    for (let k = 0; k < i; k++)
      if (ranked[k]!.item.type === ranked[i]!.item.type && [...names[i]!].some((x) => names[k]!.has(x)))
        pairs.push([i, k]);
  if (pairs.length === 0) return out;
  const stems = new Map<number, Set<string>>();
  for (const [i, k] of pairs) for (const x of [i, k]) if (!stems.has(x)) stems.set(x, itemStems(ranked[x]!.item));
  const all = new Set<string>();
  for (const set of stems.values()) for (const s of set) all.add(s);
  const n = Math.max(1, collectionStats(db, "memory_fts")?.docs ?? 1);
  const dfs = documentFrequencies(db, "memory_fts", [...all]);
  const weight = (s: string) => Math.log(1 + n / Math.max(1, dfs.get(s) ?? 1));
  const mass = new Map([...stems].map(([x, set]) => [x, [...set].reduce((m, s) => m + weight(s), 0)]));
  for (const [i, k] of pairs) {
    let shared = 0;
    for (const x of stems.get(i)!) if (stems.get(k)!.has(x)) shared += weight(x);
    if (shared < RESTATEMENT_OVERLAP * Math.min(mass.get(i)!, mass.get(k)!)) continue;
    const id = ranked[i]!.item.id;
    out.set(id, [...(out.get(id) ?? []), ranked[k]!.item.id]);
  }
  return out;
}

/** Items grouped into lessons: each group holds items that restate one another (directly or through another). */
export function lessonsOf(db: Database, items: readonly MemoryItem[]): string[][] {
  const parent = new Map(items.map((i) => [i.id, i.id]));
  const root = (id: string): string => {
    let r = id;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  for (const [id, earlier] of restatements(
    db,
    items.map((item) => ({ item })),
  ))
    for (const e of earlier) parent.set(root(id), root(e));
  const groups = new Map<string, string[]>();
  for (const i of items) groups.set(root(i.id), [...(groups.get(root(i.id)) ?? []), i.id]);
  return [...groups.values()];
}

/** The code spans and paths an item names, lower-cased, paths without a trailing slash or glob. */
function namesIn(content: string): Set<string> {
  const out = new Set<string>();
  for (const m of content.matchAll(/`([^`\n]{2,80})`/g)) out.add(m[1]!.trim().toLowerCase());
  for (const m of content.matchAll(/(?:^|[\s(])((?:[\w.-]+\/)+[\w.*-]*)/g)) {
    const p = m[1]!.replace(/[/*]+$/, "").toLowerCase();
    if (p.includes("/")) out.add(p);
  }
  return out;
}
