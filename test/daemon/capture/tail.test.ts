/**
 * Tailing: pieces and partial lines, truncation and replacement, malformed and binary lines, and
 * the safe offset that never passes held-back events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NormalizedEvent } from "../../../src/shared/event.ts";
import { ClaudeCodeNormalizer } from "../../../src/daemon/normalize/claude-code.ts";
import { flushTail, newTailFile, readTail, type TailFile } from "../../../src/daemon/tail.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { CAPTURE_FIXTURES, rewriteFixture } from "./helpers.ts";

const SESSION = "11111111-2222-3333-4444-555555555555";
const FIXTURE = rewriteFixture(
  readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"),
  "/work/repo",
);

let dir: { path: string; cleanup: () => void };
beforeAll(() => {
  dir = tempDir("sqrl-tail-");
});
afterAll(() => dir.cleanup());

function claudeTail(path: string): TailFile {
  return newTailFile(path, "claude", false, new ClaudeCodeNormalizer({ filePath: path }));
}
const renew = (path: string) => () => new ClaudeCodeNormalizer({ filePath: path });
const ids = (events: NormalizedEvent[]) => events.map((e) => `${e.event_type}:${e.content.record_id}`);

function wholeFile(path: string): NormalizedEvent[] {
  const f = claudeTail(path);
  return readTail(f, { final: true, renew: renew(path) }).events;
}

describe("appended in pieces", () => {
  test("partial lines in 1 ms bursts: every record comes out exactly once", async () => {
    const path = join(dir.path, "pieces.jsonl");
    writeFileSync(path, "");
    const f = claudeTail(path);
    const got: NormalizedEvent[] = [];
    const bytes = Buffer.from(FIXTURE);
    let pos = 0;
    let seed = 7;
    while (pos < bytes.length) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = 1 + (seed % 97); // 1..97 bytes: lines cut anywhere, several lines per burst sometimes
      appendFileSync(path, bytes.subarray(pos, pos + n));
      pos += n;
      got.push(...readTail(f, { renew: renew(path) }).events);
      await Bun.sleep(1);
    }
    got.push(...flushTail(f));
    expect(f.readOffset).toBe(bytes.length);
    expect(f.safeOffset).toBe(bytes.length);
    expect(ids(got).sort()).toEqual(ids(wholeFile(path)).sort());
    expect(new Set(ids(got)).size).toBe(got.length);
  });

  test("a partial last line is kept for later and not counted as malformed", () => {
    const path = join(dir.path, "partial.jsonl");
    const [l1, l2] = FIXTURE.split("\n");
    writeFileSync(path, `${l1}\n${l2}\n${FIXTURE.split("\n")[2]!.slice(0, 40)}`);
    const f = claudeTail(path);
    const r = readTail(f, { renew: renew(path) });
    expect(r.malformed).toBe(0);
    expect(f.readOffset).toBe(Buffer.byteLength(`${l1}\n${l2}\n`));
  });

  test("the safe offset stays before an assistant response that may still grow", () => {
    const path = join(dir.path, "held.jsonl");
    const lines = FIXTURE.split("\n");
    const upto = lines.findIndex((l) => l.includes('"a-2"')) + 1; // ends with msg_A's text line
    writeFileSync(path, `${lines.slice(0, upto).join("\n")}\n`);
    const f = claudeTail(path);
    const r = readTail(f, { renew: renew(path) });
    expect(r.events.some((e) => e.event_type === "assistant_response")).toBe(false);
    const textLineStart = Buffer.byteLength(`${lines.slice(0, upto - 1).join("\n")}\n`);
    expect(f.safeOffset).toBe(textLineStart);
    expect(f.readOffset).toBeGreaterThan(f.safeOffset);
    const flushed = flushTail(f);
    expect(flushed.map((e) => e.event_type)).toEqual(["assistant_response"]);
    expect(f.safeOffset).toBe(f.readOffset);
  });

  test("resuming from a persisted offset reads only what follows", () => {
    const path = join(dir.path, "resume.jsonl");
    const lines = FIXTURE.split("\n").filter((l) => l.length > 0);
    writeFileSync(path, `${lines.slice(0, 10).join("\n")}\n`);
    const f = claudeTail(path);
    const first = readTail(f, { renew: renew(path) }).events;
    first.push(...flushTail(f));
    appendFileSync(path, `${lines.slice(10).join("\n")}\n`);
    const saved = { offset: f.safeOffset, size: f.size, ino: f.ino, head_hash: f.safeHeadHash, malformed: 0 };
    const g = newTailFile(path, "claude", false, new ClaudeCodeNormalizer({ filePath: path }), saved);
    const r = readTail(g, { final: true, renew: renew(path) });
    expect(r.reset).toBe(false);
    expect(ids([...first, ...r.events]).sort()).toEqual(ids(wholeFile(path)).sort());
  });
});

describe("truncated or replaced files", () => {
  test("a file that shrank is read again from 0", () => {
    const path = join(dir.path, "shrink.jsonl");
    writeFileSync(path, FIXTURE);
    const f = claudeTail(path);
    readTail(f, { final: true, renew: renew(path) });
    const short = `${FIXTURE.split("\n").slice(0, 4).join("\n")}\n`;
    truncateSync(path, 0);
    writeFileSync(path, short);
    const r = readTail(f, { renew: renew(path) });
    expect(r.reset).toBe(true);
    expect(f.readOffset).toBe(Buffer.byteLength(short));
    expect(r.events.map((e) => e.event_type)).toContain("user_message");
  });

  test("a file replaced by another (new inode, same size or bigger) is read again from 0", () => {
    const path = join(dir.path, "replace.jsonl");
    writeFileSync(path, FIXTURE);
    const f = claudeTail(path);
    readTail(f, { final: true, renew: renew(path) });
    const other = join(dir.path, "replace.tmp");
    writeFileSync(other, FIXTURE.replaceAll("u-1", "u-X"));
    renameSync(other, path);
    const r = readTail(f, { final: true, renew: renew(path) });
    expect(r.reset).toBe(true);
    expect(r.events.some((e) => e.content.record_id === "u-X")).toBe(true);
  });

  test("a rewrite in place with different first bytes is noticed by the head hash", () => {
    const path = join(dir.path, "rewrite.jsonl");
    writeFileSync(path, FIXTURE);
    const f = claudeTail(path);
    readTail(f, { final: true, renew: renew(path) });
    writeFileSync(
      path,
      `${FIXTURE.replace("file-history-snapshot", "file-history-snapshoX") + FIXTURE.split("\n")[2]}\n`,
    );
    const r = readTail(f, { renew: renew(path) });
    expect(r.reset).toBe(true);
  });
});

describe("malformed and binary lines", () => {
  test("are counted and skipped; the records around them still arrive", () => {
    const path = join(dir.path, "bad.jsonl");
    const lines = FIXTURE.split("\n").filter((l) => l.length > 0);
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x22, 0x80, 0x81, 0x0d]);
    writeFileSync(path, `${lines.slice(0, 3).join("\n")}\n{"type":"user", truncated garbage\n`);
    appendFileSync(path, Buffer.concat([binary, Buffer.from("\n")]));
    appendFileSync(path, `not json at all\n\n${lines.slice(3).join("\n")}\n`);
    const f = claudeTail(path);
    const r = readTail(f, { final: true, renew: renew(path) });
    expect(r.malformed).toBe(3);
    expect(f.malformed).toBe(3);
    const clean = join(dir.path, "clean.jsonl");
    writeFileSync(clean, `${lines.join("\n")}\n`);
    expect(ids(r.events).sort()).toEqual(ids(wholeFile(clean)).sort());
  });
});
