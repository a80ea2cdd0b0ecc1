/**
 * Moved memories rewritten where memory is written (issue 15 item 2: "update the anchor"). Reads
 * serve a moved memory with today's names without writing; this pass, run by the engine after each
 * batch but only when HEAD has changed since its last run, makes the change lasting: a memory whose
 * file was renamed or whose identifier was renamed or moved gets a new version with today's paths
 * and names (the old one kept as history, as every update is) and an anchor recorded afresh. A memory
 * a person wrote or pinned keeps their words (it is still served with today's names).
 */
import type { Database } from "bun:sqlite";
import { newId } from "../../../shared/ids.ts";
import { log } from "../../../shared/log.ts";
import { nowIso } from "../../../shared/time.ts";
import { putAnchorJson } from "../../../sql/memory-anchors.ts";
import { pinnedIds } from "../../../sql/memory-marks.ts";
import { currentItems, replaceWithVersion } from "../../../sql/memory-items.ts";
import { Anchor, buildAnchor } from "../../anchors/anchor.ts";
import { applyMoves, checkAnchor } from "../../anchors/check.ts";
import { RepoState } from "../../anchors/repo-state.ts";

/** HEAD each project was last followed at (per engine process). */
const followedAt = new Map<string, string>();

/** Rewrite the project's moved memories; returns the ids of their new versions. */
export function followMoves(db: Database, root: string, nowMs: number, opts: { force?: boolean } = {}): string[] {
  try {
    const repo = new RepoState(root);
    if (!repo.isGit || !repo.head?.sha) return [];
    if (!opts.force && followedAt.get(root) === repo.head.sha) return [];
    followedAt.set(root, repo.head.sha);
    const rows = db.query(`SELECT memory_id, anchor_json FROM memory_anchors`).all() as Array<{
      memory_id: string;
      anchor_json: string;
    }>;
    const anchors = new Map(rows.map((r) => [r.memory_id, r.anchor_json]));
    const at = nowIso(nowMs);
    const made: string[] = [];
    const pinned = pinnedIds(db);
    db.transaction(() => {
      for (const item of currentItems(db, root)) {
        const json = anchors.get(item.id);
        if (!json || pinned.has(item.id) || item.extractor === "manual") continue;
        const parsed = Anchor.safeParse(JSON.parse(json));
        if (!parsed.success) continue;
        const res = checkAnchor(parsed.data, repo);
        if (res.status !== "moved") continue;
        const files = new Map(res.moves.filter((m) => m.kind === "file").map((m) => [m.from, m.to]));
        const content = applyMoves(item.content, res.moves);
        const file_paths = [...new Set(item.file_paths.map((p) => files.get(p) ?? p))];
        const next = replaceWithVersion(db, item, newId("mem", nowMs), at, {
          content,
          file_paths,
          decision: "UPDATE_EXISTING",
        });
        putAnchorJson(
          db,
          next.id,
          JSON.stringify(buildAnchor(root, { content, file_paths, commit: parsed.data.commit }, "moved", at)),
          at,
        );
        made.push(next.id);
      }
    }).immediate();
    return made;
  } catch (err) {
    log.warn(`could not follow moved code for memories of ${root}: ${(err as Error).message}`);
    return [];
  }
}
