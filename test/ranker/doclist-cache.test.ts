/**
 * doclist-cache.ts: rowid lists are served from memory only while the index is unchanged — a write
 * on this connection or a commit on another one reads them again — and the cache stays bounded.
 */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cachedDoclist, parseRowids } from "../../src/ranker/doclist-cache.ts";
import { rankLexical } from "../../src/ranker/lexical.ts";
import { tempDir } from "../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
let db: Database;
beforeEach(() => {
  dir = tempDir();
  db = new Database(join(dir.path, "fts.db"), { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, tokenize = 'porter unicode61')");
  const ins = db.query("INSERT INTO docs (doc_id, body) VALUES (?, ?)");
  for (let i = 0; i < 40; i++) ins.run(`d${i}`, i % 2 === 0 ? `token refresh ${i}` : `queue worker ${i}`);
});
afterEach(() => {
  db.close();
  dir.cleanup();
});

const list = () =>
  db.query<{ ids: string | null }, [string]>("SELECT group_concat(rowid) AS ids FROM docs WHERE docs MATCH ?");

describe("cachedDoclist", () => {
  test("a second read of the same match comes from memory", () => {
    let reads = 0;
    const read = () => (reads++, parseRowids(list().get('"token"')?.ids));
    const first = cachedDoclist(db, "docs", '"token"', read);
    const second = cachedDoclist(db, "docs", '"token"', read);
    expect(reads).toBe(1);
    expect(second).toBe(first);
    expect(first.length).toBe(20);
  });

  test("a write on this connection reads the list again", () => {
    let reads = 0;
    const read = () => (reads++, parseRowids(list().get('"token"')?.ids));
    cachedDoclist(db, "docs", '"token"', read);
    db.query("INSERT INTO docs (doc_id, body) VALUES ('new', 'token rotation')").run();
    const after = cachedDoclist(db, "docs", '"token"', read);
    expect(reads).toBe(2);
    expect(after.length).toBe(21);
  });

  test("a commit on another connection reads the list again", () => {
    let reads = 0;
    const read = () => (reads++, parseRowids(list().get('"queue"')?.ids));
    cachedDoclist(db, "docs", '"queue"', read);
    const other = new Database(join(dir.path, "fts.db"));
    other.query("INSERT INTO docs (doc_id, body) VALUES ('other', 'queue backlog')").run();
    other.close();
    const after = cachedDoclist(db, "docs", '"queue"', read);
    expect(reads).toBe(2);
    expect(after.length).toBe(21);
  });

  test("writes to other tables (events, traces) by other processes keep the lists", () => {
    db.exec("CREATE TABLE events (x TEXT)");
    let reads = 0;
    const read = () => (reads++, parseRowids(list().get('"queue"')?.ids));
    cachedDoclist(db, "docs", '"queue"', read);
    const other = new Database(join(dir.path, "fts.db"));
    other.query("INSERT INTO events (x) VALUES ('a tool call')").run();
    other.close();
    cachedDoclist(db, "docs", '"queue"', read);
    expect(reads).toBe(1);
  });

  test("the least recently used lists go first once the bound is passed", () => {
    let reads = 0;
    const read = (n: number) => () => (reads++, new Float64Array(n));
    cachedDoclist(db, "docs", "a", read(6), 10);
    cachedDoclist(db, "docs", "b", read(3), 10);
    cachedDoclist(db, "docs", "a", read(6), 10); // a used again: b is now the oldest
    cachedDoclist(db, "docs", "c", read(4), 10); // 13 > 10: b goes, a stays
    expect(reads).toBe(3);
    cachedDoclist(db, "docs", "a", read(6), 10);
    expect(reads).toBe(3);
    cachedDoclist(db, "docs", "b", read(3), 10);
    expect(reads).toBe(4);
  });

  test("the ranker sees a new row right after it is written", () => {
    const before = rankLexical(db, "token rotation", {
      table: "docs",
      idColumn: "doc_id",
      limit: 5,
      poolStrategy: "coverage",
    }).map((h) => h.id);
    expect(before).not.toContain("fresh");
    db.query("INSERT INTO docs (doc_id, body) VALUES ('fresh', 'token rotation policy')").run();
    const after = rankLexical(db, "token rotation", {
      table: "docs",
      idColumn: "doc_id",
      limit: 5,
      poolStrategy: "coverage",
    }).map((h) => h.id);
    expect(after[0]).toBe("fresh");
  });
});

test("parseRowids reads group_concat output", () => {
  expect([...parseRowids("12,345,-7")]).toEqual([12, 345, -7]);
  expect([...parseRowids("")]).toEqual([]);
  expect([...parseRowids(null)]).toEqual([]);
  expect([...parseRowids("5")]).toEqual([5]);
});
