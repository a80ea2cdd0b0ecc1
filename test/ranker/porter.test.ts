import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { porterStem } from "../../src/ranker/porter.ts";

/** Stems FTS5's porter tokenizer stores for each word (read back through fts5vocab). */
function ftsStems(words: readonly string[]): Map<string, string> {
  const db = new Database(":memory:");
  try {
    db.exec("CREATE VIRTUAL TABLE t USING fts5(b, tokenize = 'porter ascii')");
    db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
    const insert = db.query("INSERT INTO t (rowid, b) VALUES (?, ?)");
    words.forEach((w, i) => insert.run(i + 1, w));
    const out = new Map<string, string>();
    for (const r of db.query("SELECT doc, term FROM v").all() as Array<{ doc: number; term: string }>)
      out.set(words[r.doc - 1]!, r.term);
    return out;
  } finally {
    db.close();
  }
}

describe("porterStem", () => {
  test("classic Porter examples", () => {
    const cases: Record<string, string> = {
      caresses: "caress",
      ponies: "poni",
      ties: "ti",
      cats: "cat",
      feed: "feed",
      agreed: "agre",
      plastered: "plaster",
      motoring: "motor",
      sing: "sing",
      conflated: "conflat",
      troubled: "troubl",
      sized: "size",
      hopping: "hop",
      falling: "fall",
      hissing: "hiss",
      filing: "file",
      happy: "happi",
      relational: "relat",
      conditional: "condit",
      rational: "ration",
      digitizer: "digit",
      operator: "oper",
      triplicate: "triplic",
      hopeful: "hope",
      goodness: "good",
      revival: "reviv",
      adjustment: "adjust",
      adoption: "adopt",
      controll: "control",
      roll: "roll",
      generalization: "gener",
    };
    for (const [word, stem] of Object.entries(cases)) expect(`${word}→${porterStem(word)}`).toBe(`${word}→${stem}`);
  });

  test("short words pass through unchanged", () => {
    expect(porterStem("is")).toBe("is");
    expect(porterStem("a")).toBe("a");
  });

  test("agrees with SQLite FTS5's porter tokenizer word for word", () => {
    const words = [
      "running",
      "runs",
      "painting",
      "painted",
      "paints",
      "activities",
      "activity",
      "volunteering",
      "volunteered",
      "agreement",
      "agreeing",
      "generously",
      "generalizations",
      "hopefulness",
      "sensational",
      "electricity",
      "formality",
      "adjustable",
      "irritant",
      "replacement",
      "dependent",
      "adoption",
      "communism",
      "activate",
      "angulariti",
      "homologous",
      "effective",
      "bowdlerize",
      "probate",
      "rate",
      "cease",
      "controlling",
      "rolling",
      "skies",
      "dying",
      "lying",
      "spying",
      "buying",
      "enjoyed",
      "studies",
      "studying",
      "tests",
      "testing",
      "tokenizer",
      "tokenization",
      "parsing",
      "parser",
      "cached",
      "caching",
      "queries",
      "querying",
      "migrations",
      "migrated",
      "abilities",
      "sses",
      "ies",
      "eed",
      "bed",
      "aed",
    ];
    const expected = ftsStems(words);
    const mismatches = words
      .filter((w) => expected.get(w) !== porterStem(w))
      .map((w) => `${w}: fts5=${expected.get(w)} ours=${porterStem(w)}`);
    expect(mismatches).toEqual([]);
  });
});
