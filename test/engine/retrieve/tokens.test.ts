import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  chars4Tokens,
  classifyPiece,
  estimateTokens,
  estimateUpTo,
  loadTokenCounter,
  tokenCounterSync,
} from "../../../src/shared/tokens.ts";
import { SHARED_DIR } from "../../helpers/sqrl.ts";

const SHARED = join(SHARED_DIR, "fixtures");

/** Small hand-written samples of each kind (the bench measures the real fixtures). */
const SAMPLES: Record<string, string> = {
  code: `export async function refreshToken(req: Request): Promise<Response> {\n  const { token } = await req.json();\n  if (!token) throw new NotFoundError("missing token");\n  const claims = jwt.verify(token, process.env.JWT_SECRET!);\n  return Response.json({ ok: true, exp: claims.exp * 1000 });\n}\n`.repeat(
    3,
  ),
  prose:
    "The migration failed because drizzle-kit generated a statement that dropped the column before copying its data. We reviewed the SQL by hand, reordered the statements, and added a test that checks the row count before and after the migration runs. ".repeat(
      3,
    ),
  logs: " FAIL  tests/auth.test.ts > refresh > rotates the token\nAssertionError: expected 3600000 to be 3600 // Object.is equality\n ❯ tests/auth.test.ts:42:18\n\n Test Files  1 failed | 11 passed (12)\n      Tests  1 failed | 87 passed (88)\n   Start at  10:02:11\n   Duration  2.31s (transform 310ms, setup 0ms, collect 1.02s, tests 880ms)\n".repeat(
    3,
  ),
  json: JSON.stringify({
    type: "assistant",
    uuid: "8e0a6473-6bc7-4d2a-9c11-0fa2b3c4d5e6",
    timestamp: "2026-01-19T10:02:11.123Z",
    message: {
      id: "msg_01ABCdef",
      content: [
        { type: "tool_use", id: "toolu_01XYZ", name: "Bash", input: { command: "pnpm vitest run tests/auth.test.ts" } },
      ],
      usage: { input_tokens: 1234, output_tokens: 56 },
    },
  }).repeat(3),
};

describe("token counter", () => {
  test("the calibrated estimator is within ±10 % of o200k on code, prose, logs and JSON", async () => {
    const o200k = await loadTokenCounter("o200k");
    expect(o200k.name).toBe("o200k");
    for (const [kind, text] of Object.entries(SAMPLES)) {
      const real = o200k.count(text);
      const est = estimateTokens(text);
      const err = Math.abs(est / real - 1);
      if (err > 0.1) throw new Error(`${kind}: estimate ${est} vs o200k ${real} (${(err * 100).toFixed(1)} %)`);
    }
  });

  test("chars/4 is what config selects with tokens.counter = chars4, and it undercounts logs/JSON", async () => {
    const c4 = await loadTokenCounter("chars4");
    expect(c4.name).toBe("chars4");
    expect(c4.count("12345678")).toBe(2);
    const o200k = await loadTokenCounter("o200k");
    expect(chars4Tokens(SAMPLES.json!)).toBeLessThan(o200k.count(SAMPLES.json!) * 0.85);
  });

  test("countUpTo stops early but is exact below the limit", async () => {
    const text = SAMPLES.prose!;
    const full = estimateTokens(text);
    expect(estimateUpTo(text, full + 10)).toBe(full);
    expect(estimateUpTo(text, 10)).toBeGreaterThan(10);
    expect(estimateUpTo(text, 10)).toBeLessThan(full);
    const o200k = await loadTokenCounter("o200k");
    expect(o200k.countUpTo(text, 5)).toBeGreaterThan(5);
    expect(o200k.countUpTo(text, 100_000)).toBe(o200k.count(text));
    expect(tokenCounterSync("accurate").countUpTo("", 0)).toBe(0);
  });

  test("pieces are classed like the o200k pre-tokenizer splits them", () => {
    expect(classifyPiece(" hello")).toEqual(["sp_lower", 6]);
    expect(classifyPiece("Hello")).toEqual(["cap", 5]);
    expect(classifyPiece("\n\n")).toEqual(["newline", 2]);
    expect(classifyPiece("123")).toEqual(["digits", 3]);
    expect(classifyPiece(" {")).toEqual(["sp_punct", 2]);
    expect(classifyPiece("xkcdqzv")[0]).toBe("odd");
    expect(classifyPiece("été")[0]).toBe("nonascii");
  });

  test.skipIf(!existsSync(SHARED))(
    "fixtures present (needs ../shared): `bun run bench tokens` measures the real transcripts",
    () => {
      expect(existsSync(join(SHARED, "transcripts"))).toBe(true);
    },
  );
});
