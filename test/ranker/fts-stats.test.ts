import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { assertIdentifier, collectionStats, documentFrequencies, readVarint } from "../../src/ranker/fts-stats.ts";

describe("FTS5 statistics", () => {
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE docs_fts USING fts5(doc_id UNINDEXED, body, tokenize = 'porter unicode61')");
  const bodies = ["alpha beta", "alpha gamma delta", "painting paints", "gamma", "alpha alpha alpha epsilon zeta"];
  bodies.forEach((b, i) => db.query("INSERT INTO docs_fts (doc_id, body) VALUES (?, ?)").run(`d${i}`, b));
  db.query("DELETE FROM docs_fts WHERE doc_id = 'd3'").run();
  afterAll(() => db.close());

  test("row count and average length come from the index's averages record", () => {
    const stats = collectionStats(db, "docs_fts");
    expect(stats).not.toBeNull();
    expect(stats!.docs).toBe(4);
    expect(stats!.avgLength).toBeCloseTo((2 + 3 + 2 + 5) / 4, 10);
  });

  test("document frequencies are per stem, as the index stores them", () => {
    const df = documentFrequencies(db, "docs_fts", ["alpha", "gamma", "paint", "missing"]);
    expect(Object.fromEntries(df)).toEqual({ alpha: 3, gamma: 1, paint: 1, missing: 0 });
  });

  test("varints decode like SQLite's (1, 2 and 9 bytes)", () => {
    expect(readVarint(new Uint8Array([0x05]), 0)).toEqual({ value: 5, next: 1 });
    expect(readVarint(new Uint8Array([0x81, 0x00]), 0)).toEqual({ value: 128, next: 2 });
    const nine = new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x07]);
    expect(readVarint(nine, 0)).toEqual({ value: 7, next: 9 });
  });

  test("table names that are not plain identifiers are refused", () => {
    expect(() => assertIdentifier("memory_fts; DROP TABLE x", "table")).toThrow(/plain SQL identifier/);
    expect(() => collectionStats(db, "docs fts")).toThrow(/plain SQL identifier/);
  });
});
