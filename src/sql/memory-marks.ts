/**
 * `memory_marks` (data.db v4): what a person said about a memory. A pin keeps an item always
 * eligible with a fixed importance; a wrong mark keeps the reason and the evidence it was made from,
 * so the extractor does not make the same memory again from the same evidence. A forget mark (on the
 * forgotten item) and an edit mark (on the version an edit replaced) record the wording a person
 * rejected on its anchor (type, key): no extractor, import or sync makes that wording again.
 */
import type { Database } from "bun:sqlite";
import type { MemoryItem } from "./memory-items.ts";

export type MarkKind = "pin" | "wrong" | "forget" | "edit";

/** Marks that reject what the marked item said (its anchor and wording). */
export const REJECTING: readonly MarkKind[] = ["wrong", "forget", "edit"];

export interface MemoryMark {
  memory_id: string;
  kind: MarkKind;
  at: string;
  reason: string;
  importance: number | null;
  type: string;
  key: string;
  evidence_episode_ids: string[];
  evidence_event_ids: string[];
}

interface Row {
  memory_id: string;
  kind: MarkKind;
  at: string;
  reason: string;
  importance: number | null;
  type: string;
  key: string;
  evidence_episode_ids: string;
  evidence_event_ids: string;
}

function fromRow(r: Row): MemoryMark {
  return {
    ...r,
    evidence_episode_ids: JSON.parse(r.evidence_episode_ids) as string[],
    evidence_event_ids: JSON.parse(r.evidence_event_ids) as string[],
  };
}

/** Everything a memory was made from: its source episode, the episodes that confirmed it, its events. */
function evidenceOf(item: MemoryItem): { episodes: string[]; events: string[] } {
  const episodes = [
    ...new Set(
      [item.source_episode_id, ...item.evidence_episode_ids].filter((x): x is string => typeof x === "string"),
    ),
  ];
  return { episodes, events: [...new Set(item.source_event_ids)] };
}

/** Add or replace a mark on `item` (call inside a transaction together with the change it records). */
export function putMark(
  db: Database,
  item: MemoryItem,
  kind: MarkKind,
  at: string,
  opts: { reason?: string; importance?: number } = {},
): MemoryMark {
  const ev = evidenceOf(item);
  db.query(
    `INSERT OR REPLACE INTO memory_marks (memory_id, kind, at, reason, importance, type, key, evidence_episode_ids, evidence_event_ids)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    item.id,
    kind,
    at,
    opts.reason ?? "",
    opts.importance ?? null,
    item.type,
    item.key,
    JSON.stringify(ev.episodes),
    JSON.stringify(ev.events),
  );
  return marksOf(db, item.id).find((m) => m.kind === kind)!;
}

export function removeMark(db: Database, memoryId: string, kind: MarkKind): boolean {
  return db.query(`DELETE FROM memory_marks WHERE memory_id = ? AND kind = ?`).run(memoryId, kind).changes > 0;
}

export function marksOf(db: Database, memoryId: string): MemoryMark[] {
  return (db.query(`SELECT * FROM memory_marks WHERE memory_id = ? ORDER BY kind`).all(memoryId) as Row[]).map(fromRow);
}

/** Ids of pinned items (few: people pin by hand). */
export function pinnedIds(db: Database): Set<string> {
  return new Set(
    (db.query(`SELECT memory_id FROM memory_marks WHERE kind = 'pin'`).all() as Array<{ memory_id: string }>).map(
      (r) => r.memory_id,
    ),
  );
}

export function isPinned(db: Database, memoryId: string): boolean {
  return db.query(`SELECT 1 FROM memory_marks WHERE memory_id = ? AND kind = 'pin'`).get(memoryId) !== null;
}

/**
 * The wrong mark that holds back a new candidate, if any: same anchor (type, key) and made from the
 * same evidence (its episode, or one of its events), whatever its words. From other evidence, the
 * same words are held back too (rejectedOn, apply/corrections.ts); something else on the key is not.
 */
export function wrongMarkFor(
  db: Database,
  c: { type: string; key: string; source_episode_id: string; source_event_ids: readonly string[] },
): MemoryMark | undefined {
  const rows = db
    .query(`SELECT * FROM memory_marks WHERE kind = 'wrong' AND type = ? AND key = ?`)
    .all(c.type, c.key) as Row[];
  const events = new Set(c.source_event_ids);
  for (const row of rows) {
    const m = fromRow(row);
    if (m.evidence_episode_ids.includes(c.source_episode_id) || m.evidence_event_ids.some((e) => events.has(e)))
      return m;
  }
  return undefined;
}

/** A wording a person rejected on an anchor: the marked item's content, and how it was rejected. */
export interface Rejected {
  memory_id: string;
  kind: MarkKind;
  content: string;
}

/** What people rejected on the anchor (type, key): forgotten, marked wrong, or replaced by their edit. */
export function rejectedOn(db: Database, type: string, key: string): Rejected[] {
  return db
    .query(
      `SELECT k.memory_id, k.kind, m.content FROM memory_marks k JOIN memory_items m ON m.id = k.memory_id
       WHERE k.kind IN ('wrong', 'forget', 'edit') AND k.type = ? AND k.key = ? ORDER BY k.at`,
    )
    .all(type, key) as Rejected[];
}
