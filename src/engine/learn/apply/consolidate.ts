import type { Database } from "bun:sqlite";
import { currentItems } from "../../../sql/memory-items.ts";
import type { Candidate } from "../extract/candidate.ts";

/**
 * One memory per meaning across types. A habit read from what ran ("Runs tests with `pnpm test`",
 * a user_style) says nothing the repository's own manifest does not already say ("Tests: `pnpm test`
 * (from package.json)", a project_fact on the same key): when a candidate or a stored item of another
 * type on the same key names the same value, the habit is not stored a second time. (Same-type
 * repeats meet on their anchor in update.ts and only refresh the item's count and last-seen time.)
 */
export function dropRestated(db: Database, projectId: string, cands: readonly Candidate[]): Candidate[] {
  const habits = cands.filter((c) => c.rule.startsWith("style-habits") && c.value);
  if (habits.length === 0) return [...cands];
  const stored = currentItems(db, projectId, ["project_fact"]);
  // `pnpm lint` and `pnpm run lint` name the same script.
  const words = (s: string) => s.toLowerCase().split(/[\s`'"()]+/).filter((w) => w && w !== "run");
  const names = (c: Candidate, content: string) => {
    const have = new Set(words(content));
    return words(c.value!).every((w) => have.has(w));
  };
  return cands.filter((c) => {
    if (!habits.includes(c)) return true;
    const inBatch = cands.some((o) => o !== c && o.type !== c.type && o.key === c.key && names(c, o.content));
    const inStore = stored.some((i) => i.key === c.key && names(c, i.content));
    return !inBatch && !inStore;
  });
}
