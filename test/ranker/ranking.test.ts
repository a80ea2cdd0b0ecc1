import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import type { Neighbour } from "../../src/ranker/context.ts";
import { rankLexical, type LexicalOptions } from "../../src/ranker/lexical.ts";
import { expandCodeTokens } from "../../src/shared/code-tokens.ts";

/** A memory_fts-like table over hand-written documents (bodies code-expanded like searchBody). */
function corpus(docs: Record<string, string>): Database {
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE memory_fts USING fts5(memory_id UNINDEXED, body, tokenize = 'porter unicode61')");
  const insert = db.query("INSERT INTO memory_fts (memory_id, body) VALUES (?, ?)");
  for (const [id, text] of Object.entries(docs)) insert.run(id, expandCodeTokens(text));
  open.push(db);
  return db;
}

const open: Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

const rank = (db: Database, q: string, extra: Partial<LexicalOptions> = {}) =>
  rankLexical(db, q, { table: "memory_fts", idColumn: "memory_id", limit: 10, ...extra });
const ids = (db: Database, q: string, extra: Partial<LexicalOptions> = {}) => rank(db, q, extra).map((h) => h.id);

/** Filler documents so that document frequencies mean something. */
const filler = (n: number, text: string) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, `${text} ${i}`]));

describe("rankLexical", () => {
  test("a rare query word outweighs a common one", () => {
    const db = corpus({
      ...filler(20, "the build uses bun"),
      common: "the build uses bun and more bun",
      rare: "kubernetes deployment notes",
    });
    expect(ids(db, "bun kubernetes")[0]).toBe("rare");
  });

  test("covering more of the query beats repeating one word (coordination)", () => {
    const db = corpus({
      ...filler(12, "a token was issued"),
      repeat: "jwt jwt jwt jwt",
      both: "the jwt expiry is checked by the gateway middleware on every single request it serves",
      exp: "expiry dates",
    });
    const plain = { k1: 0.9, b: 0.4, coordination: 0 };
    expect(ids(db, "jwt expiry", { lengthPrior: 0, bm25: plain })[0]).toBe("repeat");
    expect(ids(db, "jwt expiry", { lengthPrior: 0 })[0]).toBe("both");
  });

  test("code identifiers in documents match their parts in queries, and back", () => {
    const db = corpus({
      ...filler(5, "unrelated text"),
      code: "call parseAuthToken before the handler",
      prose: "we parse the auth token by hand",
    });
    expect(ids(db, "auth token parsing")).toContain("code");
    expect(ids(db, "parseAuthToken")[0]).toBe("code");
    expect(ids(db, "parseAuthToken")).toContain("prose");
  });

  test("stemming matches other forms of a word on both sides", () => {
    const db = corpus({ ...filler(5, "nothing relevant"), a: "she painted the fence", b: "migrations ran fine" });
    expect(ids(db, "painting")).toEqual(["a"]);
    expect(ids(db, "migrate")).toEqual(["b"]);
  });

  test("reports which query words an item itself contains", () => {
    const db = corpus({ ...filler(5, "filler"), a: "Tests run with bun test in CI" });
    const [hit] = rank(db, "how are the tests run in CI?");
    expect(hit!.id).toBe("a");
    expect(hit!.matched.sort()).toEqual(["ci", "run", "tests"]);
  });

  test("no terms, no hits; FTS5 syntax in a query is taken literally", () => {
    const db = corpus({ a: "alpha and beta", b: "near the column: x" });
    expect(rank(db, "the of and")).toEqual([]);
    expect(() => rank(db, 'alpha AND "beta" NEAR(x) col:x * ^ -')).not.toThrow();
    expect(ids(db, "NEAR column")).toContain("b");
  });

  test("neighbourhood smoothing lifts an item whose neighbour matches (and only with neighbours given)", () => {
    const db = corpus({
      ...filler(10, "small talk about lunch"),
      question: "where did you go hiking last summer?",
      answer: "we went to the Dolomites for two weeks",
      unrelated: "hiking boots are expensive these days",
    });
    const neighbours = (list: readonly string[]) =>
      new Map<string, Neighbour[]>(list.map((id) => [id, id === "question" ? [{ id: "answer", weight: 1 }] : []]));
    expect(ids(db, "hiking summer")).not.toContain("answer");
    const smoothed = ids(db, "hiking summer", { neighbours });
    expect(smoothed).toContain("answer");
    expect(smoothed.indexOf("answer")).toBeLessThan(smoothed.indexOf("unrelated"));
  });

  test("label weighting lifts items whose label holds a query word", () => {
    const db = corpus({
      ...filler(10, "misc"),
      a: "Melanie: I love pottery class, Caroline",
      b: "Caroline: I love pottery too, Melanie",
    });
    const labels = (list: readonly string[]) =>
      new Map(list.map((id) => [id, id === "a" ? "Melanie" : id === "b" ? "Caroline" : ""]));
    expect(ids(db, "what does Caroline love?", { labels })[0]).toBe("b");
    expect(ids(db, "what does Melanie love?", { labels })[0]).toBe("a");
    // Without labels both queries rank the two turns the same way: the label is what decides.
    expect(ids(db, "what does Caroline love?")[0]).toBe(ids(db, "what does Melanie love?")[0]!);
  });

  test("a word found in most rows of a large store still ranks when the other words match nothing", () => {
    const db = corpus({ ...filler(60, "project notes"), target: "project kickoff agenda" });
    expect(ids(db, "project zzqx").length).toBeGreaterThan(0);
    expect(ids(db, "project kickoff")[0]).toBe("target");
  });

  test("pseudo-relevance feedback reaches an item that shares only feedback words", () => {
    const db = corpus({
      ...filler(30, "misc chatter"),
      top1: "the deploy failed because the kubeconfig context was wrong",
      top2: "deploy broke again: kubeconfig context pointed at staging",
      related: "switch the kubeconfig context before running helm",
    });
    expect(ids(db, "deploy")).not.toContain("related");
    expect(ids(db, "deploy", { feedback: { docs: 2, terms: 5, weight: 0.3 } })).toContain("related");
  });

  test("the length prior prefers the longer of two otherwise equal matches", () => {
    const db = corpus({ ...filler(10, "misc"), short: "redis cache", long: "redis cache holds sessions for a day" });
    expect(ids(db, "redis cache", { lengthPrior: 0 })).toEqual(["short", "long"]);
    expect(ids(db, "redis cache", { lengthPrior: 1 })[0]).toBe("long");
  });

  test("BM25 parameters are honoured (b = 0 ignores length)", () => {
    const db = corpus({
      ...filler(10, "misc"),
      short: "sqlite",
      long: "sqlite is the embedded database we use for everything here",
    });
    expect(ids(db, "sqlite", { lengthPrior: 0 })[0]).toBe("short");
    const flat = rank(db, "sqlite", { lengthPrior: 0, bm25: { k1: 1.2, b: 0, coordination: 1 } });
    expect(flat[0]!.score).toBeCloseTo(flat[1]!.score, 10);
  });

  test("limit caps the hits and scores are non-increasing", () => {
    const db = corpus(filler(40, "shared words here"));
    const hits = rank(db, "shared words", { limit: 7 });
    expect(hits.length).toBe(7);
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
  });
});
