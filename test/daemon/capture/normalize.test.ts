/**
 * The normalizers on small hand-written transcripts in the real formats (test/fixtures/capture):
 * what each record becomes, with the details (joins, exit codes, test counts, paths, sidechains).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ingestFileOnce, sniffSource } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { ClaudeCodeNormalizer } from "../../../src/daemon/normalize/claude-code.ts";
import { commitEvent, GIT_LOG_FORMAT, parseGitLog } from "../../../src/daemon/normalize/git.ts";
import { codexSource } from "../../../src/daemon/watchers/codex.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import {
  CAPTURE_FIXTURES,
  countByType,
  installFixture,
  makeCaptureHome,
  readEvents,
  rewriteFixture,
  type CaptureHome,
  type StoredEvent,
} from "./helpers.ts";

const SESSION = "11111111-2222-3333-4444-555555555555";

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

async function ingestInto(repo: string, fixture: string, dest: string): Promise<StoredEvent[]> {
  const path = installFixture(join(CAPTURE_FIXTURES, fixture), dest, repo);
  const { source, document } = sniffSource(path);
  const res = await ingestFileOnce(path, source, document, { projects: listProjects(), userId: "tester", pool });
  expect(res.malformed).toBe(0);
  expect(res.skipped).toBe(0);
  return readEvents(repo);
}

const byType = (events: StoredEvent[], t: string) => events.filter((e) => e.event_type === t);

describe("Claude Code", () => {
  let events: StoredEvent[];
  let repo: string;
  beforeAll(async () => {
    repo = home.addRepo("claude-repo");
    events = await ingestInto(
      repo,
      `claude/-REPO/${SESSION}.jsonl`,
      join(home.claudeDir, "projects", "-x", `${SESSION}.jsonl`),
    );
  });

  test("event types of the session", () => {
    expect(countByType(events)).toEqual({
      assistant_response: 2,
      code_change: 1,
      error: 2,
      session_summary: 2,
      test_run: 2,
      tool_call: 3,
      tool_result: 1,
      user_message: 1,
    });
    expect(events.every((e) => e.session_id === SESSION && e.source_tool === "claude_code")).toBe(true);
  });

  test("old summary record and compaction summary become session_summary", () => {
    const texts = byType(events, "session_summary").map((e) => e.content.text as string);
    expect(texts).toContain("Fix the flaky login test");
    expect(texts.some((t) => t.startsWith("This session is being continued"))).toBe(true);
  });

  test("split assistant lines of one message.id are joined; thinking is not stored", () => {
    const texts = byType(events, "assistant_response").map((e) => e.content.text);
    expect(texts).toContain("All green.\n\nI replaced the plain comparison with verify().");
    expect(texts).toContain("I'll run the tests first.");
    expect(JSON.stringify(events)).not.toContain('Run the tests."');
  });

  test("Bash tool_use is a tool_call; its result is a test_run with command, exit code and counts", () => {
    const calls = byType(events, "tool_call");
    expect(calls.map((c) => c.content.tool).sort()).toEqual(["Bash", "Bash", "Read"]);
    const runs = byType(events, "test_run").sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(runs[0]!.content).toMatchObject({
      command: "pnpm test",
      exit_code: 1,
      is_error: true,
      runner: "pnpm test",
      passed: 4,
      failed: 1,
      tool_use_id: "toolu_1",
    });
    expect(runs[1]!.content).toMatchObject({
      exit_code: 0,
      is_error: false,
      runner: "pnpm test",
      passed: 5,
      failed: 0,
    });
    expect(runs[1]!.content.command).toBe(`cd ${repo} && pnpm test 2>&1 | tail -5`);
  });

  test("Edit is a code_change with repo-relative paths and a diff summary", () => {
    const [change] = byType(events, "code_change");
    expect(change!.file_paths).toEqual(["src/login.ts"]);
    expect(change!.content.diff_summary).toBe("src/login.ts: -1 +2 lines (if (await verify(user.hash, input)) {)");
    expect(change!.content.tool).toBe("Edit");
  });

  test("a failed non-shell tool is an error; an API error record is an error", () => {
    const errors = byType(events, "error");
    const read = errors.find((e) => e.content.tool === "Read");
    expect(read?.content).toMatchObject({ text: "File does not exist.", is_error: true, tool_use_id: "toolu_3" });
    expect(read?.file_paths).toEqual(["src/missing.ts"]);
    expect(errors.some((e) => String(e.content.text).includes("Overloaded"))).toBe(true);
    expect(byType(events, "tool_result")[0]!.content).toMatchObject({ tool: "Edit", is_error: false });
  });

  test("meta records, local-command output, progress and unknown types are not events", () => {
    const all = JSON.stringify(events.map((e) => e.content.text ?? ""));
    expect(all).not.toContain("Bye!");
    expect(all).not.toContain("Caveat");
    expect(events.some((e) => (e.content.raw as { type?: string })?.type === "weird-new-record")).toBe(false);
  });

  test("subagent files are captured and marked as sidechain", async () => {
    const sub = home.addRepo("claude-sub");
    const evs = await ingestInto(
      sub,
      `claude/-REPO/${SESSION}/subagents/agent-a1b2c3d.jsonl`,
      join(home.claudeDir, "projects", "-y", SESSION, "subagents", "agent-a1b2c3d.jsonl"),
    );
    expect(countByType(evs)).toEqual({ assistant_response: 1, user_message: 1 });
    expect(evs.every((e) => e.content.sidechain === true && e.session_id === SESSION)).toBe(true);
  });

  test("a tool result after a restart finds its tool_use in the stored events", () => {
    const lines = readFileSync(join(home.claudeDir, "projects", "-x", `${SESSION}.jsonl`), "utf8").split("\n");
    const resultLine = lines.find(
      (l) => l.includes('"tool_use_id": "toolu_4"') || l.includes('"tool_use_id":"toolu_4"'),
    )!;
    const looked: string[] = [];
    const n = new ClaudeCodeNormalizer({
      lookupToolUse: (_cwd, _session, id) => {
        looked.push(id);
        const stored = events.find((e) => e.content.tool_use_id === id && e.event_type === "tool_call");
        return stored ? { tool: stored.content.tool as string, input: stored.content.input } : undefined;
      },
    });
    const [ev] = n.push(JSON.parse(resultLine), 0);
    expect(looked).toEqual(["toolu_4"]);
    expect(ev!.event_type).toBe("test_run");
    expect(ev!.content.command).toContain("pnpm test");
  });
});

describe("Codex CLI", () => {
  const CODEX_FIXTURE = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
  const compressedFixture = (repo: string) =>
    Bun.zstdCompressSync(
      Buffer.from(rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "codex", CODEX_FIXTURE), "utf8"), repo)),
    );

  test("event_msg text stream, shell calls as command/test runs, apply_patch as code_change", async () => {
    const repo = home.addRepo("codex-repo");
    const name = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
    const events = await ingestInto(repo, `codex/${name}`, join(home.codexDir, "sessions", "2026", "03", "01", name));
    expect(countByType(events)).toEqual({
      assistant_response: 1,
      code_change: 2,
      test_run: 1,
      tool_call: 2,
      tool_result: 3,
      user_message: 1,
    });
    expect(byType(events, "user_message")[0]!.content.text).toBe("Make the go tests pass");
    expect(byType(events, "test_run")[0]!.content).toMatchObject({
      command: "go test ./...",
      exit_code: 1,
      runner: "go test",
      passed: 1,
      failed: 1,
      is_error: true,
    });
    const changes = byType(events, "code_change");
    expect(changes.flatMap((c) => c.file_paths).sort()).toEqual(["internal/login.go", "internal/login_test.go"]);
    expect(changes.map((c) => c.content.diff_summary).sort()).toEqual([
      "internal/login.go: update -1 +1 lines",
      "internal/login_test.go: add -0 +1 lines",
    ]);
    expect(events.every((e) => e.session_id === "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")).toBe(true);
  });

  test("a rollout Codex compressed to .jsonl.zst gives the same events; after the plain file, none new", async () => {
    const name = CODEX_FIXTURE;
    const zstOnly = home.addRepo("codex-zst");
    const dest = join(home.codexDir, "sessions", "2026", "03", "02", `${name}.zst`);
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, compressedFixture(zstOnly));
    expect(sniffSource(dest)).toEqual({ source: "codex", document: true });
    expect(codexSource.matches(dest)).toBe(true);
    const res = await ingestFileOnce(dest, "codex", true, { projects: listProjects(), userId: "tester", pool });
    expect(res.malformed).toBe(0);
    const events = readEvents(zstOnly);
    expect(countByType(events)).toEqual({
      assistant_response: 1,
      code_change: 2,
      test_run: 1,
      tool_call: 2,
      tool_result: 3,
      user_message: 1,
    });
    expect(events.every((e) => e.session_id === "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")).toBe(true);

    // the plain file first, then Codex compresses it: dedup absorbs every record
    const both = home.addRepo("codex-both");
    const plainPath = join(home.codexDir, "sessions", "2026", "03", "03", name);
    installFixture(join(CAPTURE_FIXTURES, "codex", name), plainPath, both);
    const first = await ingestFileOnce(plainPath, "codex", false, { projects: listProjects(), userId: "tester", pool });
    writeFileSync(`${plainPath}.zst`, Bun.zstdCompressSync(readFileSync(plainPath)));
    const again = await ingestFileOnce(`${plainPath}.zst`, "codex", true, {
      projects: listProjects(),
      userId: "tester",
      pool,
    });
    expect(first.added).toBe(10);
    expect(again.added).toBe(0);
    expect(again.duplicates).toBe(10);
  });

  test("a damaged or half-written .jsonl.zst is counted malformed, never fatal", async () => {
    const repo = home.addRepo("codex-bad-zst");
    const dest = join(home.codexDir, "sessions", "2026", "03", "04", `${CODEX_FIXTURE}.zst`);
    mkdirSync(dirname(dest), { recursive: true });
    const whole = compressedFixture(repo);
    writeFileSync(dest, whole.subarray(0, Math.floor(whole.length / 2)));
    const res = await ingestFileOnce(dest, "codex", true, { projects: listProjects(), userId: "tester", pool });
    expect(res.malformed).toBe(1);
    expect(res.added).toBe(0);
  });
});

describe("Gemini CLI", () => {
  test("JSONL: last write wins per message id, $rewindTo drops the rewound turn", async () => {
    const repo = home.addRepo("gemini-repo");
    const events = await ingestInto(
      repo,
      "gemini/session-2026-04-01T08-00-2b3c4d5e.jsonl",
      join(home.geminiDir, "tmp", "somehash", "chats", "session-2026-04-01T08-00-2b3c4d5e.jsonl"),
    );
    expect(countByType(events)).toEqual({
      assistant_response: 1,
      code_change: 1,
      test_run: 1,
      tool_call: 1,
      tool_result: 1,
      user_message: 2,
    });
    const users = byType(events, "user_message").map((e) => e.content.text);
    expect(users).toEqual(["Run the python tests", "no — fix the code, keep the test"]);
    expect(JSON.stringify(events)).not.toContain("Deleting it.");
    expect(byType(events, "test_run")[0]!.content).toMatchObject({
      runner: "pytest",
      passed: 2,
      failed: 1,
      exit_code: 1,
      is_error: true,
    });
    expect(byType(events, "code_change")[0]!.file_paths).toEqual(["app/auth.py"]);
  });

  test("rewritten JSON document: tool calls, failed tool as error, info skipped", async () => {
    const repo = home.addRepo("gemini-doc");
    const events = await ingestInto(
      repo,
      "gemini/session-2025-10-01T12-00-9f8e7d6c.json",
      join(home.geminiDir, "tmp", "otherhash", "chats", "session-2025-10-01T12-00-9f8e7d6c.json"),
    );
    expect(countByType(events)).toEqual({
      assistant_response: 1,
      code_change: 1,
      error: 1,
      tool_call: 1,
      tool_result: 1,
      user_message: 1,
    });
    expect(byType(events, "error")[0]!.content).toMatchObject({ text: "Permission denied", tool: "write_file" });
  });

  test("the project comes from ~/.gemini/projects.json when the folder is a slug", async () => {
    const repo = home.addRepo("gemini-slug");
    await Bun.write(join(home.geminiDir, "projects.json"), JSON.stringify({ projects: { [repo]: "gemini-slug" } }));
    const dest = join(home.geminiDir, "tmp", "gemini-slug", "chats", "session-2025-10-01T12-00-9f8e7d6c.json");
    installFixture(join(CAPTURE_FIXTURES, "gemini/session-2025-10-01T12-00-9f8e7d6c.json"), dest, "/nowhere");
    const res = await ingestFileOnce(dest, "gemini", true, { projects: listProjects(), userId: "tester", pool });
    expect(res.skipped).toBe(0);
    expect(readEvents(repo).length).toBe(6);
  });
});

describe("git", () => {
  test("git log output becomes git_commit events with files and stats", () => {
    const out = `\u001eabc123\u001fdef456\u001fAda <ada@example.com>\u001f2026-01-02T03:04:05+01:00\u001fFix login\n\nUse verify()\n\u001f\n\n3\t1\tsrc/login.ts\n-\t-\tassets/logo.png\n`;
    expect(GIT_LOG_FORMAT).toContain("%H");
    const [c] = parseGitLog(out);
    expect(c).toEqual({
      hash: "abc123",
      parents: ["def456"],
      author: "Ada <ada@example.com>",
      date: "2026-01-02T03:04:05+01:00",
      message: "Fix login\n\nUse verify()",
      files: ["src/login.ts", "assets/logo.png"],
      insertions: 3,
      deletions: 1,
    });
    const e = commitEvent(c!, "/r");
    expect(e.event_type).toBe("git_commit");
    expect(e.timestamp).toBe("2026-01-02T02:04:05.000Z");
    expect(e.content.commit?.files).toEqual(["src/login.ts", "assets/logo.png"]);
  });
});
