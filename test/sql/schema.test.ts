import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { latestVersion, MIGRATIONS, schemaVersion } from "../../src/sql/migrations.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { SHARED_DIR, tempDir } from "../helpers/sqrl.ts";

type Col = [name: string, type: string, notnull: 0 | 1, pk: 0 | 1, dflt?: string | null];

/** The reference §3 tables, transcribed column for column (name, declared type, NOT NULL, PK, default). */
const REFERENCE_DATA: Record<string, Col[]> = {
  events: [
    ["id", "TEXT", 0, 1],
    ["project_id", "TEXT", 1, 0],
    ["user_id", "TEXT", 1, 0],
    ["source_tool", "TEXT", 1, 0],
    ["session_id", "TEXT", 0, 0],
    ["timestamp", "TEXT", 1, 0],
    ["event_type", "TEXT", 1, 0],
    ["content_json", "TEXT", 1, 0],
    ["file_paths", "TEXT", 1, 0],
    ["hash", "TEXT", 1, 0],
    ["processed_at", "TEXT", 0, 0],
  ],
  episodes: [
    ["id", "TEXT", 0, 1],
    ["project_id", "TEXT", 1, 0],
    ["user_id", "TEXT", 1, 0],
    ["session_id", "TEXT", 0, 0],
    ["start_ts", "TEXT", 1, 0],
    ["end_ts", "TEXT", 1, 0],
    ["event_count", "INTEGER", 1, 0],
    ["summary", "TEXT", 1, 0],
    ["importance", "REAL", 1, 0],
    ["created_at", "TEXT", 1, 0],
  ],
  memory_items: [
    ["id", "TEXT", 0, 1],
    ["project_id", "TEXT", 1, 0],
    ["user_id", "TEXT", 0, 0],
    ["scope", "TEXT", 1, 0],
    ["type", "TEXT", 1, 0],
    ["key", "TEXT", 1, 0],
    ["content", "TEXT", 1, 0],
    ["tags", "TEXT", 1, 0],
    ["importance", "REAL", 1, 0],
    ["created_at", "TEXT", 1, 0],
    ["updated_at", "TEXT", 1, 0],
    ["source_episode_id", "TEXT", 0, 0],
    ["source_event_ids", "TEXT", 1, 0],
    ["embedding", "BLOB", 0, 0],
    ["graph_neighbors", "TEXT", 0, 0],
    ["deleted", "INTEGER", 1, 0, "0"],
  ],
  view_meta: [
    ["view_name", "TEXT", 0, 1],
    ["last_generated", "TEXT", 1, 0],
    ["events_count_at_gen", "INTEGER", 1, 0],
    ["ttl_seconds", "INTEGER", 1, 0],
  ],
};

const REFERENCE_USER: Record<string, Col[]> = {
  user_style_items: [
    ["id", "TEXT", 0, 1],
    ["user_id", "TEXT", 1, 0],
    ["key", "TEXT", 1, 0],
    ["content", "TEXT", 1, 0],
    ["tags", "TEXT", 1, 0],
    ["importance", "REAL", 1, 0],
    ["created_at", "TEXT", 1, 0],
    ["updated_at", "TEXT", 1, 0],
    ["source", "TEXT", 1, 0],
  ],
};

const REFERENCE_INDEXES: Record<string, string[]> = {
  events: ["idx_events_project_time", "idx_events_processed", "idx_events_session"],
  episodes: ["idx_episodes_project_time"],
  memory_items: ["idx_mem_project_type", "idx_mem_key", "idx_mem_updated"],
};

