/**
 * `sqrl reprocess`: extract every closed episode of a project again under today's rules, so a store
 * built by an older extractor takes the new shape. Nothing is deleted: every item the extractors
 * made (offline or LLM) is superseded — kept as history, linked to the item that now holds its
 * anchor when there is one — and items that came from elsewhere (import, a teammate's sync file)
 * stay as they are. The recurrence gate's observations are rebuilt from the episodes themselves, and
 * every valid item gets an anchor (what it cites in the repository today) when it has none.
 * `--offline-pending` instead hands the episodes that wait for the model to the offline rules now.
 */
import type { Database } from "bun:sqlite";
import { nowIso } from "../../shared/time.ts";
import { closedUnextracted, getEpisode } from "../../sql/episodes.ts";
import { deleteLlmWait, waitingEpisodeIds } from "../../sql/llm-waits.ts";
import { supersedeMemoryItem } from "../../sql/memory-items.ts";
import { unanchoredIds } from "../../sql/memory-anchors.ts";
import { clearObservations } from "../../sql/observations.ts";
import { recordAnchors } from "./apply/record-anchors.ts";
import { consolidateSubjects } from "./apply/consolidate-subjects.ts";
import { followRenames } from "./apply/follow-renames.ts";
import { extractEpisode, resolveDeps, withProjectLock, type EngineDeps } from "./process-events.ts";

export interface ReprocessProgress {
  done: number;
  total: number;
}

export interface ReprocessResult {
  episodes: number;
  /** Items of the old extraction, now history. */
  superseded: number;
  /** Of those, how many the new extraction replaced on the same anchor (the rest were dropped by its rules). */
  replaced: number;
  /** Valid items after the run. */
  stored: number;
  /** Episodes that wait for the model (it was away): extracted when it is back. */
  waiting: number;
}

const EXTRACTED = `SELECT m.id, m.type, m.key, m.scope, m.user_id FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id
  WHERE m.project_id = ? AND m.deleted = 0 AND mm.extractor IN ('offline', 'llm')
    AND m.id NOT IN (SELECT memory_id FROM memory_marks WHERE kind = 'pin')`; // a person's pin outlives a re-extraction

interface OldRow {
  id: string;
  type: string;
  key: string;
  scope: string;
  user_id: string | null;
}

/** Retire the old extraction and reopen every closed episode for extraction (one transaction). */
function retire(db: Database, projectId: string, at: string): OldRow[] {
  return db
    .transaction(() => {
      const old = db.query(EXTRACTED).all(projectId) as OldRow[];
      for (const o of old) supersedeMemoryItem(db, o.id, null, null, at);
      clearObservations(db, projectId);
      db.query(
        `UPDATE episode_state SET extracted_at = NULL WHERE status = 'closed' AND episode_id IN (SELECT id FROM episodes WHERE project_id = ?)`,
      ).run(projectId);
      return old;
    })
    .immediate();
}

/** Link each retired item to the valid item that holds its anchor now (its lineage in `sqrl show`). */
function link(db: Database, projectId: string, old: readonly OldRow[]): number {
  const find = db.query(
    `SELECT id FROM memory_items WHERE project_id = ? AND type = ? AND key = ? AND scope = ? AND user_id IS ? AND deleted = 0 ORDER BY updated_at DESC LIMIT 1`,
  );
  const set = db.query(`UPDATE memory_meta SET superseded_by = ? WHERE memory_id = ?`);
  let replaced = 0;
  db.transaction(() => {
    for (const o of old) {
      const now = find.get(projectId, o.type, o.key, o.scope, o.user_id) as { id: string } | null;
      if (!now) continue;
      set.run(now.id, o.id);
      replaced++;
    }
  }).immediate();
  return replaced;
}

export async function reprocessProject(
  db: Database,
  projectId: string,
  deps: Partial<EngineDeps> = {},
  onProgress?: (p: ReprocessProgress) => void,
): Promise<ReprocessResult> {
  const d = await resolveDeps({ anchorSource: "reprocess", ...deps });
  return withProjectLock(projectId, async () => {
    const old = retire(db, projectId, nowIso(d.now()));
    const episodes = closedUnextracted(db, projectId);
    let manifests = d.manifests;
    let waiting = 0;
    for (const [i, ep] of episodes.entries()) {
      const ids = await extractEpisode(db, projectId, ep.user_id, ep, d, manifests);
      if (ids === null) waiting++;
      else await consolidateSubjects(db, projectId, ids, [ep.id], { llm: d.llm, ledger: d.ledger, nowMs: d.now() });
      // Episode by episode, as the daemon would have: a path the later sessions renamed is followed.
      followRenames(db, projectId, [ep.id], d.now());
      manifests = false;
      onProgress?.({ done: i + 1, total: episodes.length });
    }
    const replaced = link(db, projectId, old);
    // Items that came from elsewhere (import, sync, by hand) are anchored too, so every item is checkable.
    recordAnchors(db, projectId, unanchoredIds(db, projectId), [], "reprocess", d.now());
    const stored = (
      db.query(`SELECT COUNT(*) AS n FROM memory_items WHERE project_id = ? AND deleted = 0`).get(projectId) as {
        n: number;
      }
    ).n;
    return { episodes: episodes.length, superseded: old.length, replaced, stored, waiting };
  });
}

/**
 * The user's choice not to wait for the model: every episode waiting for it is extracted by the
 * offline rules now (each marked extracted with its wait ended, in one transaction; never twice).
 */
export async function extractPendingOffline(
  db: Database,
  projectId: string,
  deps: Partial<EngineDeps> = {},
): Promise<{ episodes: number; stored: number }> {
  const d = await resolveDeps({ ...deps, llm: null });
  return withProjectLock(projectId, async () => {
    let episodes = 0;
    let stored = 0;
    for (const id of waitingEpisodeIds(db, projectId)) {
      const ep = getEpisode(db, id);
      if (!ep || ep.extracted_at) {
        deleteLlmWait(db, id);
        continue;
      }
      const ids = await extractEpisode(db, projectId, ep.user_id, ep, d, false);
      followRenames(db, projectId, [ep.id], d.now());
      episodes++;
      stored += ids?.length ?? 0;
    }
    return { episodes, stored };
  });
}
