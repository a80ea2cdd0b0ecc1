/**
 * Tailing: pieces and partial lines, truncation and replacement, malformed and binary lines, and
 * the safe offset that never passes held-back events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NormalizedEvent } from "../../../src/shared/event.ts";
import { ClaudeCodeNormalizer } from "../../../src/daemon/normalize/claude-code.ts";
import { GeminiNormalizer } from "../../../src/daemon/normalize/gemini.ts";
import { flushTail, MAX_LINE_BYTES, newTailFile, readTail, type TailFile } from "../../../src/daemon/tail.ts";
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

describe("truncated right after an append (issue 30 item 8)", () => {
  test("the response held back when the file was truncated is released, not lost", () => {
    const path = join(dir.path, "held-truncated.jsonl");
    const lines = FIXTURE.split("\n");
    const upto = lines.findIndex((l) => l.includes('"a-2"')) + 1; // ends with msg_A's text line (held back)
    writeFileSync(path, `${lines.slice(0, upto).join("\n")}\n`);
    const f = claudeTail(path);
    const first = readTail(f, { renew: renew(path) });
    expect(first.events.some((e) => e.event_type === "assistant_response")).toBe(false);
    truncateSync(path, 0); // before the idle flush
    writeFileSync(path, `${lines[0]}\n`);
    const r = readTail(f, { renew: renew(path) });
    expect(r.reset).toBe(true);
    expect(r.events.filter((e) => e.event_type === "assistant_response")).toHaveLength(1);
  });
});

describe("a line that never ends (issue 30 item 3)", () => {
  const MiB = 2 ** 20;
  const good = FIXTURE.split("\n").filter((l) => l.length > 0);

  test("past the cap it is dropped once and skipped unbuffered; the lines after its newline arrive", () => {
    const path = join(dir.path, "endless.jsonl");
    const head = `${good.slice(0, 3).join("\n")}\n`;
    writeFileSync(path, head);
    appendFileSync(path, `{"type":"user","message":{"content":"${"x".repeat(MAX_LINE_BYTES + 3 * MiB)}`);
    const f = claudeTail(path);
    const r1 = readTail(f, { renew: renew(path) });
    expect(r1.overlong).toEqual([Buffer.byteLength(head)]);
    expect(r1.malformed).toBe(1);
    expect(f.skipping).toBe(true);
    expect(f.readOffset).toBe(statSync(path).size); // nothing of it is kept for later
    // more of the same line, a byte at a time: nothing counted again, nothing re-read
    for (let i = 0; i < 3; i++) {
      appendFileSync(path, "y");
      const r = readTail(f, { renew: renew(path) });
      expect(r.malformed + r.overlong.length + r.events.length).toBe(0);
      expect(f.readOffset).toBe(statSync(path).size);
    }
    // the line ends; what follows is read as usual
    appendFileSync(path, `"}}\n${good.slice(3).join("\n")}\n`);
    const r2 = readTail(f, { renew: renew(path) });
    r2.events.push(...flushTail(f));
    expect(f.skipping).toBe(false);
    expect(r2.malformed).toBe(0);
    expect(f.malformed).toBe(1);
    const clean = join(dir.path, "endless-clean.jsonl");
    writeFileSync(clean, `${good.slice(3).join("\n")}\n`);
    expect(ids(r2.events).sort()).toEqual(ids(wholeFile(clean)).sort());
  });

  test("the skip survives a restart from the persisted offset (the middle of the line is never parsed)", () => {
    const path = join(dir.path, "endless-restart.jsonl");
    writeFileSync(path, `{"pad":"${"x".repeat(MAX_LINE_BYTES + MiB)}`);
    const f = claudeTail(path);
    readTail(f, { renew: renew(path) });
    expect(f.safeSkipping).toBe(true);
    const saved = {
      offset: f.safeOffset,
      size: f.size,
      ino: f.ino,
      head_hash: f.safeHeadHash,
      malformed: f.malformed,
      skipping: f.safeSkipping ? 1 : 0,
    };
    // while the daemon is down, the line ends with what would be a valid record if read from the offset
    const planted = `{"type":"user","uuid":"planted","cwd":"/work/repo","message":{"role":"user","content":"planted"}}`;
    appendFileSync(path, `${planted}\n${good.slice(0, 3).join("\n")}\n`);
    const resume = (skipping: number) =>
      readTail(
        newTailFile(path, "claude", false, new ClaudeCodeNormalizer({ filePath: path }), { ...saved, skipping }),
        {
          final: true,
          renew: renew(path),
        },
      );
    const r = resume(saved.skipping);
    expect(r.reset).toBe(false);
    expect(r.malformed).toBe(0);
    expect(r.events.some((e) => e.content.record_id === "planted")).toBe(false);
    expect(r.events.length).toBeGreaterThan(0);
    // without the persisted flag the remainder would have been taken for a record
    expect(resume(0).events.some((e) => e.content.record_id === "planted")).toBe(true);
  });

  test("an unfinished line under the cap is searched only in its new bytes, then read once when it ends", () => {
    const path = join(dir.path, "unfinished.jsonl");
    const rec = good[1]!;
    const cut = Math.floor(rec.length / 2);
    writeFileSync(path, `${good[0]}\n${rec.slice(0, cut)}`);
    const f = claudeTail(path);
    readTail(f, { renew: renew(path) });
    const lineStart = Buffer.byteLength(`${good[0]}\n`);
    expect(f.readOffset).toBe(lineStart);
    expect(f.noNewlineUntil).toBe(statSync(path).size);
    appendFileSync(path, rec.slice(cut, cut + 3));
    readTail(f, { renew: renew(path) });
    expect(f.readOffset).toBe(lineStart);
    expect(f.noNewlineUntil).toBe(statSync(path).size);
    appendFileSync(path, `${rec.slice(cut + 3)}\n`);
    const r = readTail(f, { renew: renew(path) });
    expect(r.malformed).toBe(0);
    expect(f.readOffset).toBe(statSync(path).size);
  });
});

describe("a whole document past the cap (issue 30 item 3)", () => {
  test("a Gemini chat document over the cap is counted once and never buffered; read again once it is smaller", () => {
    const path = join(dir.path, "session-huge.json");
    const doc = (pad: number) =>
      JSON.stringify({ sessionId: "g1", messages: [{ type: "user", content: "hello", pad: "x".repeat(pad) }] });
    writeFileSync(path, doc(MAX_LINE_BYTES + 1024));
    const normalizer = () => new GeminiNormalizer({ filePath: path });
    const f = newTailFile(path, "gemini", true, normalizer());
    const r1 = readTail(f, { renew: normalizer });
    expect(r1.malformed).toBe(1);
    expect(r1.overlong).toEqual([0]);
    appendFileSync(path, " "); // it changes, still too big: not counted again
    const r2 = readTail(f, { renew: normalizer });
    expect(r2.malformed + r2.overlong.length).toBe(0);
    writeFileSync(path, doc(10));
    const r3 = readTail(f, { renew: normalizer });
    expect(r3.malformed).toBe(0);
    expect(f.skipping).toBe(false);
    expect(f.readOffset).toBe(statSync(path).size);
  });
});
