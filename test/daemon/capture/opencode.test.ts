/**
 * OpenCode's store: the session the real pinned `opencode` 1.18.33 wrote (test/hosts/opencode.test.ts's
 * scripted work; its rows kept in test/fixtures/capture/opencode with the repo path as `/REPO`), loaded
 * into a SQLite file with OpenCode's tables in WAL mode and kept open by a writer, as OpenCode does.
 * It becomes the expected events; rows the writer adds while the daemon's capture runs arrive; a store
 * locked by its writer or corrupt is said once in the log, loses nothing, and capture catches up.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CaptureService } from "../../../src/daemon/capture-service.ts";
import { ProjectDbPool, ingestNormalized } from "../../../src/daemon/ingest.ts";
import { opencodeDbPath, readOpenCode } from "../../../src/daemon/watchers/opencode.ts";
import { type LogSink, log, setLogSinks } from "../../../src/shared/log.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import {
  CAPTURE_FIXTURES,
  type CaptureHome,
  countByType,
  insertOpenCodeRow as insert,
  makeCaptureHome,
  type OpenCodeRows,
  readEvents,
  rewriteFixture,
  waitFor,
  writeOpenCodeStore,
} from "./helpers.ts";

let home: CaptureHome;
let fixture: OpenCodeRows;

/** OpenCode's store at its place, in WAL mode, with the fixture's rows; the writer stays open. */
function openStore(rows: OpenCodeRows): Database {
  return writeOpenCodeStore(opencodeDbPath(), rows);
}

beforeAll(() => {
  home = makeCaptureHome();
  process.env.XDG_DATA_HOME = join(home.root, "xdg-data");
  fixture = JSON.parse(
    rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "opencode", "session.json"), "utf8"), home.repo),
  ) as OpenCodeRows;
});
afterAll(() => {
  delete process.env.XDG_DATA_HOME;
  home.restore();
});

describe("OpenCode", () => {
  test("a real session: request, read, failing and green runs, edit, commit, answer; read twice adds nothing", () => {
    const writer = openStore(fixture);
    try {
      const res = readOpenCode(opencodeDbPath(), 0);
      const pool = new ProjectDbPool();
      const ctx = { projects: listProjects(), userId: "tester", pool };
      ingestNormalized(res.events, ctx);
      const events = readEvents(home.repo);
      expect(events.every((e) => e.source_tool === "opencode")).toBe(true);
      expect(countByType(events)).toEqual({
        assistant_response: 1,
        code_change: 1,
        command_run: 1,
        test_run: 2,
        tool_call: 4,
        tool_result: 2,
        user_message: 1,
      });
      const of = (t: string) => events.filter((e) => e.event_type === t).map((e) => e.content);
      expect(String(of("user_message")[0]!.text)).toContain("The add test fails; fix it and commit.");
      expect(of("test_run").map((c) => [c.runner, c.exit_code, c.is_error, c.passed, c.failed])).toEqual([
        ["npm test", 1, true, 0, 1],
        ["npm test", 0, false, 1, 0],
      ]);
      expect(of("command_run")[0]).toMatchObject({ command: "git commit -qam 'Fix add: it subtracted'", exit_code: 0 });
      expect(events.find((e) => e.event_type === "code_change")!.file_paths).toEqual(["src/add.js"]);
      expect(res.cursor).toBe(Math.max(...fixture.part.map((p) => Number(p.time_updated))));
      ingestNormalized(readOpenCode(opencodeDbPath(), 0).events, ctx);
      expect(readEvents(home.repo)).toHaveLength(events.length);
      pool.close();
    } finally {
      writer.close();
    }
  });

  test("live: rows the writer adds arrive; a store locked by its writer is said once and caught up after", async () => {
    const warnings: string[] = [];
    const sink: LogSink = (r, line) => {
      if (r.level === "warn") warnings.push(line);
    };
    const sinks = setLogSinks([sink]);
    const level = log.level;
    log.level = 1;
    const writer = new Database(opencodeDbPath());
    const service = new CaptureService({ sweepIntervalMs: 300 });
    try {
      await service.start();
      const before = readEvents(home.repo).length;
      const session = fixture.session[0]!;
      const now = Date.now();
      const message = {
        id: "msg_live",
        session_id: session.id!,
        time_created: now,
        time_updated: now,
        data: JSON.stringify({ role: "user", time: { created: now } }),
      };
      const part = (id: string, text: string, t: number) => ({
        id,
        message_id: "msg_live",
        session_id: session.id!,
        time_created: t,
        time_updated: t,
        data: JSON.stringify({ type: "text", text }),
      });
      insert(writer, "message", message);
      insert(writer, "part", part("prt_live_1", "a request written live", now));
      await waitFor(
        () => readEvents(home.repo).some((e) => e.content.text === "a request written live"),
        5000,
        "the live row",
      );
      // The writer takes the store for itself: capture cannot read, says so once, loses nothing.
      writer.exec("PRAGMA locking_mode = EXCLUSIVE");
      writer.exec("BEGIN EXCLUSIVE");
      insert(writer, "part", part("prt_live_2", "written while locked", now + 1));
      writer.exec("COMMIT");
      writeFileSync(join(home.root, "xdg-data", "opencode", "opencode.db-touch"), "x"); // a change in the folder
      await waitFor(() => warnings.some((w) => w.includes("Cannot read OpenCode's store")), 15_000, "the warning");
      writer.exec("PRAGMA locking_mode = NORMAL");
      writer.exec("SELECT 1 FROM part LIMIT 1"); // releases the exclusive lock
      insert(writer, "part", part("prt_live_3", "after the lock", now + 2));
      await waitFor(() => readEvents(home.repo).some((e) => e.content.text === "after the lock"), 10_000, "catch-up");
      const texts = readEvents(home.repo).map((e) => e.content.text);
      expect(texts).toContain("written while locked");
      expect(readEvents(home.repo).length).toBe(before + 3);
      expect(warnings.filter((w) => w.includes("Cannot read OpenCode's store"))).toHaveLength(1);
    } finally {
      await service.stop();
      writer.close();
      setLogSinks(sinks);
      log.level = level;
    }
  });

  test("a corrupt store: one clear error, nothing read", () => {
    const path = join(home.root, "corrupt.db");
    writeFileSync(path, "SQLite format 3\0 this is not a database, it was cut short");
    expect(() => readOpenCode(path, 0)).toThrow(/not a database|malformed|corrupt/i);
  });
});
