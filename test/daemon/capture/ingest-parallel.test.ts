/**
 * A file read in slices on the ingest workers (speculative slices checked against the exact state,
 * re-read when they do not hold) gives exactly the rows, in the same order, of a read in one go in
 * this thread — also when the cuts fall anywhere (mid tool_use/tool_result, mid response).
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestFileOnce, type FileIngestOptions } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { stopIngestWorkers } from "../../../src/daemon/ingest-workers.ts";
import { planSlices } from "../../../src/daemon/slice-plan.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import {
  adversarialTranscript,
  expectLineSlices,
  makeCaptureHome,
  retargetTranscript,
  SHARED_TRANSCRIPTS,
  type CaptureHome,
} from "./helpers.ts";

let home: CaptureHome;
beforeEach(() => {
  home = makeCaptureHome();
});
afterEach(() => home.restore());
afterAll(() => stopIngestWorkers());

interface Run {
  rows: unknown[];
  result: { added: number; duplicates: number; skipped: number; lines: number; malformed: number; events: number };
}

/** Ingest `file` into a fresh data.db of the home's repo; every column of every row, in insertion order. */
async function ingestFresh(file: string, opts: FileIngestOptions): Promise<Run> {
  const db = projectPaths.db(home.repo);
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  const pool = new ProjectDbPool();
  let result: Run["result"];
  try {
    const r = await ingestFileOnce(file, "claude", false, { projects: listProjects(), userId: "tester", pool }, opts);
    result = {
      added: r.added,
      duplicates: r.duplicates,
      skipped: r.skipped,
      lines: r.lines,
      malformed: r.malformed,
      events: r.events,
    };
  } finally {
    pool.close();
  }
  const conn = new Database(db, { readonly: true });
  try {
    return { rows: conn.query("SELECT * FROM events ORDER BY rowid").all(), result };
  } finally {
    conn.close();
  }
}

function claudeFixtures(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? claudeFixtures(p) : p.endsWith(".jsonl") ? [p] : [];
  });
}

test("the planner cuts at line starts, in order, preferring prompt lines", () => {
  const file = join(home.root, "adv.jsonl");
  writeFileSync(file, adversarialTranscript(home.repo, 3));
  const text = readFileSync(file);
  const size = text.length;
  for (const preferPrompts of [true, false]) {
    const slices = planSlices(file, size, "claude", { sliceBytes: 2000, preferPrompts });
    expectLineSlices(slices, text, 5);
  }
  expect(planSlices(file, size, "codex", { sliceBytes: 2000 })).toHaveLength(1);
  expect(planSlices(file, size, "claude")).toHaveLength(1); // small file: one slice
});

test("adversarial transcripts: slices on two workers give the rows of a one-go read, whatever the cuts", async () => {
  for (const seed of [1, 2, 3]) {
    const file = join(home.root, `adv-${seed}.jsonl`);
    writeFileSync(file, adversarialTranscript(home.repo, seed));
    const reference = await ingestFresh(file, { workers: 0 });
    expect(reference.rows.length).toBeGreaterThan(100);
    expect(reference.result.malformed).toBeGreaterThan(0);
    expect(reference.result.skipped).toBeGreaterThan(0);
    for (const sliceBytes of [400, 1500, 5000]) {
      const sliced = await ingestFresh(file, { workers: 2, slices: { sliceBytes, preferPrompts: false } });
      expect(sliced.result).toEqual(reference.result);
      expect(sliced.rows).toEqual(reference.rows);
    }
  }
}, 60_000);

test.skipIf(!existsSync(join(SHARED_TRANSCRIPTS, "claude-code")))(
  "real Claude Code fixtures (needs ../shared): sliced reads equal the one-go read, re-ingest adds nothing",
  async () => {
    const file = join(home.root, "all.jsonl");
    const parts = claudeFixtures(join(SHARED_TRANSCRIPTS, "claude-code"))
      .sort()
      .map((p) => retargetTranscript(readFileSync(p, "utf8"), home.repo));
    writeFileSync(file, parts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join(""));
    const reference = await ingestFresh(file, { workers: 0 });
    expect(reference.result.added).toBeGreaterThan(300);
    for (const slices of [
      { sliceBytes: 20_000, preferPrompts: true },
      { sliceBytes: 7_000, preferPrompts: false },
    ]) {
      const sliced = await ingestFresh(file, { workers: 2, slices });
      expect(sliced.result).toEqual(reference.result);
      expect(sliced.rows).toEqual(reference.rows);
    }
    // the same file again through the workers: every event is a duplicate
    const pool = new ProjectDbPool();
    try {
      const again = await ingestFileOnce(
        file,
        "claude",
        false,
        { projects: listProjects(), userId: "tester", pool },
        { workers: 2, slices: { sliceBytes: 10_000 } },
      );
      expect(again.added).toBe(0);
      expect(again.duplicates).toBe(reference.result.added);
    } finally {
      pool.close();
    }
  },
  60_000,
);
