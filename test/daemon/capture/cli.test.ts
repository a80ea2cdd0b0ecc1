/**
 * `sqrl ingest` and the backfill offered by `sqrl init`, through the compiled binary
 * (SQRL_BIN or dist/sqrl) in isolated homes.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, runSqrl, SQRL_BIN, tempDir } from "../../helpers/sqrl.ts";
import { CAPTURE_FIXTURES, type OpenCodeRows, rewriteFixture, writeOpenCodeStore } from "./helpers.ts";

const SESSION = "11111111-2222-3333-4444-555555555555";
const CLAUDE_TOTAL = 14;
const haveBin = existsSync(SQRL_BIN);
if (!haveBin) console.warn(`capture CLI tests need the compiled binary (${SQRL_BIN}); run \`bun run build\``);

let dir: { path: string; cleanup: () => void };
let env: Record<string, string>;
let repo: string;

beforeEach(() => {
  dir = tempDir("sqrl-ingest-cli-");
  env = isolatedEnv(dir.path);
  mkdirSync(env.HOME!, { recursive: true });
  repo = join(dir.path, "repo");
  mkdirSync(repo, { recursive: true });
});
afterEach(() => dir.cleanup());

function eventCount(root: string): number {
  const db = new Database(join(root, ".ctx", "data.db"), { readonly: true });
  try {
    return (db.query("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function claudeTranscript(root: string, where: string): string {
  mkdirSync(where, { recursive: true });
  const path = join(where, `${SESSION}.jsonl`);
  writeFileSync(
    path,
    rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"), root),
  );
  return path;
}

describe.skipIf(!haveBin)("sqrl ingest", () => {
  test("files: summary with added / duplicates / malformed; a second run adds nothing", () => {
    expect(runSqrl(["init", repo, "--yes", "--no-backfill", "--no-git"], { env }).code).toBe(0);
    const file = claudeTranscript(repo, join(dir.path, "elsewhere"));
    appendFileSync(file, "{broken json\n");
    const first = runSqrl(["ingest", file, "--json"], { env });
    expect(first.code).toBe(0);
    const s1 = JSON.parse(first.stdout);
    expect(s1).toMatchObject({ files: 1, added: CLAUDE_TOTAL, duplicates: 0, malformed: 1, skipped: 0 });
    expect(s1.by_project).toEqual({ [repo]: CLAUDE_TOTAL });
    const second = runSqrl(["ingest", file], { env });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Events added: 0");
    expect(second.stdout).toContain(`Duplicates: ${CLAUDE_TOTAL}`);
    expect(second.stdout).toContain("Malformed lines skipped: 1");
    expect(eventCount(repo)).toBe(CLAUDE_TOTAL);
  });

  test("--backfill reads every source under the isolated homes; --source limits it", () => {
    expect(runSqrl(["init", repo, "--yes", "--no-backfill", "--no-git"], { env }).code).toBe(0);
    claudeTranscript(repo, join(env.CLAUDE_CONFIG_DIR!, "projects", "-repo"));
    const codexName = "rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl";
    const codexDir = join(env.CODEX_HOME!, "sessions", "2026", "03", "01");
    mkdirSync(codexDir, { recursive: true });
    writeFileSync(
      join(codexDir, codexName),
      rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "codex", codexName), "utf8"), repo),
    );
    const onlyCodex = JSON.parse(runSqrl(["ingest", "--backfill", "--source", "codex", "--json"], { env }).stdout);
    expect(onlyCodex).toMatchObject({ files: 1, added: 10 });
    const all = JSON.parse(runSqrl(["ingest", "--backfill", "--json"], { env }).stdout);
    expect(all).toMatchObject({ files: 2, added: CLAUDE_TOTAL, duplicates: 10 });
  });

  test("a big transcript through the insert worker stores every row of the one-thread ingest", () => {
    expect(runSqrl(["init", repo, "--yes", "--no-backfill", "--no-git"], { env }).code).toBe(0);
    const one = rewriteFixture(
      readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"),
      repo,
    ).trimEnd();
    // 40 sessions (session ids made unique per copy, prompts padded), ~5 MiB: two slices of the pipe
    const file = join(dir.path, "big.jsonl");
    const copies: string[] = [];
    for (let i = 0; i < 40; i++)
      copies.push(
        one
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (m) => `${m}-${i}`)
          .replace(/"content": "/g, `"content": "${"lorem ipsum ".repeat(900)}`),
      );
    writeFileSync(file, `${copies.join("\n")}\n`);
    const dump = () => {
      const db = new Database(join(repo, ".ctx", "data.db"), { readonly: true });
      try {
        return db.query("SELECT * FROM events ORDER BY rowid").all();
      } finally {
        db.close();
      }
    };
    const piped = runSqrl(["ingest", file, "--json"], {
      env: { ...env, SQRL_INSERT_WORKER: "1", SQRL_LOG_LEVEL: "4" },
    });
    expect(piped.code).toBe(0);
    expect(piped.stderr).toContain("insert worker: ");
    expect(piped.stderr).not.toContain("insert worker gone");
    expect(piped.stderr).not.toContain("unavailable");
    const pipedRows = dump();
    for (const f of ["", "-wal", "-shm"]) rmSync(join(repo, ".ctx", `data.db${f}`), { force: true });
    const alone = runSqrl(["ingest", file, "--json"], {
      env: { ...env, SQRL_INGEST_WORKERS: "0", SQRL_LOG_LEVEL: "4" },
    });
    expect(alone.code).toBe(0);
    expect(alone.stderr).not.toContain("insert worker");
    const s1 = JSON.parse(piped.stdout);
    const s2 = JSON.parse(alone.stdout);
    expect(statSync(file).size).toBeGreaterThan(4 * 1024 * 1024);
    expect(s1.added).toBeGreaterThan(20 * CLAUDE_TOTAL);
    expect(s1).toEqual(s2);
    expect(pipedRows).toEqual(dump());
  });

  test("bad usage exits 2 with a message that says what to do", () => {
    expect(runSqrl(["init", repo, "--yes", "--no-backfill", "--no-git"], { env }).code).toBe(0);
    const none = runSqrl(["ingest"], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--backfill");
    const badSource = runSqrl(["ingest", "--backfill", "--source", "cursor"], { env });
    expect(badSource.code).toBe(2);
    expect(badSource.stderr).toContain("claude, codex, gemini, qwen, copilot, opencode, git");
  });

  test("without a registered project it says to run sqrl init", () => {
    const r = runSqrl(["ingest", "--backfill"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("sqrl init");
  });
});

describe.skipIf(!haveBin)("sqrl init backfill", () => {
  test("--yes imports the project's existing history (transcripts and git)", () => {
    claudeTranscript(repo, join(env.CLAUDE_CONFIG_DIR!, "projects", "-repo"));
    const git = (...a: string[]) =>
      Bun.spawnSync([
        "git",
        "-C",
        repo,
        "-c",
        "user.name=A",
        "-c",
        "user.email=a@example.com",
        "-c",
        "commit.gpgsign=false",
        ...a,
      ]);
    git("init", "-q");
    writeFileSync(join(repo, "README.md"), "hi\n");
    git("add", "README.md");
    git("commit", "-q", "-m", "initial");
    const r = runSqrl(["init", repo, "--yes", "--json"], { env });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.backfill).toMatchObject({ added: CLAUDE_TOTAL + 1, commits: 1 });
    expect(eventCount(repo)).toBe(CLAUDE_TOTAL + 1);
  });

  test("--yes imports Qwen Code's existing chats of the project too", () => {
    const chats = join(env.QWEN_HOME!, "projects", "-repo", "chats");
    mkdirSync(chats, { recursive: true });
    const text = rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "qwen", "session.jsonl"), "utf8"), repo);
    writeFileSync(join(chats, "5ba6ea76-6781-40be-8985-1a9503537c8b.jsonl"), text);
    const r = runSqrl(["init", repo, "--yes", "--json", "--no-git"], { env });
    expect(r.code, r.stderr).toBe(0);
    // The fixture's 12 events (see test/daemon/capture/qwen.test.ts).
    expect(JSON.parse(r.stdout).backfill).toMatchObject({ added: 12, files: 1 });
    expect(eventCount(repo)).toBe(12);
  });

  test("--yes imports OpenCode's existing sessions of the project from its store", () => {
    const rows = JSON.parse(
      rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "opencode", "session.json"), "utf8"), repo),
    ) as OpenCodeRows;
    writeOpenCodeStore(join(env.XDG_DATA_HOME!, "opencode", "opencode.db"), rows).close();
    const r = runSqrl(["init", repo, "--yes", "--json", "--no-git"], { env });
    expect(r.code, r.stderr).toBe(0);
    // The fixture's 12 events (see test/daemon/capture/opencode.test.ts).
    expect(JSON.parse(r.stdout).backfill).toMatchObject({ added: 12, files: 1 });
    expect(eventCount(repo)).toBe(12);
  });

  test("--yes imports Copilot CLI's existing sessions of the project too", () => {
    const dir = join(env.COPILOT_HOME!, "session-state", "ad129d80-5401-4ec7-b4b7-121ae24e2b2a");
    mkdirSync(dir, { recursive: true });
    for (const f of ["events.jsonl", "workspace.yaml"])
      writeFileSync(join(dir, f), rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "copilot", f), "utf8"), repo));
    const r = runSqrl(["init", repo, "--yes", "--json", "--no-git"], { env });
    expect(r.code, r.stderr).toBe(0);
    // The fixture's 12 events (see test/daemon/capture/copilot.test.ts).
    expect(JSON.parse(r.stdout).backfill).toMatchObject({ added: 12, files: 1 });
    expect(eventCount(repo)).toBe(12);
  });

  test("--no-backfill skips it; without a terminal and without --yes it is not run", () => {
    claudeTranscript(repo, join(env.CLAUDE_CONFIG_DIR!, "projects", "-repo"));
    const skipped = runSqrl(["init", repo, "--yes", "--no-backfill", "--json", "--no-git"], { env });
    expect(JSON.parse(skipped.stdout).backfill).toBeNull();
    const noTty = runSqrl(["init", repo, "--no-git"], { env });
    expect(noTty.code).toBe(0);
    expect(noTty.stdout).not.toContain("Imported history");
    expect(eventCount(repo)).toBe(0);
  });
});
