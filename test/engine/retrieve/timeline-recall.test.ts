import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { recall } from "../../../src/engine/retrieve/recall.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { timeline } from "../../../src/engine/retrieve/timeline.ts";
import { EpisodeRecall, RecallQuery, Timeline, TimelineQuery } from "../../../src/shared/api.ts";
import { addEpisode, tempProject } from "./helpers.ts";

const NOW = Date.parse("2025-11-25T10:00:00.000Z");
let p: ReturnType<typeof tempProject>;
beforeEach(() => {
  p = tempProject();
  addEpisode(
    p.db,
    p.root,
    {
      id: "ep_old",
      days_ago: 10,
      summary: "Set up the repo.",
      outcome: "committed",
      file_paths: ["package.json"],
      events: [{ type: "user_message", content: { text: "init" }, at: 0 }],
    },
    NOW,
  );
  addEpisode(
    p.db,
    p.root,
    {
      id: "ep_mid",
      days_ago: 5,
      summary: "Added login.",
      outcome: "tests green",
      file_paths: ["src/auth/login.ts", "tests/login.test.ts"],
      events: [{ type: "user_message", content: { text: "add login" }, at: 0 }],
    },
    NOW,
  );
  addEpisode(
    p.db,
    p.root,
    {
      id: "ep_new",
      days_ago: 1,
      summary: "Debugged a failing migration.",
      outcome: "error unresolved",
      events: [
        { type: "user_message", content: { text: "why does the migration fail?" }, at: 0 },
        {
          type: "command_run",
          content: {
            command: "pnpm db:migrate",
            exit_code: 1,
            output: `${"noise line\n".repeat(500)}ERROR: column "sku" does not exist`,
          },
          at: 1,
        },
        {
          type: "code_change",
          content: { tool: "Edit", diff_summary: "+ ALTER TABLE products ADD COLUMN sku text" },
          at: 2,
          file_paths: ["drizzle/0008.sql"],
        },
        { type: "assistant_response", content: { text: "The migration now adds the sku column first." }, at: 3 },
      ],
    },
    NOW,
  );
});
afterEach(() => p.cleanup());

const ctx = () => retrievalContext(p.db, p.root, { nowMs: NOW });

describe("timeline", () => {
  test("episodes in time order with time, summary, files and outcome", async () => {
    const t = Timeline.parse(await timeline(ctx(), TimelineQuery.parse({ project_id: p.root })));
    expect(t.episodes.map((e) => e.episode_id)).toEqual(["ep_old", "ep_mid", "ep_new"]);
    expect(t.episodes[1]).toMatchObject({
      summary: "Added login.",
      outcome: "tests green",
      file_paths: ["src/auth/login.ts", "tests/login.test.ts"],
      event_count: 1,
    });
    expect(t.markdown).toContain(
      "5 days ago · 1 event · ep_mid: Added login. Files: src/auth/login.ts, tests/login.test.ts. Outcome: tests green.",
    );
    expect(t.markdown.indexOf("ep_old")).toBeLessThan(t.markdown.indexOf("ep_new"));
  });

  test("a small budget keeps the newest episodes; since and limit filter", async () => {
    const t = await timeline(ctx(), TimelineQuery.parse({ project_id: p.root, context_budget_tokens: 60 }));
    expect(t.episodes.at(-1)!.episode_id).toBe("ep_new");
    expect(t.episodes.map((e) => e.episode_id)).not.toContain("ep_old");
    const since = await timeline(
      ctx(),
      TimelineQuery.parse({ project_id: p.root, since: new Date(NOW - 6 * 86_400_000).toISOString() }),
    );
    expect(since.episodes.map((e) => e.episode_id)).toEqual(["ep_mid", "ep_new"]);
    const limited = await timeline(ctx(), TimelineQuery.parse({ project_id: p.root, limit: 1 }));
    expect(limited.episodes.map((e) => e.episode_id)).toEqual(["ep_new"]);
  });
});

