/**
 * Forget one memory: it leaves every view, search and task context at once, but like a supersede
 * it is kept as history (valid_to set, no successor) so `sqrl show` can still explain it. The forget
 * is recorded (a `forget` mark; for global style, the FORGET row of its history), so no extractor,
 * re-read file, import or sync makes the same memory again.
 */
import type { Database } from "bun:sqlite";
import { NotFoundError } from "../../shared/errors.ts";
import { getMemoryItem, supersedeMemoryItem } from "../../sql/memory-items.ts";
import { putMark } from "../../sql/memory-marks.ts";
import { forgetUserStyle, getUserStyleById } from "../../sql/user-style.ts";

export interface ForgetResult {
  id: string;
  scope: "project" | "user";
  key: string;
  content: string;
}

export function forgetMemory(
  projectDb: Database | null,
  userDb: Database | null,
  id: string,
  at: string,
): ForgetResult {
  if (projectDb) {
    const item = getMemoryItem(projectDb, id);
    if (item) {
      if (item.deleted)
        throw new NotFoundError(
          `Memory ${id} is no longer valid (already forgotten or superseded); \`sqrl show ${id}\` prints its history.`,
          "memory_not_valid",
        );
      projectDb
        .transaction(() => {
          supersedeMemoryItem(projectDb, id, null, null, at);
          putMark(projectDb, item, "forget", at);
        })
        .immediate();
      return { id, scope: "project", key: item.key, content: item.content };
    }
  }
  if (userDb) {
    const style = getUserStyleById(userDb, id);
    if (style) {
      userDb.transaction(() => forgetUserStyle(userDb, id, at)).immediate();
      return { id, scope: "user", key: style.key, content: style.content };
    }
  }
  throw new NotFoundError(
    `No memory with id ${id} in this project or in your global style. Ids are printed by \`sqrl search\`, \`sqrl context\` and \`sqrl view --json\`.`,
    "memory_not_found",
  );
}
