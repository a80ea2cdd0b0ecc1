/**
 * data.db v7: memory_meta.learned_at, when sqrl stored a memory on this machine (decay for disuse
 * counts from it, not from the evidence's age). Rows stored before count as learned when the file
 * was upgraded; new rows take the engine's clock, or their created_at when none is given.
 */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { join } from "node:path";
import { getMemoryItem, insertMemoryItem } from "../../src/sql/memory-items.ts";
import { MIGRATIONS, schemaVersion } from "../../src/sql/migrations.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { tempDir } from "../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

test("a v6 file gains learned_at: its rows count as learned at the upgrade, not at their evidence's time", () => {
  const path = join(dir.path, "old.db");
  const old = new Database(path, { create: true });
  for (const sql of MIGRATIONS.data.slice(0, 6)) old.exec(sql);
  old.exec("PRAGMA user_version = 6");
  old
    .query(
      `INSERT INTO memory_items (id, project_id, user_id, scope, type, key, content, tags, importance, created_at, updated_at, source_episode_id, source_event_ids)
       VALUES ('mem_old', 'p', NULL, 'project', 'project_fact', 'k', 'An old fact.', '[]', 0.5, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', NULL, '[]')`,
    )
    .run();
  old.query(`INSERT INTO memory_meta (memory_id, valid_from) VALUES ('mem_old', '2025-01-01T00:00:00.000Z')`).run();
  old.close();
  const before = new Date().toISOString();
  const db = openDatabase(path, "data");
  try {
    expect(schemaVersion(db)).toBe(MIGRATIONS.data.length);
    const item = getMemoryItem(db, "mem_old")!;
    expect(item.created_at).toBe("2025-01-01T00:00:00.000Z");
    expect(item.learned_at >= before.slice(0, 19)).toBe(true);
    const fresh = insertMemoryItem(db, {
      ...item,
      id: "mem_new",
      key: "k2",
      created_at: "2025-02-01T00:00:00.000Z",
      learned_at: "2026-11-27T10:00:00.000Z",
    });
    expect(fresh.learned_at).toBe("2026-11-27T10:00:00.000Z");
    const { learned_at: _l, ...noClock } = item;
    expect(insertMemoryItem(db, { ...noClock, id: "mem_default", key: "k3" }).learned_at).toBe(item.created_at);
  } finally {
    db.close();
  }
});
