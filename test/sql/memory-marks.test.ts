/** data.db v4: memory_marks (pin / wrong) added to an existing v3 file without touching its rows. */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MIGRATIONS, schemaVersion } from "../../src/sql/migrations.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { tempDir } from "../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe("data.db v4 migration", () => {
  test("a v3 file gains memory_marks and keeps its rows", () => {
    const path = join(dir.path, "old.db");
    const old = new Database(path, { create: true });
    for (const sql of MIGRATIONS.data.slice(0, 3)) old.exec(sql);
    old.exec("PRAGMA user_version = 3");
    old.query(`INSERT INTO view_meta VALUES ('pitfalls', 't', 1, 600)`).run();
    old.close();
    const db4 = openDatabase(path, "data");
    expect(schemaVersion(db4)).toBe(MIGRATIONS.data.length);
    const cols = (db4.query(`PRAGMA table_info(memory_marks)`).all() as Array<{ name: string }>).map((c) => c.name);
    expect(cols).toEqual([
      "memory_id",
      "kind",
      "at",
      "reason",
      "importance",
      "type",
      "key",
      "evidence_episode_ids",
      "evidence_event_ids",
    ]);
    expect(db4.query("SELECT COUNT(*) AS n FROM view_meta").get()).toEqual({ n: 1 });
    db4.close();
  });
});
