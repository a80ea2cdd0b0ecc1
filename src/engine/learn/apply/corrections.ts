/**
 * A person's correction wins over every machine (SPEC: "a user's edit, forget or wrong mark is
 * final"). Whatever makes a candidate — a session's rules or the LLM, a re-read CLAUDE.md or
 * manifest, `sqrl import`, a teammate's `sqrl sync` file, `sqrl reprocess` — it meets these checks
 * before it may add, update or supersede anything on its anchor:
 * - a wording a person forgot, marked wrong or replaced by an edit on that anchor is not made again
 *   (memory_marks keeps the anchor; the marked row keeps the words). The same words confirm the
 *   person's own version when there is one;
 * - an item a person wrote (an edit: extractor `manual`) or pinned keeps its words: a candidate on it
 *   only adds evidence and last-seen time.
 * Something new on the anchor (another value, a different problem) is still learned.
 */
import type { Database } from "bun:sqlite";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { isPinned, rejectedOn, wrongMarkFor, type Rejected } from "../../../sql/memory-marks.ts";
import { getUserStyle, userStyleRejected, type UserStyleItem } from "../../../sql/user-style.ts";
import type { Candidate } from "../extract/candidate.ts";
import { sameWording } from "./wording.ts";

/** Written or pinned by a person: machines add evidence to it, never change or replace it. */
export function heldByPerson(db: Database, item: Pick<MemoryItem, "id" | "extractor">): boolean {
  return item.extractor === "manual" || isPinned(db, item.id);
}

/** The correction that holds `c` back on a project anchor, if any (the marked item it repeats). */
export function rejectedBy(db: Database, c: Candidate): Rejected | undefined {
  const wrong = wrongMarkFor(db, c);
  if (wrong) return { memory_id: wrong.memory_id, kind: "wrong", content: "" };
  return rejectedOn(db, c.type, c.key).find((r) => sameWording(c.content, r.content));
}

/** For global style (user.db): the wording forgotten or replaced by the person's edit on this key, if `c` repeats it. */
export function styleRejectedBy(
  userDb: Database,
  userId: string,
  c: Candidate,
): { id: string; current?: UserStyleItem } | undefined {
  const hit = userStyleRejected(userDb, userId, c.key).find((r) => sameWording(c.content, r.content));
  if (!hit) return undefined;
  const current = getUserStyle(userDb, userId, c.key);
  return { id: current?.id ?? hit.id, ...(current ? { current } : {}) };
}
