import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync } from "node:fs";
import {
  appendLines,
  claudeTurns,
  initProject,
  killQuietly,
  makeHome,
  pidAlive,
  projectEvents,
  queryProject,
  readRuntime,
  SQRL_BIN,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
  type GeneratedTurns,
} from "./harness.ts";

const SESSION = "c4a5c4a5-0000-4000-8000-0000000000c1";
/** ~32,000 transcript lines (~13 MB): ingest takes long enough to be interrupted. */
const TURNS = 8_000;

const homes: DaemonHome[] = [];
afterEach(async () => {
  for (const h of homes.splice(0)) await h.cleanup();
});

interface Fingerprint {
  total: number;
  byType: Record<string, number>;
  userRecords: Set<string>;
  duplicates: number;
}

function fingerprint(project: string): Fingerprint {
  const byType: Record<string, number> = {};
  for (const r of queryProject<{ t: string; n: number }>(
    project,
    "SELECT event_type AS t, COUNT(*) AS n FROM events GROUP BY event_type",
  ))
    byType[r.t] = r.n;
  const userRecords = new Set(
    queryProject<{ r: string }>(
      project,
      "SELECT json_extract(content_json, '$.record_id') AS r FROM events WHERE event_type = 'user_message'",
    ).map((x) => x.r),
  );
  // The same source record stored twice shows up as two rows with the same record id, type and tool id.
  const dup = queryProject<{ n: number }>(
    project,
    `SELECT COALESCE(SUM(c - 1), 0) AS n FROM (
       SELECT COUNT(*) AS c FROM events
       GROUP BY json_extract(content_json, '$.record_id'), event_type, COALESCE(json_extract(content_json, '$.tool_use_id'), ''), COALESCE(json_extract(content_json, '$.text'), '')
     )`,
  );
  return { total: projectEvents(project).total, byType, userRecords, duplicates: dup[0]!.n };
}

/** Wait until every user prompt of the transcript is stored and the count stops moving. */
async function ingestComplete(project: string, turns: GeneratedTurns): Promise<Fingerprint> {
  await waitFor(
    "every user record to be stored",
    () =>
      queryProject<{ n: number }>(project, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'user_message'")[0]!
        .n >= turns.userTextUuids.length,
    120_000,
    200,
  );
  let last = -1;
  await waitFor(
    "the event count to settle",
    () => {
      const now = projectEvents(project).total;
      const settled = now === last;
      last = now;
      return settled;
    },
    60_000,
    1_000,
  );
  return fingerprint(project);
}

describe.skipIf(!existsSync(SQRL_BIN))("crash safety of ingest (compiled binary)", () => {
  test("a daemon killed with SIGKILL mid-ingest, then restarted, stores every record exactly once", async () => {
    // Reference: the same transcript ingested without interruption.
    const clean = makeHome();
    homes.push(clean);
    const cleanProject = initProject(clean, "repo");
    const crash = makeHome();
    homes.push(crash);
    const project = initProject(crash, "repo");
    const turnsClean = claudeTurns({
      cwd: cleanProject,
      sessionId: SESSION,
      turns: TURNS,
      startMs: Date.now() - 86_400_000,
    });
    const turns = claudeTurns({ cwd: project, sessionId: SESSION, turns: TURNS, startMs: Date.now() - 86_400_000 });
    appendLines(transcriptPath(clean, cleanProject, SESSION), turnsClean.lines);

    startDaemon(clean);
    const expected = await ingestComplete(cleanProject, turnsClean);
    expect(expected.duplicates).toBe(0);
    expect(expected.userRecords.size).toBe(TURNS);

    // The crash home gets the same transcript the way Claude Code writes it: a backlog first, then
    // appended in pieces (records split across writes) while the daemon ingests; the daemon is killed
    // in the middle and the writer carries on while it is down.
    const path = transcriptPath(crash, project, SESSION);
    const text = `${turns.lines.join("\n")}\n`;
    const pieces = 80;
    const pieceSize = Math.ceil(text.length / pieces);
    let written = 0;
    const writePiece = () => {
      appendFileSync(path, text.slice(written, written + pieceSize));
      written = Math.min(text.length, written + pieceSize);
    };
    for (let i = 0; i < pieces / 4; i++) writePiece();
    const first = startDaemon(crash);
    let atKill = 0;
    while (written < text.length) {
      writePiece();
      await Bun.sleep(15);
      if (!atKill && written > text.length / 2) {
        atKill = await waitFor("ingest to be under way", () => projectEvents(project).total, 60_000, 5);
        killQuietly(first.pid, "SIGKILL");
      }
    }
    await waitFor("the killed daemon to be gone", () => !pidAlive(first.pid));
    const engine = readRuntime(crash, "engine");
    console.error(`daemon killed with ${atKill} of ${expected.total} events stored`);
    expect(atKill).toBeGreaterThan(0);
    expect(atKill).toBeLessThan(expected.total);

    const second = startDaemon(crash);
    expect(second.pid).not.toBe(first.pid);
    const got = await ingestComplete(project, turns);
    expect(got.duplicates).toBe(0);
    expect(got.total).toBe(expected.total);
    expect(got.byType).toEqual(expected.byType);
    expect([...got.userRecords].sort()).toEqual([...turns.userTextUuids].sort());
    if (engine) await waitFor("the old engine to be stopped", () => !pidAlive(engine.pid), 15_000);
  }, 300_000);
});
