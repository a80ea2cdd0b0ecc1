/**
 * What most sessions of a project meet again (issue 27 item 3): an item confirmed in most of the
 * project's sessions is served for a task about the project though it shares no word with it
 * ("commit this"), never for a task about something else; and two wordings of one lesson are not
 * both served, unless the better ranked one does not fit.
 */
import { afterEach, expect, test } from "bun:test";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { recurringItems } from "../../../src/engine/retrieve/rank/recurring.ts";
import { lessonsOf } from "../../../src/engine/retrieve/rank/restatements.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../../../src/shared/api.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { insertEpisode } from "../../../src/sql/episodes.ts";
import { updateMemoryItem } from "../../../src/sql/memory-items.ts";
import { addItem, tempProject } from "./helpers.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const DAY = 86_400_000;
let p: ReturnType<typeof tempProject> | undefined;
afterEach(() => p?.cleanup());

/** `sessions` sessions of one episode each, a day apart, the last one a day before NOW. */
function sessions(db: ReturnType<typeof tempProject>["db"], root: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = nowIso(NOW - (n - i) * DAY);
    const id = `ep_${String(i).padStart(3, "0")}`;
    insertEpisode(db, {
      id,
      project_id: root,
      user_id: "alice",
      session_id: `s${i}`,
      start_ts: at,
      end_ts: at,
      event_count: 5,
      summary: "",
      importance: 0.5,
      created_at: at,
      status: "closed",
      closed_at: at,
      extracted_at: at,
      extractor: "llm",
      summary_source: "none",
      outcome: "",
      file_paths: [],
    });
    ids.push(id);
  }
  return ids;
}

function confirmedIn(db: ReturnType<typeof tempProject>["db"], id: string, episodes: string[]): void {
  updateMemoryItem(db, id, { evidence_episode_ids: episodes, updated_at: nowIso(NOW - DAY) });
}

const ask = (root: string, task: string, budget = 400, files: string[] = []) =>
  TaskContextRequest.parse({
    project_id: root,
    task_description: task,
    active_file_paths: files,
    context_budget_tokens: budget,
  });

/** A model-made pitfall learned 10 days ago, about the rtk wrapper. */
const rtkPitfall = (proj: ReturnType<typeof tempProject>, content: string) =>
  addItem(
    proj.db,
    proj.root,
    { type: "pitfall", key: "pitfall:rtk-bun", content, age_days: 10, extractor: "llm" },
    NOW,
  );

test("an item most sessions met is served for 'commit this' and 'continue', never for a task about something else", async () => {
  p = tempProject("sqrl-recurring-");
  const eps = sessions(p.db, p.root, 10);
  const rtk = rtkPitfall(
    p,
    "The rtk wrapper has no `bun` subcommand: `rtk bun run test` fails; run `bun run test` directly.",
  );
  confirmedIn(
    p.db,
    rtk.id,
    eps.filter((_, i) => i % 2 === 0),
  ); // 5 of 10 sessions
  const rare = addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "pitfall:docker-dns",
      content: "Docker's DNS inside the VPN needs `--dns 10.0.0.2`; builds hang on npm install without it.",
      age_days: 10,
      extractor: "llm",
    },
    NOW,
  );
  confirmedIn(p.db, rare.id, [eps[0]!, eps[4]!]); // 2 sessions: not recurring
  expect(recurringItems(p.db, p.root, NOW).map((r) => [r.id, r.sessions, r.since])).toEqual([[rtk.id, 5, 10]]);

  const ctx = retrievalContext(p.db, p.root, { nowMs: NOW, userId: "alice", verify: false });
  for (const task of ["commit this", "continue", "run the tests and push"]) {
    const res = await taskContext(ctx, ask(p.root, task));
    expect(res.memory_ids).toEqual([rtk.id]);
    // ("run the tests" shares words with it: served as relevant, with that reason)
    if (task !== "run the tests and push")
      expect(res.selected_memories[0]!.reason).toContain("5 of this project's last 10 sessions");
  }
  // Files of the project make the task the project's too.
  expect((await taskContext(ctx, ask(p.root, "the logo renders blurry", 400, ["src/logo.svg"]))).memory_ids).toEqual([
    rtk.id,
  ]);
  for (const task of ["Write a haiku about autumn leaves", "Fix the Rust borrow checker complaint in the parser"]) {
    const res = await taskContext(ctx, ask(p.root, task));
    expect(res.has_relevant_memory).toBe(false);
    expect(res.memory_ids).toEqual([]);
  }
  // As of an earlier moment (a replay), the sessions that came later do not count.
  expect(recurringItems(p.db, p.root, NOW - 6 * DAY)).toEqual([]);
});

