/**
 * A transcript line that never ends (issue 30 item 3), on a real tmpfs when this machine allows
 * mounting one (a temp folder otherwise) and with a bounded writer: past the line cap it is dropped
 * once, said once in the log, skipped without being buffered or re-read, its skip survives a
 * restart, other files keep being captured, and the lines after its newline arrive.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CaptureService } from "../../../src/daemon/capture-service.ts";
import { MAX_LINE_BYTES } from "../../../src/daemon/tail.ts";
import { log, setLogSinks, type LogSink } from "../../../src/shared/log.ts";
import { getFileOffset } from "../../../src/sql/file-offsets.ts";
import { openStateDb } from "../../../src/sql/open.ts";
import { claudeLine, mountTmpfs, type Mounted } from "../../helpers/faults.ts";
import { makeCaptureHome, readEvents, waitFor, type CaptureHome } from "./helpers.ts";

const ENDLESS = "e0e0e0e0-0000-4000-8000-000000000030";
const OTHER = "0f0f0f0f-0000-4000-8000-000000000030";

let home: CaptureHome;
let mount: Mounted | null = null;
let service: CaptureService | null = null;
let restoreSinks: (() => void) | null = null;

beforeEach(() => {
  home = makeCaptureHome("[watch]\ngit = false\n");
});
afterEach(async () => {
  await service?.stop();
  service = null;
  restoreSinks?.();
  restoreSinks = null;
  mount?.unmount();
  mount = null;
  home.restore();
});

const userTexts = () =>
  readEvents(home.repo)
    .filter((e) => e.event_type === "user_message")
    .map((e) => e.content.text as string);

/** Writes `bytes` of one unfinished line in 4 MiB pieces, yielding between them (the writer never holds it all). */
async function writeEndless(path: string, bytes: number): Promise<void> {
  const piece = Buffer.alloc(4 * 2 ** 20, 0x78);
  appendFileSync(path, '{"type":"user","message":{"content":"');
  for (let done = 0; done < bytes; done += piece.length) {
    appendFileSync(path, piece.subarray(0, Math.min(piece.length, bytes - done)));
    await Bun.sleep(5);
  }
}

test("an endless line is skipped once, unbuffered, across a restart; other files and later lines are captured", async () => {
  const dir = join(home.claudeDir, "projects", "-repo");
  mount = mountTmpfs(dir, "160m");
  if (!mount) console.log("note: cannot mount a tmpfs here (needs root); the endless line is written to a temp folder");
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  const sink: LogSink = (r, line) => {
    if (r.level === "warn") lines.push(line);
  };
  const before = setLogSinks([sink]);
  const level = log.level;
  log.level = 1; // warnings (the test preload keeps errors only)
  restoreSinks = () => {
    setLogSinks(before);
    log.level = level;
  };

  const endless = join(dir, `${ENDLESS}.jsonl`);
  const other = join(dir, `${OTHER}.jsonl`);
  writeFileSync(endless, claudeLine(home.repo, ENDLESS, 0));
  writeFileSync(other, "");
  service = new CaptureService({ sweepIntervalMs: 200 });
  await service.start();
  await waitFor(() => userTexts().length === 1, 5000, "first line");

  await writeEndless(endless, MAX_LINE_BYTES + 16 * 2 ** 20);
  for (let i = 0; i < 5; i++) {
    appendFileSync(endless, "y"); // a byte now and then: the line goes on
    appendFileSync(other, claudeLine(home.repo, OTHER, 100 + i));
    await Bun.sleep(100);
  }
  await waitFor(() => userTexts().length === 6, 5000, "the other file captured meanwhile");
  await waitFor(() => lines.some((l) => l.includes("was skipped")), 3000, "the drop logged");

  // a restart in the middle of the skip: the persisted offset says so
  await service.stop();
  const state = openStateDb();
  const saved = getFileOffset(state, endless);
  state.close();
  expect(saved?.skipping).toBe(1);
  expect(saved?.malformed).toBe(1);
  appendFileSync(endless, "z".repeat(1000));
  service = new CaptureService({ sweepIntervalMs: 200 });
  await service.start();

  appendFileSync(endless, `"}}\n`);
  for (let i = 1; i < 11; i++) appendFileSync(endless, claudeLine(home.repo, ENDLESS, i));
  await waitFor(() => userTexts().length === 16, 5000, "the lines after the endless one");
  await Bun.sleep(300);
  expect(new Set(userTexts()).size).toBe(16);
  expect(lines.filter((l) => l.includes("was skipped"))).toHaveLength(1);
  const after = openStateDb();
  const row = getFileOffset(after, endless);
  after.close();
  expect(row?.malformed).toBe(1);
  expect(row?.skipping).toBe(0);
}, 30_000);
