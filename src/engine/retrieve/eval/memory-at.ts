/**
 * The project's memory as it stood at a past moment, rebuilt from the validity times and lineage
 * sqrl keeps (no re-extraction): an item stood at time t when it was valid from before t and not yet
 * superseded or forgotten at t. The rebuild lives in a private in-memory database with the project's
 * own schema and full-text index, so the real task-context code runs on it unchanged and the
 * project's data.db is only read. Times only move forward: `advance(t)` adds the items that became
 * valid and removes the ones that ended since the last call.
 *
 * What a later session did to an item still standing at t is taken back where the rows say it:
 * evidence episodes that started at or after t are dropped (with the 0.05 importance each
 * confirmation added), and its last-seen time is capped at t; as time moves on, the evidence an item
 * gathered meanwhile comes back (so how many sessions met it is what it was at t). The episodes that
 * started before t are copied in too, for the ranker's count of sessions (rank/recurring.ts).
 * Manifest facts read "now" are valid from when they were read, so a replay of older sessions does
 * not see them.
 */
import { Database } from "bun:sqlite";
import { isoToMs, nowIso } from "../../../shared/time.ts";
import { insertEpisode, type Episode } from "../../../sql/episodes.ts";
import {
  insertMemoryItem,
  rowToItem,
  supersedeMemoryItem,
  updateMemoryItem,
  type MemoryItem,
} from "../../../sql/memory-items.ts";
import { migrate } from "../../../sql/migrations.ts";

const SELECT_ALL = `SELECT m.*, mm.confidence, mm.file_paths, mm.evidence_episode_ids, mm.valid_from, mm.valid_to,
  mm.superseded_by, mm.superseded_by_episode, mm.decision, mm.extractor, mm.learned_at
  FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id WHERE m.project_id = ? ORDER BY mm.valid_from, m.id`;

/** Every version of every project item, with its validity interval in ms (end: Infinity while valid). */
export interface VersionedItem {
  item: MemoryItem;
  fromMs: number;
  toMs: number;
}

export function allVersions(
  db: Database,
  projectId: string,
  /** When each episode ended (ms): an item replaced by an episode's items ended with that episode. */
  episodeEnd: ReadonlyMap<string, number> = new Map(),
): VersionedItem[] {
  return (db.query(SELECT_ALL).all(projectId) as Array<Record<string, unknown>>).map((r) => {
    const item = rowToItem(r);
    const fromMs = isoToMs(item.valid_from) || isoToMs(item.created_at);
    // A row marked deleted without an end time ended at its last update at the latest.
    let toMs = item.valid_to ? isoToMs(item.valid_to) : item.deleted ? isoToMs(item.updated_at) : Infinity;
    // Replaced by a later episode's item: it ended when that episode did, though the pass that
    // replaced it may have run later (a backfill processes weeks of sessions at once, so valid_to is
    // the time of the pass, and two wordings of one lesson would seem to stand side by side).
    const by = item.superseded_by_episode ? episodeEnd.get(item.superseded_by_episode) : undefined;
    // (By its own episode: it lost the pass that episode's items brought, so it never stood.)
    if (by !== undefined && by >= fromMs) toMs = Math.min(toMs, by);
    return { item, fromMs, toMs };
  });
}

export class MemoryAt {
  readonly db: Database;
  private readonly pending: VersionedItem[];
  private readonly standing = new Map<string, VersionedItem>();
  /** Evidence episodes each standing row holds now. */
  private readonly evidenceHeld = new Map<string, number>();
  private readonly pendingEpisodes: Episode[];
  private atMs = -Infinity;

  constructor(
    private readonly projectId: string,
    versions: readonly VersionedItem[],
    /** Start time of each episode (ms), to take back evidence a later episode added. */
    private readonly episodeStart: ReadonlyMap<string, number>,
    /** Items a person pinned, with when (ms). */
    private readonly pins: ReadonlyMap<string, number> = new Map(),
    /** The project's episodes, copied in once they have started. */
    episodes: readonly Episode[] = [],
  ) {
    this.db = new Database(":memory:", { strict: true });
    migrate(this.db, "data");
    this.pending = [...versions].sort((a, b) => a.fromMs - b.fromMs);
    this.pendingEpisodes = [...episodes].sort((a, b) => a.start_ts.localeCompare(b.start_ts));
  }

  /** Ids of the items standing now. */
  ids(): Set<string> {
    return new Set(this.standing.keys());
  }

  /** Move the rebuilt memory forward to `ms` (items valid from strictly before it, not ended by it). */
  advance(ms: number): void {
    if (ms < this.atMs) throw new Error("MemoryAt only moves forward in time");
    this.atMs = ms;
    const at = nowIso(ms);
    this.db
      .transaction(() => {
        for (const [id, v] of this.standing)
          if (v.toMs <= ms) {
            supersedeMemoryItem(this.db, id, null, null, at);
            this.db.query("DELETE FROM memory_marks WHERE memory_id = ?").run(id);
            this.standing.delete(id);
            this.evidenceHeld.delete(id);
          } else {
            // Confirmations since the last step, while it stood.
            const now = this.asOf(v.item, ms);
            if (now.evidence_episode_ids.length !== this.evidenceHeld.get(id)) {
              updateMemoryItem(this.db, id, {
                evidence_episode_ids: now.evidence_episode_ids,
                importance: now.importance,
                updated_at: now.updated_at,
              });
              this.evidenceHeld.set(id, now.evidence_episode_ids.length);
            }
          }
        while (this.pendingEpisodes.length > 0 && isoToMs(this.pendingEpisodes[0]!.start_ts) < ms)
          insertEpisode(this.db, { ...this.pendingEpisodes.shift()!, project_id: this.projectId });
        while (this.pending.length > 0 && this.pending[0]!.fromMs < ms) {
          const v = this.pending.shift()!;
          if (v.toMs <= ms) continue;
          const row = this.asOf(v.item, ms);
          insertMemoryItem(this.db, row);
          this.evidenceHeld.set(v.item.id, row.evidence_episode_ids.length);
          const pinnedAt = this.pins.get(v.item.id);
          if (pinnedAt !== undefined && pinnedAt < ms) this.pin(v.item);
          this.standing.set(v.item.id, v);
        }
        // Pins made since the last step on items already standing.
        for (const [id, pinnedAt] of this.pins)
          if (pinnedAt < ms && this.standing.has(id)) this.pin(this.standing.get(id)!.item);
      })
      .immediate();
  }

  private pin(item: MemoryItem): void {
    this.db
      .query(
        `INSERT OR IGNORE INTO memory_marks (memory_id, kind, at, importance, type, key) VALUES (?, 'pin', ?, ?, ?, ?)`,
      )
      .run(item.id, item.created_at, item.importance, item.type, item.key);
  }

  /** The row as it stood at `ms`: later evidence, the importance it brought and a later last-seen time taken back. */
  private asOf(item: MemoryItem, ms: number): MemoryItem {
    const before = item.evidence_episode_ids.filter((e) => (this.episodeStart.get(e) ?? -Infinity) < ms);
    const later = item.evidence_episode_ids.length - before.length;
    const capped =
      isoToMs(item.updated_at) >= ms ? nowIso(Math.max(isoToMs(item.created_at), ms - 1)) : item.updated_at;
    return {
      ...item,
      project_id: this.projectId,
      evidence_episode_ids: before,
      importance: Math.max(0.05, Math.round((item.importance - 0.05 * later) * 100) / 100),
      updated_at: capped,
    };
  }

  close(): void {
    this.db.close();
  }
}
