import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docTerms, idf, stemMatcher } from "../../src/ranker/bm25.ts";
import { documentFrequencies } from "../../src/ranker/fts-stats.ts";
import { rankLexical } from "../../src/ranker/lexical.ts";
import {
  chooseStrategy,
  fetchPool,
  POOL_CAP_FACTOR,
  RANK_ROW_BUDGET,
  type PoolSource,
  type PoolTerm,
} from "../../src/ranker/pool.ts";
import { analyzeQuery, bodyStems } from "../../src/ranker/query.ts";
import { expandCodeTokens } from "../../src/shared/code-tokens.ts";
import { rng } from "../../bench/retrieval-corpus.ts";

const open: Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

const SRC: PoolSource = { table: "memory_fts", idColumn: "memory_id", bodyColumn: "body" };

function table(
  ddl = "CREATE VIRTUAL TABLE memory_fts USING fts5(memory_id UNINDEXED, body, tokenize = 'porter unicode61')",
): Database {
  const db = new Database(":memory:");
  db.exec(ddl);
  open.push(db);
  return db;
}

/** Words drawn with Zipf weights: a few in most rows, most in few — like a real store. */
const VOCAB = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}x`);
function zipfWord(r: () => number): string {
  const u = r();
  return VOCAB[Math.min(VOCAB.length - 1, Math.floor(VOCAB.length ** u) - 1)]!;
}

function zipfCorpus(rows: number, seed: number): { db: Database; bodies: Map<string, string> } {
  const db = table();
  const r = rng(seed);
  const bodies = new Map<string, string>();
  const insert = db.query("INSERT INTO memory_fts (memory_id, body) VALUES (?, ?)");
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const body = Array.from({ length: 6 + Math.floor(r() * 20) }, () => zipfWord(r)).join(" ");
      bodies.set(`d${i}`, body);
      insert.run(`d${i}`, body);
    }
  })();
  return { db, bodies };
}

function poolTerms(db: Database, query: string, docs: number): PoolTerm[] {
  const terms = analyzeQuery(query);
  const df = documentFrequencies(
    db,
    "memory_fts",
    terms.map((t) => t.stem),
  );
  return terms.map((t) => ({
    word: t.word,
    stem: t.stem,
    df: df.get(t.stem) ?? 0,
    weight: idf(docs, df.get(t.stem) ?? 0),
  }));
}

/** Covered mass of every row, computed the slow way from its stems. */
function exhaustiveMass(
  stemsOf: ReadonlyMap<string, ReadonlySet<string>>,
  terms: readonly PoolTerm[],
): Map<string, number> {
  const out = new Map<string, number>();
  const query = terms.map((t) => ({ stem: t.stem, weight: t.weight }));
  for (const [id, stems] of stemsOf) {
    let m = 0;
    for (const t of query) if (stems.has(t.stem)) m += t.weight;
    if (m > 0) out.set(id, m);
  }
  return out;
}

describe("candidate pool", () => {
  test("coverage pool holds every row that covers more of the query than the pool-th best (exhaustive check)", () => {
    const rows = 4000;
    const { db, bodies } = zipfCorpus(rows, 11);
    const stemsOf = new Map([...bodies].map(([id, body]) => [id, new Set(bodyStems(body))]));
    const r = rng(99);
    let separable = 0;
    for (let q = 0; q < 60; q++) {
      const query = Array.from({ length: 2 + Math.floor(r() * 7) }, () => zipfWord(r)).join(" ");
      const terms = poolTerms(db, query, rows);
      const pool = 20 + Math.floor(r() * 60);
      const got = new Set(fetchPool(db, SRC, terms, pool, "coverage").map((c) => c.id));
      const exhaustive = exhaustiveMass(stemsOf, terms);
      const masses = [...exhaustive.values()].sort((a, b) => b - a);
      const cut = masses[Math.min(pool, masses.length) - 1] ?? 0;
      for (const [id, m] of exhaustive) if (m > cut + 1e-9) expect(got.has(id)).toBe(true);
      expect(got.size).toBeGreaterThanOrEqual(Math.min(pool, masses.length));
      expect(got.size).toBeLessThanOrEqual(pool * POOL_CAP_FACTOR);
      if (got.size > pool) separable++;
    }
    // Some queries ended early with the rows that could still make the pool (more than `pool` of them).
    expect(separable).toBeGreaterThan(0);
  });

  test("in a small store `auto` keeps FTS5's own ranking; above the row budget it reads doclists", () => {
    const small: PoolTerm[] = [
      { word: "a", stem: "a", weight: 1, df: 10 },
      { word: "b", stem: "b", weight: 1, df: 20 },
    ];
    const large: PoolTerm[] = [
      { word: "a", stem: "a", weight: 1, df: RANK_ROW_BUDGET },
      { word: "b", stem: "b", weight: 1, df: 1 },
    ];
    expect(chooseStrategy("auto", small)).toBe("rank");
    expect(chooseStrategy("auto", large)).toBe("coverage");
    expect(chooseStrategy("rank", large)).toBe("rank");
  });

  test("when the pool holds every matching row, both strategies rank identically", () => {
    const rows = 400;
    const { db } = zipfCorpus(rows, 5);
    const r = rng(3);
    for (let q = 0; q < 30; q++) {
      const query = Array.from({ length: 2 + Math.floor(r() * 5) }, () => zipfWord(r)).join(" ");
      const opts = { table: "memory_fts", idColumn: "memory_id", limit: 10, pool: rows } as const;
      expect(rankLexical(db, query, { ...opts, poolStrategy: "coverage" })).toEqual(
        rankLexical(db, query, { ...opts, poolStrategy: "rank" }),
      );
    }
  });

  test("a term set larger than the pool gives the rows FTS5 ranks best (shortest first here)", () => {
    const db = table();
    const insert = db.query("INSERT INTO memory_fts (memory_id, body) VALUES (?, ?)");
    for (let i = 0; i < 50; i++) insert.run(`long${i}`, `alpha ${"pad ".repeat(20 + i)}`);
    for (let i = 0; i < 5; i++) insert.run(`short${i}`, "alpha beta");
    const terms: PoolTerm[] = [{ word: "alpha", stem: "alpha", weight: 1, df: 55 }];
    const ids = fetchPool(db, SRC, terms, 5, "coverage").map((c) => c.id);
    expect(ids.sort()).toEqual(["short0", "short1", "short2", "short3", "short4"]);
  });

  test("a very large term set is ranked over its newest rows only (bounded cost)", () => {
    const db = table();
    const insert = db.query("INSERT INTO memory_fts (rowid, memory_id, body) VALUES (?, ?, ?)");
    db.transaction(() => {
      // 500 old one-word rows (the shortest of all), then 2,500 newer longer ones, four of them short
      // (new100 is not among the newest 2,000).
      const short = new Set([100, 600, 1500, 2400]);
      for (let i = 0; i < 500; i++) insert.run(200_000 + i, `old${i}`, "alpha");
      for (let i = 0; i < 2500; i++)
        insert.run(300_000 + i, `new${i}`, short.has(i) ? "alpha beta" : `alpha ${"pad ".repeat(5 + (i % 7))}`);
    })();
    const ids = fetchPool(db, SRC, [{ word: "alpha", stem: "alpha", weight: 1, df: 3000 }], 3, "coverage").map(
      (c) => c.id,
    );
    expect(ids.sort()).toEqual(["new1500", "new2400", "new600"]);
  });

  test("rowids of any size and sign, and tables without a content table (external content)", () => {
    const db = table();
    const insert = db.query("INSERT INTO memory_fts (rowid, memory_id, body) VALUES (?, ?, ?)");
    insert.run(-5, "neg", "kappa lambda");
    insert.run(3, "small", "kappa");
    insert.run(2 ** 40, "huge", "kappa lambda mu");
    const terms: PoolTerm[] = [
      { word: "kappa", stem: "kappa", weight: 1, df: 3 },
      { word: "lambda", stem: "lambda", weight: 2, df: 2 },
      { word: "mu", stem: "mu", weight: 3, df: 1 },
    ];
    const got = fetchPool(db, SRC, terms, 10, "coverage");
    expect(got.map((c) => c.id)).toEqual(["huge", "neg", "small"]);
    expect(got[0]!.body).toBe("kappa lambda mu");

    const ext = table("CREATE TABLE docs (id INTEGER PRIMARY KEY, name TEXT, text TEXT)");
    ext.exec("CREATE VIRTUAL TABLE docs_fts USING fts5(name UNINDEXED, text, content = 'docs', content_rowid = 'id')");
    ext.query("INSERT INTO docs (id, name, text) VALUES (1, 'one', 'kappa lambda'), (2, 'two', 'kappa')").run();
    ext.exec("INSERT INTO docs_fts (docs_fts) VALUES ('rebuild')");
    const viaVtab = fetchPool(
      ext,
      { table: "docs_fts", idColumn: "name", bodyColumn: "text" },
      terms.slice(0, 2),
      10,
      "coverage",
    );
    expect(viaVtab).toEqual([
      { id: "one", body: "kappa lambda" },
      { id: "two", body: "kappa" },
    ]);
  });
});

describe("document frequencies", () => {
  test("are cached per connection and refreshed after a write from this or another connection", () => {
    const dir = join(tmpdir(), `sqrl-df-${process.pid}-${Date.now()}.db`);
    const a = new Database(dir);
    const b = new Database(dir);

    a.exec("PRAGMA journal_mode = WAL");
    a.exec("CREATE VIRTUAL TABLE memory_fts USING fts5(memory_id UNINDEXED, body, tokenize = 'porter unicode61')");
    a.query("INSERT INTO memory_fts (memory_id, body) VALUES ('x', 'redis cache')").run();
    expect(documentFrequencies(a, "memory_fts", ["redi"]).get("redi")).toBe(1);
    a.query("INSERT INTO memory_fts (memory_id, body) VALUES ('y', 'redis queue')").run();
    expect(documentFrequencies(a, "memory_fts", ["redi"]).get("redi")).toBe(2);
    b.query("INSERT INTO memory_fts (memory_id, body) VALUES ('z', 'redis lock')").run();
    expect(documentFrequencies(a, "memory_fts", ["redi", "lock"])).toEqual(
      new Map([
        ["redi", 3],
        ["lock", 1],
      ]),
    );
    a.close();
    b.close();
    for (const f of [dir, `${dir}-wal`, `${dir}-shm`]) rmSync(f, { force: true });
  });
});

describe("docTerms", () => {
  test("the single-scan fast path counts exactly what the unicode61 rules count", () => {
    const r = rng(21);
    const words = ["running", "runs", "ran", "a", "test", "tests", "testing", "x1", "cache", "caching", "zod", "i18n"];
    for (let k = 0; k < 200; k++) {
      const body = expandCodeTokens(
        Array.from({ length: 1 + Math.floor(r() * 30) }, () => words[Math.floor(r() * words.length)]).join(
          r() < 0.2 ? "  " : " ",
        ),
      );
      const query = ["run", "test", "a", "cach", "i18n"];
      const fast = docTerms(body, stemMatcher(query));
      const stems = bodyStems(body);
      expect(fast.length).toBe(stems.length);
      for (const q of query) expect(fast.tf.get(q) ?? 0).toBe(stems.filter((s) => s === q).length);
    }
    const unicode = docTerms("café running", stemMatcher(["run", "cafe"]));
    expect(unicode.length).toBe(2);
    expect(unicode.tf.get("run")).toBe(1);
  });
});