function columns(db: Database, table: string): Col[] {
  const rows = db.query(`PRAGMA table_info(${table})`).all() as Array<{
    name: string;
    type: string;
    notnull: number;
    pk: number;
    dflt_value: string | null;
  }>;
  return rows.map((r) => {
    const col: Col = [r.name, r.type, r.notnull as 0 | 1, (r.pk > 0 ? 1 : 0) as 0 | 1];
    if (r.dflt_value !== null) col.push(r.dflt_value);
    return col;
  });
}

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe("data.db schema", () => {
  test("reference tables exist column for column", () => {
    const db = openDatabase(join(dir.path, "data.db"), "data");
    for (const [table, expected] of Object.entries(REFERENCE_DATA)) expect(columns(db, table)).toEqual(expected);
    db.close();
  });

  test("reference indexes exist on the right tables", () => {
    const db = openDatabase(join(dir.path, "data.db"), "data");
    for (const [table, names] of Object.entries(REFERENCE_INDEXES)) {
      const have = (db.query(`PRAGMA index_list(${table})`).all() as Array<{ name: string }>).map((r) => r.name);
      for (const n of names) expect(have).toContain(n);
    }
    const cols = (name: string) =>
      (db.query(`PRAGMA index_info(${name})`).all() as Array<{ name: string }>).map((r) => r.name);
    expect(cols("idx_events_project_time")).toEqual(["project_id", "timestamp"]);
    expect(cols("idx_events_processed")).toEqual(["project_id", "processed_at"]);
    expect(cols("idx_events_session")).toEqual(["project_id", "session_id"]);
    expect(cols("idx_episodes_project_time")).toEqual(["project_id", "start_ts"]);
    expect(cols("idx_mem_project_type")).toEqual(["project_id", "type"]);
    expect(cols("idx_mem_key")).toEqual(["project_id", "key"]);
    expect(cols("idx_mem_updated")).toEqual(["project_id", "updated_at"]);
    db.close();
  });

  test("dedup: (project_id, hash) is unique", () => {
    const db = openDatabase(join(dir.path, "data.db"), "data");
    const ins = db.prepare(
      `INSERT OR IGNORE INTO events (id, project_id, user_id, source_tool, session_id, timestamp, event_type, content_json, file_paths, hash) VALUES (?, 'p', 'u', 'git', NULL, 't', 'git_commit', '{}', '[]', ?)`,
    );
    expect(ins.run("a", "h1").changes).toBe(1);
    expect(ins.run("b", "h1").changes).toBe(0);
    expect(ins.run("c", "h2").changes).toBe(1);
    db.close();
  });

  test("pragmas: WAL, foreign keys, busy timeout; file mode 0600", () => {
    const path = join(dir.path, "data.db");
    const db = openDatabase(path, "data");
    expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    expect((db.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys).toBe(1);
    expect((db.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
    db.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("sqrl additions: FTS5, lineage, trace, episode membership", () => {
    const db = openDatabase(join(dir.path, "data.db"), "data");
    const names = (
      db.query(`SELECT name FROM sqlite_master WHERE type IN ('table')`).all() as Array<{ name: string }>
    ).map((r) => r.name);
    for (const t of ["memory_fts", "episode_fts", "memory_meta", "episode_events", "episode_state", "tool_calls"])
      expect(names).toContain(t);
    db.query("INSERT INTO memory_fts (memory_id, body) VALUES ('m1', 'parse auth token')").run();
    expect(db.query("SELECT memory_id FROM memory_fts WHERE memory_fts MATCH 'tokens'").all()).toEqual([
      { memory_id: "m1" },
    ]);
    db.close();
  });
});

describe("user.db and state.db", () => {
  test("user_style_items column for column, unique (user_id, key)", () => {
    const db = openDatabase(join(dir.path, "user.db"), "user");
    expect(columns(db, "user_style_items")).toEqual(REFERENCE_USER.user_style_items!);
    const idx = db.query(`PRAGMA index_list(user_style_items)`).all() as Array<{ name: string; unique: number }>;
    expect(idx.find((i) => i.name === "idx_user_style_key")?.unique).toBe(1);
    db.close();
  });

  test("state.db holds offsets, git cursors and LLM usage", () => {
    const db = openDatabase(join(dir.path, "state.db"), "state");
    const names = (
      db.query(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>
    ).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["file_offsets", "git_cursors", "llm_usage"]));
    db.close();
  });
});

describe("migrations", () => {
  test("from an empty file to the latest version, then re-open is a no-op", () => {
    const path = join(dir.path, "data.db");
    new Database(path, { create: true }).close(); // an existing empty file
    const db = openDatabase(path, "data");
    expect(schemaVersion(db)).toBe(latestVersion("data"));
    db.query(`INSERT INTO view_meta VALUES ('pitfalls', 't', 1, 600)`).run();
    db.close();
    const again = openDatabase(path, "data");
    expect(schemaVersion(again)).toBe(latestVersion("data"));
    expect(again.query("SELECT COUNT(*) AS n FROM view_meta").get()).toEqual({ n: 1 });
    again.close();
  });

  test("read-only open of a missing file says to run sqrl init", () => {
    expect(() => openDatabase(join(dir.path, "none.db"), "data", { readonly: true })).toThrow(/sqrl init/);
  });

  test("a database from a newer sqrl is refused with a clear message", () => {
    const path = join(dir.path, "data.db");
    const raw = new Database(path, { create: true });
    raw.exec("PRAGMA user_version = 999");
    raw.close();
    expect(() => openDatabase(path, "data")).toThrow(/newer than this sqrl/);
  });
});

const referenceDoc = join(SHARED_DIR, "reference", "squirrel-architecture.md");
test.skipIf(!existsSync(referenceDoc))(
  "schema matches the CREATE TABLE statements of the reference document (needs ../shared)",
  () => {
    const doc = readFileSync(referenceDoc, "utf8");
    const ref = new Database(":memory:");
    for (const m of doc.matchAll(/```sql\n([\s\S]*?)```/g)) ref.exec(m[1]!.replace(/--[^\n]*/g, ""));
    const data = openDatabase(join(dir.path, "data.db"), "data");
    const user = openDatabase(join(dir.path, "user.db"), "user");
    for (const t of ["events", "episodes", "memory_items", "view_meta"])
      expect(columns(data, t)).toEqual(columns(ref, t));
    expect(columns(user, "user_style_items")).toEqual(columns(ref, "user_style_items"));
    data.close();
    user.close();
    ref.close();
  },
);

describe("migration 2", () => {
  test("re-keys memory_fts rows to their item's rowid and adds shared_sync", () => {
    const path = join(dir.path, "data.db");
    const raw = new Database(path, { create: true });
    raw.exec(MIGRATIONS.data[0]!);
    raw.exec("PRAGMA user_version = 1");
    const insert = raw.prepare(
      `INSERT INTO memory_items (id, project_id, user_id, scope, type, key, content, tags, importance, created_at, updated_at, source_episode_id, source_event_ids) VALUES (?, 'p', NULL, 'project', 'project_fact', ?, ?, '[]', 0.5, 't', 't', NULL, '[]')`,
    );
    insert.run("mem_a", "a", "alpha");
    insert.run("mem_b", "b", "beta");
    // v1 wrote FTS rows with their own rowids, in another order
    raw.exec(`INSERT INTO memory_fts (rowid, memory_id, body) VALUES (50, 'mem_b', 'beta'), (51, 'mem_a', 'alpha')`);
    raw.close();
    const db = openDatabase(path, "data");
    expect(schemaVersion(db)).toBe(latestVersion("data"));
    const rows = db
      .query(
        `SELECT f.rowid AS fts, m.rowid AS item, f.memory_id FROM memory_fts f JOIN memory_items m ON m.id = f.memory_id ORDER BY f.memory_id`,
      )
      .all() as Array<{ fts: number; item: number }>;
    expect(rows.length).toBe(2);
    for (const r of rows) expect(r.fts).toBe(r.item);
    expect(db.query("SELECT memory_id FROM memory_fts WHERE memory_fts MATCH 'beta'").all()).toEqual([
      { memory_id: "mem_b" },
    ]);
    expect((db.query(`SELECT name FROM sqlite_master WHERE name = 'shared_sync'`).all() as unknown[]).length).toBe(1);
    db.close();
  });
});
