/**
 * data.db v5 (issue 15): a v4 file gains memory_anchors and memory_outcomes and keeps its rows; an
 * anchor row goes with its memory.
 */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { join } from "node:path";
import { latestVersion, MIGRATIONS, schemaVersion } from "../../src/sql/migrations.ts";
import { anchorJsonOf, putAnchorJson, unanchoredIds } from "../../src/sql/memory-anchors.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { tempDir } from "../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

test("a v4 file gains memory_anchors and memory_outcomes and keeps its rows", () => {
  const path = join(dir.path, "old.db");
  const old = new Database(path, { create: true });
  for (const sql of MIGRATIONS.data.slice(0, 4)) old.exec(sql);
  old.exec("PRAGMA user_version = 4");
  old
    .query(`INSERT INTO memory_items (id, project_id, user_id, scope, type, key, content, tags, importance, created_at, updated_at, source_episode_id, source_event_ids)
    VALUES ('mem_1', '/p', NULL, 'project', 'project_fact', 'k', 'Uses \`createPool\` in src/db/pool.ts.', '[]', 0.5, 't', 't', NULL, '[]')`)
    .run();
  old.query(`INSERT INTO memory_meta (memory_id, valid_from) VALUES ('mem_1', 't')`).run();
  old.close();
  const db = openDatabase(path, "data");
  try {
    expect(schemaVersion(db)).toBe(latestVersion("data"));
    const cols = (t: string) =>
      (db.query(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name);
    expect(cols("memory_anchors")).toEqual(["memory_id", "anchor_json", "recorded_at"]);
    expect(cols("memory_outcomes")).toEqual([
      "memory_id",
      "flag",
      "flag_reason",
      "flagged_at",
      "decay_steps",
      "decayed_at",
    ]);
    expect(unanchoredIds(db, "/p")).toEqual(["mem_1"]);
    putAnchorJson(db, "mem_1", '{"files":[]}', "t2");
    expect(anchorJsonOf(db, ["mem_1", "mem_x"])).toEqual(new Map([["mem_1", '{"files":[]}']]));
    expect(unanchoredIds(db, "/p")).toEqual([]);
    db.exec("PRAGMA foreign_keys = ON");
    db.query("DELETE FROM memory_meta").run();
    db.query("DELETE FROM memory_items").run();
    expect(anchorJsonOf(db, ["mem_1"]).size).toBe(0);
  } finally {
    db.close();
  }
});