test("a 'commit' opening: what most sessions met goes before items that only share the word 'commit'", async () => {
  p = tempProject("sqrl-recurring-commit-");
  const eps = sessions(p.db, p.root, 10);
  const rtk = rtkPitfall(
    p,
    "The rtk wrapper has no `bun` subcommand: `rtk bun run test` fails with \"unrecognized subcommand 'bun'\". Run `bun run test`, `bun run lint` and `bun run typecheck` directly; `rtk git` works. `cat -A` goes to `rtk read`, which rejects -A: use `cat -v`.",
  );
  confirmedIn(
    p.db,
    rtk.id,
    [0, 1, 3, 4, 6, 8].map((i) => eps[i]!),
  ); // 6 of 10 sessions: a share of 0.6
  const topics = [
    "the release tag",
    "the changelog",
    "the pre-commit lint",
    "the hook's test run",
    "a signed tag",
    "the version bump",
    "the generated assets",
    "the lock file",
  ];
  for (const [i, topic] of topics.entries())
    addItem(
      p.db,
      p.root,
      {
        type: "pitfall",
        key: `pitfall:commit-${i}`,
        content: `Before you commit, check ${topic}: a commit that skips it is rejected by the remote, and the fix means rewriting the commit, its message and every later commit on the branch (${i}).`,
        importance: 0.8,
        age_days: 3,
        extractor: "llm",
      },
      NOW,
    );
  const ctx = retrievalContext(p.db, p.root, { nowMs: NOW, userId: "alice", verify: false });
  const res = await taskContext(ctx, ask(p.root, "commit"));
  expect(res.memory_ids).toContain(rtk.id);
  expect(res.memory_ids.length).toBeLessThan(topics.length + 1); // the budget still cuts: some "commit" items are left out
  // An opening with a subject of its own keeps ranking by relevance: the eight fill the budget first.
  const named = await taskContext(ctx, ask(p.root, "commit with care before the push"));
  expect(named.memory_ids).not.toContain(rtk.id);
});

test("two wordings of one lesson: the better ranked one is served, the other only when it does not fit", async () => {
  p = tempProject("sqrl-restate-");
  const long = addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "pitfall:clones-a",
      content:
        "`bun test src/` also runs the test files of repositories cloned into tmp/clones/ by evaluations, because a path filter matches anywhere in the path; delete tmp/clones/ before committing or the pre-commit hook fails.",
      importance: 0.9,
      extractor: "llm",
    },
    NOW,
  );
  const short = addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "pitfall:clones-b",
      content: "`bun test src/` also picks up tests in cloned repositories under tmp/clones/.",
      importance: 0.5,
      extractor: "llm",
    },
    NOW,
  );
  const other = addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "pitfall:limiter-log",
      content: "`bun test src/` prints '[ConcurrencyLimiter] Item 3 failed' in passing runs; judge by the totals.",
      importance: 0.5,
      extractor: "llm",
    },
    NOW,
  );
  // sqrl eval counts the two wordings as one lesson; the limiter log is another.
  expect(
    lessonsOf(p.db, [long, short, other])
      .map((l) => l.length)
      .sort(),
  ).toEqual([1, 2]);
  const ctx = retrievalContext(p.db, p.root, { nowMs: NOW, userId: "alice", verify: false });
  const wide = await taskContext(ctx, ask(p.root, "bun test src/ fails on tests from tmp/clones cloned repositories"));
  expect(wide.memory_ids).toContain(long.id);
  expect(wide.memory_ids).not.toContain(short.id);
  expect(wide.memory_ids).toContain(other.id);
  // A budget the long wording does not fit: the short one answers.
  const narrow = await taskContext(
    ctx,
    ask(p.root, "bun test src/ fails on tests from tmp/clones cloned repositories", 60),
  );
  expect(narrow.memory_ids).not.toContain(long.id);
  expect(narrow.memory_ids).toContain(short.id);
});
