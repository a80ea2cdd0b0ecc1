/**
 * Qwen Code chats: the session the real pinned `qwen` 0.24.4 wrote in test/hosts/qwen.test.ts's
 * scripted work (kept in test/fixtures/capture/qwen with its repo path as `/REPO`) becomes the
 * expected events in the repo of its cwd, found by the watcher's file rule, sniffed as Qwen Code,
 * and read a second time adds nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ingestFileOnce, sniffSource } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { qwenSource } from "../../../src/daemon/watchers/qwen.ts";
import { listSourceFiles } from "../../../src/daemon/watchers/transcript-source.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import {
  CAPTURE_FIXTURES,
  type CaptureHome,
  countByType,
  installFixture,
  makeCaptureHome,
  readEvents,
} from "./helpers.ts";

let home: CaptureHome;
let pool: ProjectDbPool;

beforeAll(() => {
  home = makeCaptureHome();
  pool = new ProjectDbPool();
});
afterAll(() => {
  pool.close();
  home.restore();
});

describe("Qwen Code", () => {
  test("a real session: request, read, failing and green test runs, edit, commit, answer", async () => {
    const dest = join(home.qwenDir, "projects", "-REPO", "chats", "5ba6ea76-6781-40be-8985-1a9503537c8b.jsonl");
    const path = installFixture(join(CAPTURE_FIXTURES, "qwen", "session.jsonl"), dest, home.repo);
    expect(listSourceFiles(qwenSource)).toEqual([path]);
    expect(sniffSource(path)).toEqual({ source: "qwen", document: false });
    const ctx = { projects: listProjects(), userId: "tester", pool };
    const res = await ingestFileOnce(path, "qwen", false, ctx);
    expect(res.malformed).toBe(0);
    const events = readEvents(home.repo);
    expect(events.every((e) => e.source_tool === "qwen_code")).toBe(true);
    expect(countByType(events)).toEqual({
      assistant_response: 1,
      code_change: 1,
      command_run: 1,
      test_run: 2,
      // read_file and the three shell calls (each shell outcome is its command_run / test_run)
      tool_call: 4,
      // read_file's, and the edit's
      tool_result: 2,
      user_message: 1,
    });
    const of = (t: string) => events.filter((e) => e.event_type === t).map((e) => e.content);
    expect(of("user_message")[0]!.text).toBe("The add test fails; fix it and commit.");
    expect(of("test_run").map((c) => [c.runner, c.exit_code, c.is_error, c.passed, c.failed])).toEqual([
      ["npm test", 1, true, 0, 1],
      ["npm test", 0, false, 1, 0],
    ]);
    expect(of("command_run")[0]).toMatchObject({ command: "git commit -qam 'Fix add: it subtracted'", exit_code: 0 });
    const edit = events.find((e) => e.event_type === "code_change")!;
    expect(edit.file_paths).toEqual(["src/add.js"]);
    expect(of("tool_result").map((c) => [c.tool, c.is_error])).toEqual([
      ["read_file", false],
      ["edit", false],
    ]);
    expect(new Set(events.map((e) => e.session_id))).toEqual(new Set(["5ba6ea76-6781-40be-8985-1a9503537c8b"]));
    // Read again (a restart without offsets): dedup keeps one copy of each.
    await ingestFileOnce(path, "qwen", false, ctx);
    expect(readEvents(home.repo)).toHaveLength(events.length);
  });
});
