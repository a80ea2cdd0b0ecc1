import { describe, expect, test } from "bun:test";
import { queryTerms } from "../../src/ranker/lexical.ts";
import { analyzeQuery, bodyStems, foldToken } from "../../src/ranker/query.ts";
import { isStopWord } from "../../src/ranker/stop-words.ts";

describe("query processing", () => {
  test("stop words are removed, content words kept in order", () => {
    expect(queryTerms("What did you do with the JWT tokens when the tests failed?")).toEqual([
      "jwt",
      "tokens",
      "tests",
      "failed",
    ]);
  });

  test("a query of stop words only has no terms", () => {
    expect(queryTerms("what is it that they were doing there?")).toEqual([]);
  });

  test("code identifiers are split like the index bodies (camelCase, snake_case, paths, dotted names)", () => {
    expect(queryTerms("parseAuthToken")).toEqual(["parseauthtoken", "parse", "auth", "token"]);
    expect(queryTerms("snake_case_name")).toEqual(["snakecasename", "snake", "case", "name"]);
    expect(queryTerms("src/auth/jwt.ts")).toEqual(["srcauthjwtts", "src", "auth", "jwt", "ts"]);
    expect(queryTerms("os.path.join")).toEqual(["ospathjoin", "os", "path", "join"]);
  });

  test("words with the same Porter stem count once (first spelling kept)", () => {
    const terms = analyzeQuery("painting paints painted a painter");
    expect(terms.map((t) => t.stem)).toEqual(["paint", "painter"]);
    expect(terms[0]!.word).toBe("painting");
  });

  test("code words that carry meaning are not stop words", () => {
    for (const w of ["get", "set", "new", "run", "test", "null"]) expect(isStopWord(w)).toBe(false);
    expect(queryTerms("get user")).toEqual(["get", "user"]);
  });

  test("diacritics fold like FTS5's unicode61, non-Latin text is kept", () => {
    expect(foldToken("Café")).toBe("cafe");
    expect(queryTerms("Zürich café")).toEqual(["zurich", "cafe"]);
    expect(queryTerms("記憶 search")).toEqual(["記憶", "search"]);
  });

  test("bodyStems tokenizes and stems an indexed body", () => {
    expect(bodyStems("running tests, parsed queries")).toEqual(["run", "test", "pars", "queri"]);
  });
});
