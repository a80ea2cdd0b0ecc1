/**
 * GitHub Copilot CLI sessions: the session the real pinned `copilot` 1.0.102 wrote in
 * test/hosts/copilot.test.ts's scripted work (its events.jsonl and workspace.yaml kept in
 * test/fixtures/capture/copilot with the repo path as `/REPO`, the long system-prompt record left
 * out) becomes the expected events in the repo of its cwd; a read resumed after `session.start`
 * (a restart mid-file) still finds the project through workspace.yaml; read twice adds nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ingestFileOnce, sniffSource } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { CopilotNormalizer } from "../../../src/daemon/normalize/copilot.ts";
import { copilotSource, workspaceCwd } from "../../../src/daemon/watchers/copilot.ts";
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

const SESSION = "ad129d80-5401-4ec7-b4b7-121ae24e2b2a";
let home: CaptureHome;
let pool: ProjectDbPool;
let path: string;

beforeAll(() => {
  home = makeCaptureHome();
  pool = new ProjectDbPool();
  const dir = join(home.copilotDir, "session-state", SESSION);
  path = installFixture(join(CAPTURE_FIXTURES, "copilot", "events.jsonl"), join(dir, "events.jsonl"), home.repo);
  installFixture(join(CAPTURE_FIXTURES, "copilot", "workspace.yaml"), join(dir, "workspace.yaml"), home.repo);
});
afterAll(() => {
  pool.close();
  home.restore();
});

describe("Copilot CLI", () => {
  test("a real session: request, read, failing and green runs, edit, commit, answer", async () => {
    expect(listSourceFiles(copilotSource)).toEqual([path]);
    expect(sniffSource(path)).toEqual({ source: "copilot", document: false });
    const ctx = { projects: listProjects(), userId: "tester", pool };
    const res = await ingestFileOnce(path, "copilot", false, ctx);
    expect(res.malformed).toBe(0);
    const events = readEvents(home.repo);
    expect(events.every((e) => e.source_tool === "copilot_cli" && e.session_id === SESSION)).toBe(true);
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
    expect(of("user_message")[0]!.text).toBe("The add test fails; fix it.");
    expect(of("test_run").map((c) => [c.runner, c.exit_code, c.is_error, c.passed, c.failed])).toEqual([
      ["npm test", 1, true, 0, 1],
      ["npm test", 0, false, 1, 0],
    ]);
    expect(of("command_run")[0]).toMatchObject({ command: "git commit -qam 'Fix add: it subtracted'", exit_code: 0 });
    expect(events.find((e) => e.event_type === "code_change")!.file_paths).toEqual(["src/add.js"]);
    await ingestFileOnce(path, "copilot", false, ctx);
    expect(readEvents(home.repo)).toHaveLength(events.length);
  });

  test("resumed after session.start, the cwd comes from workspace.yaml", () => {
    expect(workspaceCwd(path)).toBe(home.repo);
    const n = new CopilotNormalizer({ filePath: path, resolveCwd: () => workspaceCwd(path) });
    const lines = readFileSync(path, "utf8").trim().split("\n").slice(1);
    const events = lines.flatMap((l, i) => n.push(JSON.parse(l), i));
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.cwd))).toEqual(new Set([home.repo]));
    expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([SESSION]));
  });
});
