/**
 * The insert pipe (this thread builds the rows, the insert worker writes them to SQLite) stores
 * exactly what the in-thread ingest stores — every column of every row, in the same order, into real
 * data.db files of several projects — with the same counts; a second pass finds every event a
 * duplicate; a worker stopped part way loses nothing and doubles nothing; a failed insert throws the
 * in-thread path's error and leaves the pipe usable.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestFileOnce, type FileIngestOptions, type FileIngestResult } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool, ProjectWriteError } from "../../../src/daemon/ingest.ts";
import { insertPipeAnswered, stopInsertWorker } from "../../../src/daemon/insert-pipe.ts";
import { lineSlices } from "../../../src/daemon/slice-plan.ts";
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

const CLAUDE = join(SHARED_TRANSCRIPTS, "claude-code");
const haveShared = existsSync(CLAUDE);
if (!haveShared) console.warn(`insert pipe tests with real transcripts skipped: ${CLAUDE} is missing`);

let home: CaptureHome;
let other: string;
beforeEach(() => {
  home = makeCaptureHome();
  other = home.addRepo("other");
});
afterEach(() => home.restore());
afterAll(() => stopInsertWorker());

/** In this thread, with no worker of any kind. */
const IN_THREAD: FileIngestOptions = { workers: 0, insertWorker: false };
/** Through the insert worker, many slices and small messages (the reader waits for the worker often). */
const PIPED_SMALL: FileIngestOptions = { insertWorker: true, pipe: { sliceBytes: 64 * 1024, batchRows: 37 } };

function claudeFixtures(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? claudeFixtures(p) : p.endsWith(".jsonl") ? [p] : [];
  });
}

/** Real transcripts (cwd → the home's repo) between synthetic ones for the repo, a subfolder, another project and none. */
function mixedTranscript(): string {
  const real = haveShared
    ? claudeFixtures(CLAUDE)
        .sort()
        .map((p) => retargetTranscript(readFileSync(p, "utf8"), home.repo))
        .map((t) => (t.endsWith("\n") ? t : `${t}\n`))
        .join("")
    : "";
  return adversarialTranscript(home.repo, 1) + real + adversarialTranscript(other, 2);
}

function dropDbs(): void {
  for (const root of [home.repo, other])
    for (const f of ["", "-wal", "-shm"]) rmSync(`${projectPaths.db(root)}${f}`, { force: true });
}

function rowsOf(root: string): unknown[] {
  const conn = new Database(projectPaths.db(root), { readonly: true });
  try {
    return conn.query("SELECT * FROM events ORDER BY rowid").all();
  } finally {
    conn.close();
  }
}

async function ingest(file: string, opts: FileIngestOptions): Promise<FileIngestResult> {
  const pool = new ProjectDbPool();
  try {
    return await ingestFileOnce(file, "claude", false, { projects: listProjects(), userId: "tester", pool }, opts);
  } finally {
    pool.close();
  }
}

/** What an ingest returns, without the fields that say how it ran. */
function counts(r: FileIngestResult) {
  return {
    added: r.added,
    duplicates: r.duplicates,
    skipped: r.skipped,
    unmatched: r.unmatched,
    addedByProject: Object.fromEntries(r.addedByProject),
    lines: r.lines,
    malformed: r.malformed,
    events: r.events,
  };
}

interface Run {
  result: FileIngestResult;
  rows: { repo: unknown[]; other: unknown[] };
}

async function ingestFresh(file: string, opts: FileIngestOptions): Promise<Run> {
  dropDbs();
  const result = await ingest(file, opts);
  return { result, rows: { repo: rowsOf(home.repo), other: rowsOf(other) } };
}

test("slices for the pipe are consecutive and cut at line starts", () => {
  const file = join(home.root, "adv.jsonl");
  writeFileSync(file, adversarialTranscript(home.repo, 3));
  const text = readFileSync(file);
  expectLineSlices(lineSlices(file, text.length, 3000), text, 5);
  expect(lineSlices(file, text.length, text.length)).toEqual([{ index: 0, from: 0, until: null }]);
});

