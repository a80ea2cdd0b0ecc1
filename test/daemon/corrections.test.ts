/**
 * A person's correction is final (issue 29 item 1), end to end: the compiled binary, a real git
 * repository with CLAUDE.md and package.json, a real Claude Code session (../shared), the running
 * daemon, and the page's own API. Edits, forgets, pins and wrong marks — on items from the session and
 * from package.json — survive a new episode, a daemon restart, `sqrl reprocess` and a re-read of the
 * changed repository files. CLAUDE.md is never copied into memory (issue 26: the agent reads it already). Also: history imported today is not born decayed for
 * disuse (item 3), and `sqrl show` and the page say the same about decay.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SHARED_DIR, SQRL_BIN } from "../helpers/sqrl.ts";
import { postLogin } from "../ui/harness.ts";
import { claudeSlug, daemonStatus, makeHome, queryProject, startDaemon, waitFor, type DaemonHome } from "./harness.ts";

const SESSION = join(
  SHARED_DIR,
  "fixtures",
  "transcripts",
  "claude-code",
  "entireio-cli",
  "b1",
  "5d3b4e29e9",
  "0",
  "full.jsonl",
);
const ready = existsSync(SQRL_BIN) && existsSync(SESSION);
if (!existsSync(SESSION)) process.stderr.write(`corrections.test.ts: skipped, ${SESSION} is missing (../shared)\n`);

const CLAUDE_MD = `# Project guide

## Conventions

- Always run the evaluation with \`bun run eval\` before merging a scoring change.
- Never commit generated fixtures to the repository.
- Always write the tests in TypeScript.
- Always keep the changelog in sync with every release.
`;

const SCRIPTS = {
  test: "bun test",
  lint: "biome check .",
  typecheck: "tsc --noEmit",
  dev: "bun --watch src/server.ts",
};

interface Row {
  id: string;
  type: string;
  key: string;
  content: string;
  deleted: number;
  extractor: string;
}

let home: DaemonHome;
let repo: string;
let origin: string;
let cookie: string;
let pageKey: string;
let copies = 0;

function git(args: string[]): void {
  const res = Bun.spawnSync(["git", ...args], { cwd: repo, env: home.env, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${res.stderr.toString()}`);
}

function items(): Row[] {
  return queryProject<Row>(
    repo,
    `SELECT m.id, m.type, m.key, m.content, m.deleted, mm.extractor FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id ORDER BY m.rowid`,
  );
}

const current = (key: string) => items().filter((i) => i.key === key && i.deleted === 0);

function episodesExtracted(): number {
  return queryProject<{ n: number }>(
    repo,
    `SELECT COUNT(*) AS n FROM episode_state WHERE status = 'closed' AND extracted_at IS NOT NULL`,
  )[0]!.n;
}

/**
 * The real session again as a new session (its ids and uuids changed, its text the same), written where
 * Claude Code writes it: the daemon captures it and the engine extracts a new closed episode, which
 * re-reads CLAUDE.md and package.json too.
 */
async function newEpisode(): Promise<void> {
  const before = episodesExtracted();
  const n = ++copies;
  const text = readFileSync(SESSION, "utf8")
    .replace(/"cwd":"[^"]*"/g, `"cwd":${JSON.stringify(repo)}`)
    .replace(
      /\b[0-9a-f]{8}-([0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/g,
      (_m, rest: string) => `${String(n).padStart(8, "0")}-${rest}`,
    )
    .replace(/"(msg_|toolu_|req_)([A-Za-z0-9]+)"/g, (_m, p: string, id: string) => `"${p}${n}x${id}"`);
  const dir = join(home.claudeDir, "projects", claudeSlug(repo));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `copy-${n}.jsonl`), text);
  await waitFor(`episode of copy ${n} extracted`, () => episodesExtracted() > before, 60_000, 200);
  // The batch that extracted it also re-read the repository files; let it commit.
  await waitFor(
    "no events waiting",
    async () => (await daemonStatus(home)).projects.every((p) => p.queue_depth === 0),
    30_000,
    200,
  );
}

async function login(): Promise<void> {
  const res = home.sqrl(["ui", repo, "--no-open"]);
  expect(res.code).toBe(0);
  const login = await postLogin(res.stdout.trim().split("\n").pop()!);
  expect(login.res.status).toBe(200);
  ({ origin, cookie, pageKey } = login);
}

