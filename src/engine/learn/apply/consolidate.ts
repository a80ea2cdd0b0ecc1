/**
 * One memory per meaning across types. A habit read from what ran ("Runs tests with `pnpm test`",
 * a user_style) says nothing the repository's own manifest does not already say ("Tests: `pnpm test`
 * (from package.json)", a project_fact on the same key), nor what a recipe that runs the same command
 * says: when a candidate or a stored item of another type names the same command, the habit is not
 * stored a second time (a reviewer counted these as repeats). (Same-type
 * repeats meet on their anchor in update.ts and only refresh the item's count and last-seen time.)
 */
import type { Database } from "bun:sqlite";
import { currentItems, supersedeMemoryItem } from "../../../sql/memory-items.ts";
import { pinnedIds } from "../../../sql/memory-marks.ts";
import type { Candidate } from "../extract/candidate.ts";

export function dropRestated(db: Database, projectId: string, cands: readonly Candidate[]): Candidate[] {
  const habits = cands.filter((c) => c.rule.startsWith("style-habits") && c.value);
  if (habits.length === 0) return [...cands];
  const stored = currentItems(db, projectId, ["project_fact", "recipe"]);
  // `pnpm lint` and `pnpm run lint` name the same script.
  const words = (s: string) =>
    s
      .toLowerCase()
      .split(/[\s`'"()]+/)
      .filter((w) => w && w !== "run");
  const names = (c: Candidate, content: string) => {
    const have = new Set(words(content));
    return words(c.value!).every((w) => have.has(w));
  };
  return cands.filter((c) => {
    if (!habits.includes(c)) return true;
    // The same key in another type, or a recipe that already runs the command (`bun run test` in
    // "To verify a change: `bun run lint` → `bun run test`").
    const covers = (type: string, key: string, content: string) =>
      ((type === "recipe" && c.key.endsWith("_command")) || key === c.key) && type !== c.type && names(c, content);
    const inBatch = cands.some((o) => o !== c && covers(o.type, o.key, o.content));
    const inStore = stored.some((i) => covers(i.type, i.key, i.content));
    return !inBatch && !inStore;
  });
}

/**
 * The same the other way round, over the store: once a recipe runs a command, a habit item that
 * only names that command ("Runs tests with `bun run test`", stored by an earlier episode) is
 * superseded by the recipe (kept as history, linked to it). Call inside the write transaction.
 */
export function retireCoveredHabits(db: Database, projectId: string, episodeId: string, at: string): number {
  const items = currentItems(db, projectId, ["user_style", "recipe"]);
  const recipes = items.filter((i) => i.type === "recipe");
  const pinned = pinnedIds(db);
  let n = 0;
  for (const h of items) {
    if (pinned.has(h.id) || h.extractor === "manual") continue; // a person's version stays
    // Only a habit read from what ran: a stated preference ("Always run the tests with …") says more than the command.
    if (
      h.type !== "user_style" ||
      !h.key.endsWith("_command") ||
      !h.tags.includes("tooling") ||
      h.tags.includes("preference")
    )
      continue;
    const cmd = /`([^`]+)`/.exec(h.content)?.[1];
    const by = cmd ? recipes.find((r) => r.content.includes(`\`${cmd}\``)) : undefined;
    if (!by) continue;
    supersedeMemoryItem(db, h.id, by.id, episodeId, at);
    n++;
  }
  return n;
}