test("through the insert worker: every row and every count of the in-thread ingest, and again all duplicates", async () => {
  const file = join(home.root, "mixed.jsonl");
  writeFileSync(file, mixedTranscript());
  const reference = await ingestFresh(file, IN_THREAD);
  expect(reference.result.insertWorker).toBe(false);
  expect(reference.result.added).toBeGreaterThan(haveShared ? 2000 : 200);
  expect(reference.result.addedByProject.get(other)).toBeGreaterThan(50);
  expect(reference.result.skipped).toBeGreaterThan(0);
  expect(reference.result.malformed).toBeGreaterThan(0);
  for (const opts of [{ insertWorker: true }, PIPED_SMALL] satisfies FileIngestOptions[]) {
    const piped = await ingestFresh(file, opts);
    expect(piped.result.insertWorker).toBe(true);
    expect(counts(piped.result)).toEqual(counts(reference.result));
    expect(piped.rows.repo).toEqual(reference.rows.repo);
    expect(piped.rows.other).toEqual(reference.rows.other);
  }
  // the same file again: all duplicates, both ways, the tables unchanged
  const againThread = await ingest(file, IN_THREAD);
  const againPiped = await ingest(file, PIPED_SMALL);
  expect(againPiped.insertWorker).toBe(true);
  expect(againPiped.added).toBe(0);
  expect(counts(againPiped)).toEqual(counts(againThread));
  expect(againPiped.duplicates).toBe(reference.result.added + reference.result.duplicates);
  expect(rowsOf(home.repo)).toEqual(reference.rows.repo);
  expect(rowsOf(other)).toEqual(reference.rows.other);
}, 120_000);

test("a worker stopped part way: the file goes on in this thread, nothing lost, nothing doubled", async () => {
  const file = join(home.root, "mixed.jsonl");
  writeFileSync(file, mixedTranscript());
  const reference = await ingestFresh(file, IN_THREAD);
  let stoppedAt = -1;
  const watch = setInterval(() => {
    if (stoppedAt < 0 && insertPipeAnswered() >= 3) {
      stoppedAt = insertPipeAnswered();
      stopInsertWorker();
    }
  }, 1);
  let piped: Run;
  try {
    piped = await ingestFresh(file, PIPED_SMALL);
  } finally {
    clearInterval(watch);
  }
  expect(stoppedAt).toBeGreaterThanOrEqual(3); // stopped part way, with rows of the file still to come
  expect(piped.result.insertWorker).toBe(true);
  expect(piped.rows.repo).toEqual(reference.rows.repo);
  expect(piped.rows.other).toEqual(reference.rows.other);
  // rows the worker committed but had not yet answered for come back as duplicates here
  expect(piped.result.added + piped.result.duplicates).toBe(reference.result.added + reference.result.duplicates);
  expect(piped.result.skipped).toBe(reference.result.skipped);
  expect(piped.result.events).toBe(reference.result.events);
  // the next file starts a new worker
  const next = await ingestFresh(file, PIPED_SMALL);
  expect(next.result.insertWorker).toBe(true);
  expect(counts(next.result)).toEqual(counts(reference.result));
}, 120_000);

test("a failed insert throws the in-thread path's error, keeps what was committed before it, and frees the pipe", async () => {
  const file = join(home.root, "mixed.jsonl");
  writeFileSync(file, mixedTranscript());
  const reference = await ingestFresh(file, IN_THREAD);
  const refRows = reference.rows.repo as Array<{ hash: string }>;
  // a real SQLite failure part way through the file: a trigger refuses one event of the repo
  const victim = refRows[Math.floor(refRows.length / 2)]!;
  const failing = async (opts: FileIngestOptions) => {
    dropDbs();
    const pool = new ProjectDbPool();
    try {
      pool
        .get(home.repo)
        .exec(
          `CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.hash = '${victim.hash}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
        );
      return await ingestFileOnce(file, "claude", false, { projects: listProjects(), userId: "tester", pool }, opts);
    } catch (err) {
      return err;
    } finally {
      pool.close();
    }
  };
  for (const opts of [IN_THREAD, PIPED_SMALL]) {
    const err = await failing(opts);
    expect(err).toBeInstanceOf(ProjectWriteError);
    expect((err as ProjectWriteError).failures[0]!.root).toBe(home.repo);
    expect((err as Error).message).toContain("refused by the test");
    // what is stored is the start of the reference, in order, and stops before the refused event
    const kept = rowsOf(home.repo) as Array<{ hash: string }>;
    expect(kept.length).toBeLessThan(refRows.length);
    expect(kept).toEqual(refRows.slice(0, kept.length) as typeof kept);
    expect(kept.some((r) => r.hash === victim.hash)).toBe(false);
  }
  // the pipe is free: the next file goes through the worker, and completes what the failure left out
  const pool = new ProjectDbPool();
  try {
    pool.get(home.repo).exec("DROP TRIGGER refuse");
  } finally {
    pool.close();
  }
  const after = await ingest(file, PIPED_SMALL);
  expect(after.insertWorker).toBe(true);
  expect(rowsOf(home.repo).length).toBe(refRows.length);
}, 120_000);