describe("recall", () => {
  test("expands an episode back to its raw events in time order", async () => {
    const r = EpisodeRecall.parse(
      await recall(ctx(), RecallQuery.parse({ project_id: p.root, episode_id: "ep_new", context_budget_tokens: 2000 })),
    );
    expect(r.events_total).toBe(4);
    expect(r.events.map((e) => e.event_type)).toEqual([
      "user_message",
      "command_run",
      "code_change",
      "assistant_response",
    ]);
    expect(r.events[1]!.text).toContain("$ pnpm db:migrate → exit 1");
    expect(r.events[1]!.text).toContain('ERROR: column "sku" does not exist');
    expect(r.events[2]!.text).toContain("Edited drizzle/0008.sql");
    expect(r.episode.summary).toBe("Debugged a failing migration.");
    expect(r.markdown).toContain("## Episode ep_new");
  });

  test("a tight budget keeps the newest events and cuts a long output to its tail", async () => {
    const r = EpisodeRecall.parse(
      await recall(ctx(), RecallQuery.parse({ project_id: p.root, episode_id: "ep_new", context_budget_tokens: 120 })),
    );
    expect(r.events.map((e) => e.event_type)).toContain("assistant_response");
    expect(r.events.map((e) => e.event_type)).not.toContain("user_message");
    const cmd = r.events.find((e) => e.event_type === "command_run")!;
    expect(cmd.text.startsWith("$ pnpm db:migrate → exit 1\n…")).toBe(true);
    expect(cmd.text).toContain("does not exist");
    expect(cmd.text.length).toBeLessThan(400);
    expect(r.token_estimate).toBeLessThanOrEqual(120);
    expect(r.markdown).toMatch(/\d+ of 4 events shown/);
  });
});

describe("timeline since, as people write it", () => {
  test("yesterday, N days ago, last week, 3d and ISO dates select by start time; nonsense is refused, never misread", async () => {
    const ids = async (since: string) =>
      (await timeline(ctx(), TimelineQuery.parse({ project_id: p.root, since }))).episodes.map((e) => e.episode_id);
    expect(await ids("yesterday")).toEqual(["ep_new"]);
    expect(await ids("2 days ago")).toEqual(["ep_new"]);
    expect(await ids("6 days ago")).toEqual(["ep_mid", "ep_new"]);
    expect(await ids("last week")).toEqual(["ep_mid", "ep_new"]);
    expect(await ids("past 11 days")).toEqual(["ep_old", "ep_mid", "ep_new"]);
    expect(await ids("3d")).toEqual(["ep_new"]);
    expect(await ids(new Date(NOW - 6 * 86_400_000).toISOString().slice(0, 10))).toEqual(["ep_mid", "ep_new"]);
    const none = await timeline(ctx(), TimelineQuery.parse({ project_id: p.root, since: "today" }));
    expect(none.markdown).not.toContain("No episodes recorded yet");
    expect(none.markdown).toContain("No episodes since");
    for (const bad of ["the dawn of time", "1", "soon"]) {
      let err: unknown;
      await timeline(ctx(), TimelineQuery.parse({ project_id: p.root, since: bad })).catch((e) => (err = e));
      expect((err as { code?: string }).code).toBe("bad_since");
      expect(String((err as Error).message)).toContain("yesterday");
    }
  });
});

describe("local paths", () => {
  test("timeline and recall show paths repo-relative and home folders as ~", async () => {
    addEpisode(
      p.db,
      p.root,
      {
        id: "ep_paths",
        days_ago: 0.5,
        summary: `Goal: "fix ${p.root}/src/app.ts as in /Users/bob/work/notes.md"`,
        outcome: "fixed",
        file_paths: [`${p.root}/src/app.ts`],
        events: [
          { type: "user_message", content: { text: `look at ${p.root}/src/app.ts and /home/carol/.npmrc` }, at: 0 },
          {
            type: "command_run",
            content: {
              command: `cd ${p.root} && cat /Users/bob/x.log`,
              exit_code: 0,
              output: `${p.root}/src/app.ts:3 ok`,
            },
            at: 1,
          },
        ],
      },
      NOW,
    );
    const t = await timeline(ctx(), TimelineQuery.parse({ project_id: p.root }));
    const r = await recall(ctx(), RecallQuery.parse({ project_id: p.root, episode_id: "ep_paths" }));
    for (const text of [t.markdown, JSON.stringify(t.episodes), r.markdown]) {
      expect(text).not.toContain(p.root);
      expect(text).not.toMatch(/\/Users\/bob|\/home\/carol/);
    }
    expect(t.markdown).toContain("src/app.ts");
    expect(r.markdown).toContain("~/.npmrc");
  });
});