async function page<T = Record<string, unknown>>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(
    `${origin}/ui/api/${path}${path.includes("?") ? "&" : "?"}project=${encodeURIComponent(repo)}`,
    {
      method: body === undefined ? "GET" : "POST",
      headers: { cookie, origin, "x-sqrl-page": pageKey, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
  );
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** What the person said, checked after each thing that used to undo it. */
const corrected = {
  sessionEdit: { type: "user_style", key: "no_lint_suppression", content: "" },
  manifestEdit: { type: "project_fact", key: "test_command", content: "" },
  forgotten: { type: "project_fact", key: "typecheck_command", id: "" },
  wrong: { type: "project_fact", key: "dev_command", id: "" },
  sessionWrong: { type: "pitfall", key: "pitfall:lint-rule:exhaustive", id: "" },
  sessionForget: { type: "user_style", key: "lint_command", id: "" },
  sessionPin: { type: "user_style", key: "test_command", id: "", content: "" },
};

function expectCorrectionsHold(when: string): void {
  const pinned = current(corrected.sessionPin.key).filter((i) => i.type === "user_style");
  expect({ when, pinned: pinned.map((i) => [i.id, i.content]) }).toEqual({
    when,
    pinned: [[corrected.sessionPin.id, corrected.sessionPin.content]],
  });
  for (const edit of [corrected.sessionEdit, corrected.manifestEdit]) {
    const now = current(edit.key).filter((i) => i.type === edit.type);
    expect({ when, key: edit.key, now: now.map((i) => [i.content, i.extractor]) }).toEqual({
      when,
      key: edit.key,
      now: [[edit.content, "manual"]],
    });
  }
  for (const gone of [corrected.forgotten, corrected.wrong, corrected.sessionWrong, corrected.sessionForget])
    expect({
      when,
      key: gone.key,
      now: current(gone.key)
        .filter((i) => i.type === gone.type)
        .map((i) => i.content),
    }).toEqual({
      when,
      key: gone.key,
      now: [],
    });
}

describe.skipIf(!ready)("a person's corrections are final (compiled binary, real session, running daemon)", () => {
  beforeAll(async () => {
    home = makeHome("daemon.batch_interval_seconds = 1\n");
    repo = join(home.root, "repo");
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, "CLAUDE.md"), CLAUDE_MD);
    writeFileSync(
      join(repo, "package.json"),
      `${JSON.stringify({ name: "demo", version: "1.0.0", scripts: SCRIPTS }, null, 2)}\n`,
    );
    git(["init", "-q"]);
    git(["-c", "user.email=t@example.com", "-c", "user.name=T", "add", "-A"]);
    git(["-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "init"]);
    const init = home.sqrl(["init", repo, "--yes", "--no-backfill"]);
    expect(init.code).toBe(0);
    startDaemon(home);
    // Twice: a lint rule's lesson waits until another episode meets the rule again (pitfalls.ts).
    await newEpisode();
    await newEpisode();
    await login();
  }, 120_000);
  afterAll(async () => {
    await home?.cleanup();
  });

  test("imported history is not born decayed: decay counts from when sqrl learned it", () => {
    // The session is from February; the engine ran today. Before: every item decayed at once.
    const status = home.sqrl(["status", repo]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("0 decayed for disuse");
    const decayed = queryProject<{ n: number }>(
      repo,
      `SELECT COUNT(*) AS n FROM memory_outcomes WHERE decay_steps > 0`,
    );
    expect(decayed[0]!.n).toBe(0);
    const pitfall = current(corrected.sessionWrong.key)[0]!;
    expect(home.sqrl(["show", pitfall.id, "--project", repo]).stdout).not.toContain("decayed");
  });

  test("who said it: a package.json fact is served as the project's, a stated rule as yours, a habit as learned; CLAUDE.md is not copied (context, view, page)", async () => {
    const ctx = home.sqrl(["context", "run the type check before merging", "--json", "--project", repo]);
    expect(ctx.code).toBe(0);
    const answer = JSON.parse(ctx.stdout) as {
      markdown: string;
      selected_memories: Array<{ key: string; reason: string }>;
    };
    const fact = answer.selected_memories.find((m) => m.key === corrected.forgotten.key)!;
    expect(fact.reason).toContain("from package.json");
    expect(fact.reason).not.toMatch(/you stated|your style|as you said/i);
    // The agent reads CLAUDE.md itself (issue 26): none of its rules is stored, served or cited.
    expect(answer.markdown).not.toContain("CLAUDE.md");
    expect(
      items().filter((i) =>
        /CLAUDE\.md|bun run eval|generated fixtures|tests in TypeScript|changelog in sync/i.test(i.content),
      ),
    ).toEqual([]);

    const view = home.sqrl(["view", "user_style", "--mode", "full", "--project", repo]);
    expect(view.code).toBe(0);
    expect(view.stdout).not.toContain("### From the project's files");
    expect(view.stdout).not.toContain("CLAUDE.md");

    const list = await page<{ items: Array<{ key: string; type: string; origin: string }> }>("memories?limit=100");
    const origin = (key: string, type = "user_style") =>
      list.items.find((i) => i.key === key && i.type === type)?.origin;
    expect(origin(corrected.forgotten.key, "project_fact")).toBe("From package.json");
    expect(origin(corrected.sessionEdit.key)).toBe("You said it");
    expect(origin("lint_command")).toBe("Learned from your sessions");
    expect(origin("test_command", "project_fact")).toBe("From package.json");
  });

  test("edits, forgets and wrong marks made on the page and with `sqrl forget` survive new episodes, a restart, reprocess and changed files", async () => {
    // What another machine or a teammate holds, taken before the corrections.
    const exported = join(home.root, "before.jsonl");
    expect(home.sqrl(["export", "-o", exported, "--project", repo]).code).toBe(0);
    // The session's stated rule, and the manifest's test command: edited on the page.
    const rule = current(corrected.sessionEdit.key).find((i) => i.type === "user_style")!;
    expect(rule.content).toContain("exhaustive:ignore");
    corrected.sessionEdit.content =
      "Never silence the `exhaustive` linter with an ignore comment: handle every enum case.";
    await page(`memories/${rule.id}/edit`, { content: corrected.sessionEdit.content });
    const tests = current(corrected.manifestEdit.key).find((i) => i.type === "project_fact")!;
    expect(tests.content).toContain("bun test");
    corrected.manifestEdit.content = "Tests: `bun test --timeout 20000` (the default 5 s times out on CI).";
    await page(`memories/${tests.id}/edit`, { content: corrected.manifestEdit.content });
    // The session's lint habit forgotten on the page, its test habit pinned.
    corrected.sessionForget.id = current(corrected.sessionForget.key).find((i) => i.type === "user_style")!.id;
    await page(`memories/${corrected.sessionForget.id}/forget`, {});
    const habit = current(corrected.sessionPin.key).find((i) => i.type === "user_style")!;
    corrected.sessionPin.id = habit.id;
    corrected.sessionPin.content = habit.content;
    await page(`memories/${habit.id}/pin`, { pinned: true });
    // Two facts read from package.json: one forgotten with the CLI, one marked wrong on the page.
    corrected.forgotten.id = current(corrected.forgotten.key)[0]!.id;
    const forget = home.sqrl(["forget", corrected.forgotten.id, "--project", repo]);
    expect(forget.code).toBe(0);
    corrected.wrong.id = current(corrected.wrong.key)[0]!.id;
    await page(`memories/${corrected.wrong.id}/wrong`, { reason: "the dev server is started by the IDE" });
    // The session's lint pitfall, marked wrong on the page.
    corrected.sessionWrong.id = current(corrected.sessionWrong.key)[0]!.id;
    await page(`memories/${corrected.sessionWrong.id}/wrong`, { reason: "not a lesson" });
    expectCorrectionsHold("right after the corrections");

    await newEpisode();
    expectCorrectionsHold("after a new episode");

    const restart = home.sqrl(["daemon", "restart", "--timeout", "30"]);
    expect(restart.code).toBe(0);
    await waitFor("engine healthy", async () => (await daemonStatus(home)).engine.healthy, 60_000);
    await newEpisode();
    expectCorrectionsHold("after a daemon restart and a new episode");

    const reprocess = home.sqrl(["reprocess", repo]);
    expect(reprocess.code).toBe(0);
    expectCorrectionsHold("after sqrl reprocess");

    // `sqrl import` of the old export, and a teammate's sync file saying the forgotten rule again.
    const imported = home.sqrl(["import", exported, "--project", repo]);
    expect(imported.code).toBe(0);
    expectCorrectionsHold("after sqrl import of an export made before them");
    const line = readFileSync(exported, "utf8")
      .split("\n")
      .find((l) => l.includes(corrected.forgotten.key))!;
    const teammate = JSON.parse(line) as { origin: { item_id: string } };
    teammate.origin.item_id = "mem_teammate";
    mkdirSync(join(repo, ".ctx", "shared", "project_fact"), { recursive: true });
    writeFileSync(join(repo, ".ctx", "shared", "project_fact", "teammate.json"), JSON.stringify(teammate));
    expect(home.sqrl(["sync", "--project", repo]).code).toBe(0);
    expectCorrectionsHold("after sqrl sync with a teammate's file");

    // The files change: CLAUDE.md gains a line, package.json a script.
    writeFileSync(
      join(repo, "CLAUDE.md"),
      CLAUDE_MD.replace("## Conventions\n", "## Conventions\n\nRead this first.\n\n"),
    );
    writeFileSync(
      join(repo, "package.json"),
      `${JSON.stringify({ name: "demo", version: "1.0.1", scripts: { ...SCRIPTS, build: "bun build" } }, null, 2)}\n`,
    );
    await newEpisode();
    expectCorrectionsHold("after CLAUDE.md and package.json changed");
    // package.json was re-read: the new script is a fact. CLAUDE.md was never copied.
    expect(current("build_command").map((i) => i.content)).toEqual([expect.stringContaining("`bun build`")]);
    expect(
      items().filter((i) => /CLAUDE\.md|TypeScript|bun run eval|generated fixtures|changelog in sync/.test(i.content)),
    ).toEqual([]);
  }, 300_000);
});
