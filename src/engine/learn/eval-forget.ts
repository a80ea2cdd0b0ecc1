/**
 * The page's "forget the ones never needed" (sqrl ui, issue 27): the memories the project's last
 * `sqrl eval` served to sessions that never needed them, as they stand now, and the action that
 * forgets those a person confirmed. Each goes the way `sqrl forget` does (learn/forget.ts: history
 * kept, a forget mark so nothing learns it again); an item a person pinned or edited is never taken
 * (apply/corrections.ts: a correction is not undone by a machine), nor one no longer valid or not in
 * the eval's list. After a forget the stored eval is marked stale: its figures describe the memory before.
 */
import type { Database } from "bun:sqlite";
import type { EvalForgetResponse, NeverNeededItem, StoredEval } from "../../shared/eval-report.ts";
import { markLastEvalStale } from "../../shared/last-eval.ts";
import { plural } from "../../shared/plural.ts";
import { nowIso } from "../../shared/time.ts";
import { getMemoryItem } from "../../sql/memory-items.ts";
import { heldByPerson } from "./apply/corrections.ts";
import { forgetMemory } from "./forget.ts";

/** What the last eval served and no session needed, most served first, each with its state today. Read only. */
export function neverNeeded(db: Database, stored: StoredEval): NeverNeededItem[] {
  return stored.report.items
    .filter((i) => i.served > 0 && i.served_needed === 0 && i.needed === 0)
    .sort((a, b) => b.served - a.served || a.memory_id.localeCompare(b.memory_id))
    .map((i) => {
      const item = getMemoryItem(db, i.memory_id);
      const state = !item || item.deleted ? "gone" : heldByPerson(db, item) ? "held" : "valid";
      return { memory_id: i.memory_id, type: i.type, key: i.key, content: i.content, served: i.served, state };
    });
}

/**
 * Forget the confirmed `ids` that the last eval found never needed and that are still valid and not
 * held by a person; the others are kept with the reason. One transaction. Marks the eval stale when
 * anything was forgotten.
 */
export function forgetNeverNeeded(
  db: Database,
  projectRoot: string,
  stored: StoredEval,
  ids: readonly string[],
  nowMs = Date.now(),
): EvalForgetResponse {
  const listed = new Map(neverNeeded(db, stored).map((i) => [i.memory_id, i]));
  const at = nowIso(nowMs);
  const forgotten: string[] = [];
  const kept: EvalForgetResponse["kept"] = [];
  db.transaction(() => {
    for (const id of new Set(ids)) {
      const entry = listed.get(id);
      if (!entry) kept.push({ memory_id: id, reason: "not_in_eval" });
      else if (entry.state !== "valid") kept.push({ memory_id: id, reason: entry.state });
      else {
        forgetMemory(db, null, id, at);
        forgotten.push(id);
      }
    }
  }).immediate();
  const stale =
    forgotten.length > 0 &&
    markLastEvalStale(
      projectRoot,
      `${plural(forgotten.length, "memory")} never needed forgotten since; run the eval again for today's figures`,
      at,
    );
  return { type: "eval_forget", forgotten, kept, stale };
}
