/**
 * sanitize.ts: the fast path (one fused walk, copy on write) must give exactly what the careful
 * path (cut, redact, cut, step by step) gives, on every event of every transcript we have; the
 * input is never changed; the bounds hold.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { TRANSCRIPT_SOURCES } from "../../../src/daemon/file-rows.ts";
import { sanitizeCareful, sanitizeContent } from "../../../src/shared/privacy/sanitize.ts";
import { newTailFile, readTail, type TailSource } from "../../../src/daemon/tail.ts";
import { DEFAULT_OUTPUT_CHARS, DEFAULT_RAW_STRING_CHARS } from "../../../src/shared/privacy/truncate.ts";
import type { EventContent } from "../../../src/shared/event.ts";
import { CAPTURE_FIXTURES, SHARED_TRANSCRIPTS } from "./helpers.ts";

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.jsonl?$/.test(p) ? [p] : [];
  });
}

function sourceOf(path: string): TailSource {
  return path.includes("/codex/") ? "codex" : path.includes("/gemini") ? "gemini" : "claude";
}

/** Every event content the normalizers make of a transcript file. */
function contentsOf(path: string): EventContent[] {
  const source = TRANSCRIPT_SOURCES[sourceOf(path)];
  const deps = { projects: () => [] };
  const file = newTailFile(path, sourceOf(path), path.endsWith(".json"), source.createNormalizer(path, deps));
  return readTail(file, { final: true, renew: () => source.createNormalizer(path, deps) }).events.map((e) => e.content);
}

function expectSameAsCareful(content: EventContent): void {
  const before = structuredClone(content);
  const fast = sanitizeContent(content, { envFile: false });
  expect(fast).toEqual(sanitizeCareful(structuredClone(content), { envFile: false }));
  expect(content).toEqual(before); // never changed in place
}

/** expectSameAsCareful on every event of the files; how many there were. */
function checkAll(paths: readonly string[]): number {
  let n = 0;
  for (const path of paths) {
    for (const c of contentsOf(path)) {
      expectSameAsCareful(c);
      n++;
    }
  }
  return n;
}

describe("fast path = careful path", () => {
  const core = files(CAPTURE_FIXTURES);

  test("every event of the core fixtures", () => {
    expect(checkAll(core)).toBeGreaterThan(20);
  });

  const shared = files(SHARED_TRANSCRIPTS);
  test.skipIf(shared.length === 0)(
    "every event of the real transcripts in ../shared (skipped without ../shared)",
    () => {
      expect(checkAll(shared)).toBeGreaterThan(400);
    },
  );

  test("long strings, long arrays, deep nesting, repeated outputs, secrets", () => {
    const output = `${"x".repeat(9000)} FAILED 3 passed 12`;
    const cases: EventContent[] = [
      {
        output,
        raw: {
          message: { content: [{ type: "tool_result", content: output }] },
          toolUseResult: { stdout: output, stderr: "" },
        },
      },
      { text: "t".repeat(40_000), raw: { list: Array.from({ length: 450 }, (_, i) => ({ i, s: `item ${i}` })) } },
      {
        command: "ls",
        input: { a: { b: { c: ["y".repeat(3000), "short", 1, null, true] } } },
        raw: { deep: [[["z".repeat(1500)]]] },
      },
      { text: "hello", raw: { api_key: "abcd1234efgh5678", nested: { note: "password=hunter2hunter2" } } },
      { output: "ok", raw: { list: Array.from({ length: 250 }, (_, i) => i) } },
    ];
    for (const c of cases) expectSameAsCareful(c);
  });

  test("strings repeated within an event (scanned once, remembered clean) redact like the careful path", () => {
    // the memo of clean strings (sanitize.ts) skips a second scan of the same long string: a string
    // that is not clean must never be remembered, a cut copy is scanned on its own
    const clean = `run the migration for the orders table ${"and keep going ".repeat(8)}`;
    const secret = `export STRIPE_SECRET_KEY=sk_live_${"a1B2c3D4".repeat(4)} ${"then deploy ".repeat(8)}`;
    const long = `${"line of build output\n".repeat(120)}password=Hunter2Hunter2 ${"tail ".repeat(30)}`;
    const cases: EventContent[] = [
      { command: clean, input: { command: clean }, raw: { input: { command: clean }, note: secret } },
      { command: secret, input: { command: secret }, raw: { input: { command: secret }, again: clean } },
      { output: long, input: { text: long }, raw: { a: long, b: [long, clean], c: clean } },
    ];
    for (const c of cases) expectSameAsCareful(c);
    const json = JSON.stringify(cases.map((c) => sanitizeContent(c, { envFile: false })));
    expect(json).not.toContain("sk_live_a1B2");
    expect(json).not.toContain("Hunter2Hunter2");
    expect(json).toContain("run the migration for the orders table");
  });
});

describe("copy on write and bounds", () => {
  test("a raw record with nothing to cut is kept as it is, not copied", () => {
    const raw = {
      type: "user",
      message: { role: "user", content: [{ type: "text", text: "fix the login bug" }] },
      uuid: "u-1",
    };
    const out = sanitizeContent({ text: "fix the login bug", raw }, { envFile: false });
    expect(out.raw).toBe(raw);
  });

  test("only the changed branch is copied; the rest is shared", () => {
    const kept = { a: 1, b: ["x", "y"] };
    const raw = { kept, long: "q".repeat(DEFAULT_RAW_STRING_CHARS + 500) };
    const out = sanitizeContent({ output: "ok", raw }, { envFile: false }).raw as typeof raw;
    expect(out).not.toBe(raw);
    expect(out.kept).toBe(kept);
    expect(out.long.length).toBeLessThan(DEFAULT_RAW_STRING_CHARS + 60);
    expect(out.long).toContain("…[truncated");
    expect(Object.keys(out)).toEqual(["kept", "long"]);
  });

  test("tool output is cut to its limit; a copy of it in the raw record becomes a reference", () => {
    const output = "o".repeat(DEFAULT_OUTPUT_CHARS * 3);
    const out = sanitizeContent({ output, raw: { toolUseResult: { stdout: output } } }, { envFile: false });
    expect((out.output as string).length).toBeLessThan(DEFAULT_OUTPUT_CHARS + 60);
    expect(out.raw).toEqual({ toolUseResult: { stdout: "[same as output]" } });
  });

  test("arrays keep 200 items plus a marker", () => {
    const out = sanitizeContent(
      { output: "ok", raw: { list: Array.from({ length: 300 }, (_, i) => i) } },
      { envFile: false },
    );
    const list = (out.raw as { list: unknown[] }).list;
    expect(list).toHaveLength(201);
    expect(list[200]).toBe("…[100 more items truncated]…");
  });

  test("a secret anywhere in the raw record is redacted", () => {
    const out = sanitizeContent(
      {
        text: "deploy",
        raw: { env: { DB_PASSWORD: "s3cr3t-value-123" }, note: "token: ghp_abcdefghijklmnopqrstuvwxyz0123" },
      },
      { envFile: false },
    );
    const json = JSON.stringify(out);
    expect(json).not.toContain("s3cr3t-value-123");
    expect(json).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123");
    expect(json).toContain("[REDACTED:");
  });
});
