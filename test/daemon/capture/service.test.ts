/**
 * CaptureService end to end in-process: real watchers on temp CLAUDE_CONFIG_DIR / CODEX_HOME /
 * GEMINI_HOME, a real git repo, real data.db and state.db files.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CaptureService } from "../../../src/daemon/capture-service.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import {
  CAPTURE_FIXTURES,
  countByType,
  installFixture,
  makeCaptureHome,
  readEvents,
  rewriteFixture,
  waitFor,
  type CaptureHome,
} from "./helpers.ts";

const SESSION = "11111111-2222-3333-4444-555555555555";
const CLAUDE_FIXTURE = join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`);
const CLAUDE_COUNTS = {
  assistant_response: 2,
  code_change: 1,
  error: 2,
  session_summary: 2,
  test_run: 2,
  tool_call: 3,
  tool_result: 1,
  user_message: 1,
};
const CLAUDE_TOTAL = Object.values(CLAUDE_COUNTS).reduce((a, b) => a + b, 0);

function git(repo: string, ...args: string[]): void {
  const res = Bun.spawnSync(
    [
      "git",
      "-C",
      repo,
      "-c",
      "user.name=Ada",
      "-c",
      "user.email=ada@example.com",
      "-c",
      "commit.gpgsign=false",
      ...args,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (res.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${res.stderr.toString()}`);
}

let home: CaptureHome;
let service: CaptureService | null = null;
let added: Array<[string, number]> = [];

beforeEach(() => {
  home = makeCaptureHome("[watch]\ngit = false\n");
  added = [];
});
afterEach(async () => {
  await service?.stop();
  service = null;
  home.restore();
});

function startService(): Promise<void> {
  service = new CaptureService({ onEvents: (p, n) => added.push([p, n]), sweepIntervalMs: 300 });
  return service.start();
}

describe("CaptureService", () => {
  test("start scans existing transcripts of every source; status lists them", async () => {
    installFixture(CLAUDE_FIXTURE, join(home.claudeDir, "projects", "-repo", `${SESSION}.jsonl`), home.repo);
    installFixture(
      join(CAPTURE_FIXTURES, "claude", "-REPO", SESSION, "subagents", "agent-a1b2c3d.jsonl"),
      join(home.claudeDir, "projects", "-repo", SESSION, "subagents", "agent-a1b2c3d.jsonl"),
      home.repo,
    );
    const codexName = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
    installFixture(
      join(CAPTURE_FIXTURES, "codex", codexName),
      join(home.codexDir, "sessions", "2026", "03", "01", codexName),
      home.repo,
    );
    installFixture(
      join(CAPTURE_FIXTURES, "gemini", "session-2026-04-01T08-00-2b3c4d5e.jsonl"),
      join(home.geminiDir, "tmp", "h1", "chats", "session-2026-04-01T08-00-2b3c4d5e.jsonl"),
      home.repo,
    );
    await startService();
    // The Gemini session's last message is held until the file has been quiet for a moment.
    await waitFor(
      () => readEvents(home.repo).filter((e) => e.source_tool === "gemini_cli").length === 7,
      5000,
      "gemini events",
    );
    const events = readEvents(home.repo);
    expect(countByType(events.filter((e) => e.source_tool === "claude_code"))).toEqual({
      ...CLAUDE_COUNTS,
      assistant_response: 3,
      user_message: 2,
    });
    expect(events.filter((e) => e.source_tool === "codex").length).toBe(10);
    const status = service!.status();
    expect(status.map((s) => s.name)).toEqual(["claude", "codex", "gemini", "qwen", "copilot", "opencode", "git"]);
    expect(status.find((s) => s.name === "claude")).toMatchObject({
      enabled: true,
      files: 2,
      path: join(home.claudeDir, "projects"),
    });
    expect(status.find((s) => s.name === "git")?.enabled).toBe(false);
    expect(added.reduce((a, [, n]) => a + n, 0)).toBe(events.length);
  });

  test("a transcript appended in pieces (partial lines, 1 ms bursts) ends with every record stored once", async () => {
    await startService();
    const path = join(home.claudeDir, "projects", "-live", `${SESSION}.jsonl`);
    mkdirSync(join(home.claudeDir, "projects", "-live"), { recursive: true });
    const bytes = Buffer.from(rewriteFixture(readFileSync(CLAUDE_FIXTURE, "utf8"), home.repo));
    writeFileSync(path, "");
    let pos = 0;
    let seed = 3;
    while (pos < bytes.length) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = 1 + (seed % 211);
      appendFileSync(path, bytes.subarray(pos, pos + n));
      pos += n;
      await Bun.sleep(1);
    }
    await waitFor(
      () => existsSync(projectPaths.db(home.repo)) && readEvents(home.repo).length === CLAUDE_TOTAL,
      8000,
      "all events",
    );
    await Bun.sleep(700); // past the idle flush and a sweep: nothing more may arrive
    const events = readEvents(home.repo);
    expect(countByType(events)).toEqual(CLAUDE_COUNTS);
    const state = new Database(join(home.sqrlHome, "state.db"), { readonly: true });
    const row = state.query("SELECT offset, size, malformed FROM file_offsets WHERE path = ?").get(path) as {
      offset: number;
      size: number;
      malformed: number;
    };
    state.close();
    expect(row).toEqual({ offset: bytes.length, size: bytes.length, malformed: 0 });
  });

  test("restart resumes from the persisted offsets: nothing re-added, new lines captured", async () => {
    const path = installFixture(
      CLAUDE_FIXTURE,
      join(home.claudeDir, "projects", "-repo", `${SESSION}.jsonl`),
      home.repo,
    );
    await startService();
    await waitFor(() => readEvents(home.repo).length === CLAUDE_TOTAL, 5000, "first scan");
    await service!.stop();
    added = [];
    const extra = {
      type: "user",
      uuid: "u-late",
      sessionId: SESSION,
      cwd: home.repo,
      timestamp: "2026-02-10T11:00:00.000Z",
      message: { role: "user", content: "one more thing: keep the audit log" },
    };
    appendFileSync(path, `${JSON.stringify(extra)}\n`);
    await startService();
    await waitFor(() => readEvents(home.repo).length === CLAUDE_TOTAL + 1, 5000, "the late line");
    expect(added).toEqual([[home.repo, 1]]);
  });

  test("a project registered while running gets its existing history after refreshProjects", async () => {
    await startService();
    const late = join(home.root, "late");
    installFixture(CLAUDE_FIXTURE, join(home.claudeDir, "projects", "-late", `${SESSION}.jsonl`), late);
    await Bun.sleep(600); // seen and skipped: not registered yet
    expect(existsSync(projectPaths.db(late))).toBe(false);
    home.addRepo("late");
    await service!.refreshProjects();
    expect(countByType(readEvents(late))).toEqual(CLAUDE_COUNTS);
  });

  test("a source folder that appears after start is picked up (the tool ran for the first time)", async () => {
    await startService(); // no $CODEX_HOME/sessions yet
    const name = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
    installFixture(
      join(CAPTURE_FIXTURES, "codex", name),
      join(home.codexDir, "sessions", "2026", "03", "01", name),
      home.repo,
    );
    await waitFor(
      () => existsSync(projectPaths.db(home.repo)) && readEvents(home.repo).length === 10,
      8000,
      "codex events",
    );
    expect(service!.status().find((s) => s.name === "codex")?.files).toBe(1);
  });

  test("Codex compresses a tailed rollout to .jsonl.zst and deletes it: nothing is lost or stored twice", async () => {
    const name = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
    const plain = join(home.codexDir, "sessions", "2026", "03", "01", name);
    installFixture(join(CAPTURE_FIXTURES, "codex", name), plain, home.repo);
    await startService();
    await waitFor(
      () => existsSync(projectPaths.db(home.repo)) && readEvents(home.repo).length === 10,
      8000,
      "codex events",
    );
    writeFileSync(`${plain}.zst`, Bun.zstdCompressSync(readFileSync(plain)));
    rmSync(plain);
    await waitFor(() => service!.status().find((s) => s.name === "codex")?.files === 1, 8000, "the .zst file tracked");
    await Bun.sleep(300);
    expect(readEvents(home.repo).length).toBe(10);
    // an older rollout that was already compressed when sqrl first saw it is read whole
    const older = join(
      home.codexDir,
      "sessions",
      "2026",
      "02",
      "01",
      "rollout-2026-02-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeef.jsonl.zst",
    );
    mkdirSync(dirname(older), { recursive: true });
    const otherSession = Bun.zstdDecompressSync(readFileSync(`${plain}.zst`))
      .toString()
      .replaceAll("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeef");
    writeFileSync(older, Bun.zstdCompressSync(Buffer.from(otherSession)));
    await waitFor(() => readEvents(home.repo).length === 20, 8000, "events of the older compressed rollout");
  });

  test("records of unregistered paths are skipped; a subfolder cwd maps to the longest registered root", async () => {
    const nested = home.addRepo("repo/packages/api");
    const lines = [
      {
        type: "user",
        uuid: "x1",
        sessionId: "s",
        cwd: "/somewhere/else",
        timestamp: "2026-02-10T10:00:00.000Z",
        message: { role: "user", content: "not ours" },
      },
      {
        type: "user",
        uuid: "x2",
        sessionId: "s",
        cwd: join(home.repo, "docs"),
        timestamp: "2026-02-10T10:00:01.000Z",
        message: { role: "user", content: "root project" },
      },
      {
        type: "user",
        uuid: "x3",
        sessionId: "s",
        cwd: join(nested, "src"),
        timestamp: "2026-02-10T10:00:02.000Z",
        message: { role: "user", content: "nested project" },
      },
    ];
    const path = join(home.claudeDir, "projects", "-mixed", "s.jsonl");
    mkdirSync(join(home.claudeDir, "projects", "-mixed"), { recursive: true });
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    await startService();
    expect(readEvents(home.repo).map((e) => e.content.text)).toEqual(["root project"]);
    expect(readEvents(nested).map((e) => e.content.text)).toEqual(["nested project"]);
  });
});

describe("CaptureService git", () => {
  test("commits of a registered repo become git_commit events, new commits while running too", async () => {
    await home.restore();
    home = makeCaptureHome("[watch]\nclaude = false\ncodex = false\ngemini = false\n");
    git(home.repo, "init", "-q", "-b", "main");
    writeFileSync(join(home.repo, "a.txt"), "one\ntwo\n");
    git(home.repo, "add", "a.txt");
    git(home.repo, "commit", "-q", "-m", "first commit");
    await startService();
    let commits = readEvents(home.repo).filter((e) => e.event_type === "git_commit");
    expect(commits.length).toBe(1);
    expect(commits[0]!.content.commit).toMatchObject({
      message: "first commit",
      files: ["a.txt"],
      insertions: 2,
      deletions: 0,
      author: "Ada <ada@example.com>",
    });
    writeFileSync(join(home.repo, "b.txt"), "three\n");
    git(home.repo, "add", "b.txt");
    git(home.repo, "commit", "-q", "-m", "second commit");
    await waitFor(
      () => readEvents(home.repo).filter((e) => e.event_type === "git_commit").length === 2,
      8000,
      "second commit",
    );
    commits = readEvents(home.repo).filter((e) => e.event_type === "git_commit");
    // Both commits may share one second: compare by content, not by storage order.
    expect(commits.map((c) => c.content.text).sort()).toEqual(["first commit", "second commit"]);
    expect(commits.find((c) => c.content.text === "second commit")!.file_paths).toEqual(["b.txt"]);
  });
});
