/**
 * Corrections a person makes to a project's memory (from `sqrl ui`, through the engine API): edit
 * (a new version supersedes the old, history kept), forget, pin (always eligible, importance fixed)
 * and mark wrong (forgotten, the reason kept). Edits, forgets and wrong marks are recorded as marks, so
 * no extractor, re-read file, import or sync undoes them (apply/corrections.ts).
 * Each is one transaction; none destroys a row. Global style items (ust_…, in user.db) can be edited
 * and forgotten; pins and wrong marks live in the project's data.db and apply to project memory.
 */
import type { Database } from "bun:sqlite";
import type { EditRequest, MemoryActionResponse, PinRequest, WrongRequest } from "../../shared/api.ts";
import { NotFoundError, SqrlError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { nowIso } from "../../shared/time.ts";
import {
  getMemoryItem,
  replaceWithVersion,
  supersedeMemoryItem,
  updateMemoryItem,
  type MemoryItem,
} from "../../sql/memory-items.ts";
import { isPinned, marksOf, putMark, removeMark } from "../../sql/memory-marks.ts";
import { getUserStyleById, supersedeUserStyle } from "../../sql/user-style.ts";
import { forgetMemory } from "./forget.ts";

function styleItem(userDb: Database | undefined, id: string) {
  return userDb ? getUserStyleById(userDb, id) : undefined;
}

function projectOnly(id: string, what: string): never {
  throw new SqrlError(
    "not_supported",
    `${what} applies to project memory; ${id} is a global style item (user.db): edit or forget it instead.`,
    { status: 400, exitCode: 2 },
  );
}
function validItem(db: Database, projectId: string, id: string): MemoryItem {
  const item = getMemoryItem(db, id);
  if (!item || item.project_id !== projectId)
    throw new NotFoundError(
      `No memory ${id} in ${projectId}. Ids are listed on the Memories page and by \`sqrl search\`.`,
      "memory_not_found",
    );
  if (item.deleted)
    throw new NotFoundError(
      `Memory ${id} is no longer valid (forgotten or superseded${item.superseded_by ? ` by ${item.superseded_by}` : ""}); act on its current version.`,
      "memory_not_valid",
    );
  return item;
}

export function editMemory(
  db: Database,
  req: EditRequest,
  nowMs = Date.now(),
  userDb?: Database,
): MemoryActionResponse {
  const at = nowIso(nowMs);
  const style = styleItem(userDb, req.memory_id);
  if (style && userDb) {
    const next = {
      ...style,
      id: newId("ust", nowMs),
      content: req.content,
      tags: req.tags ?? style.tags,
      created_at: at,
      updated_at: at,
      source: "manual",
      confidence: 1,
    };
    userDb.transaction(() => supersedeUserStyle(userDb, style.id, next, "UPDATE_EXISTING", null, at)).immediate();
    return { type: "memory_action", action: "edit", memory_id: next.id, previous_id: style.id, status: "active" };
  }
  return db
    .transaction(() => {
      const old = validItem(db, req.project_id, req.memory_id);
      const next = replaceWithVersion(db, old, newId("mem", nowMs), at, {
        content: req.content,
        tags: req.tags ?? old.tags,
        created_at: at,
        learned_at: at,
        updated_at: at,
        confidence: 1,
        decision: "UPDATE_EXISTING",
        extractor: "manual",
      });
      // The replaced wording is the person's rejection: no extractor makes it again (apply/corrections.ts).
      putMark(db, old, "edit", at);
      // A pin follows the memory to its new version.
      const pin = marksOf(db, old.id).find((m) => m.kind === "pin");
      if (pin) {
        removeMark(db, old.id, "pin");
        putMark(db, next, "pin", at, { importance: pin.importance ?? next.importance });
      }
      return {
        type: "memory_action" as const,
        action: "edit" as const,
        memory_id: next.id,
        previous_id: old.id,
        status: "active" as const,
      };
    })
    .immediate();
}

export function pinMemory(db: Database, req: PinRequest, nowMs = Date.now(), userDb?: Database): MemoryActionResponse {
  const at = nowIso(nowMs);
  if (styleItem(userDb, req.memory_id)) projectOnly(req.memory_id, "Pin");
  return db
    .transaction(() => {
      const item = validItem(db, req.project_id, req.memory_id);
      if (req.pinned) {
        // Through updateMemoryItem so the search index (and the caches keyed on it) see the change.
        const updated = updateMemoryItem(db, item.id, { importance: req.importance, updated_at: item.updated_at });
        putMark(db, updated, "pin", at, { importance: req.importance });
      } else if (isPinned(db, item.id)) {
        removeMark(db, item.id, "pin");
        updateMemoryItem(db, item.id, { updated_at: item.updated_at });
      }
      return {
        type: "memory_action" as const,
        action: req.pinned ? ("pin" as const) : ("unpin" as const),
        memory_id: item.id,
        previous_id: null,
        status: "active" as const,
      };
    })
    .immediate();
}

export function forgetProjectMemory(
  db: Database,
  projectId: string,
  id: string,
  nowMs = Date.now(),
  userDb?: Database,
): MemoryActionResponse {
  if (styleItem(userDb, id)) {
    forgetMemory(null, userDb!, id, nowIso(nowMs));
    return { type: "memory_action", action: "forget", memory_id: id, previous_id: null, status: "forgotten" };
  }
  validItem(db, projectId, id);
  forgetMemory(db, null, id, nowIso(nowMs));
  removeMark(db, id, "pin");
  return { type: "memory_action", action: "forget", memory_id: id, previous_id: null, status: "forgotten" };
}

export function markWrong(
  db: Database,
  req: WrongRequest,
  nowMs = Date.now(),
  userDb?: Database,
): MemoryActionResponse {
  const at = nowIso(nowMs);
  if (styleItem(userDb, req.memory_id)) projectOnly(req.memory_id, "Mark wrong");
  return db
    .transaction(() => {
      const item = validItem(db, req.project_id, req.memory_id);
      supersedeMemoryItem(db, item.id, null, null, at);
      removeMark(db, item.id, "pin");
      putMark(db, item, "wrong", at, { reason: req.reason });
      return {
        type: "memory_action" as const,
        action: "wrong" as const,
        memory_id: item.id,
        previous_id: null,
        status: "forgotten" as const,
      };
    })
    .immediate();
}
