/**
 * What outcome grading did to a memory (memory_outcomes), said in one sentence each: the flag with its
 * reason, and decay for disuse. `sqrl show` and the page's memory screen print these same lines.
 */
import type { Database } from "bun:sqlite";

export interface MemoryOutcome {
  flag: string | null;
  flag_reason: string | null;
  decay_steps: number;
  decayed_at: string | null;
}

export function memoryOutcome(db: Database, id: string): MemoryOutcome | undefined {
  return (
    (db
      .query(`SELECT flag, flag_reason, decay_steps, decayed_at FROM memory_outcomes WHERE memory_id = ?`)
      .get(id) as MemoryOutcome | null) ?? undefined
  );
}

export function outcomeNotes(o: MemoryOutcome | undefined): string[] {
  if (!o) return [];
  const notes: string[] = [];
  if (o.flag) notes.push(`flagged ${o.flag}: ${o.flag_reason ?? ""}`.trim());
  if (o.decay_steps > 0)
    notes.push(
      `importance decayed ${o.decay_steps}× for disuse: neither served nor seen again for a decay period (memory.decay_days) since sqrl learned it${o.decayed_at ? `; last on ${o.decayed_at.slice(0, 10)}` : ""}`,
    );
  return notes;
}
