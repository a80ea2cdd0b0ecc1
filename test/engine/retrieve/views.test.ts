import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { pitfallsView } from "../../../src/engine/retrieve/views/pitfalls.ts";
import { projectBriefView } from "../../../src/engine/retrieve/views/project-brief.ts";
import { userStyleView } from "../../../src/engine/retrieve/views/user-style.ts";
import { readViewMeta } from "../../../src/engine/retrieve/views/view-cache.ts";
import { PitfallsView, ProjectBriefView, UserStyleView, ViewQuery } from "../../../src/shared/api.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import { insertEvents } from "../../../src/sql/events.ts";
import { supersedeMemoryItem } from "../../../src/sql/memory-items.ts";
import { insertUserStyle } from "../../../src/sql/user-style.ts";
import { openDatabase } from "../../../src/sql/open.ts";
import { addEpisode, addItem, tempProject } from "./helpers.ts";
import { join } from "node:path";

const NOW = Date.parse("2025-11-25T10:00:00.000Z");
const HOUR = 3_600_000;
let p: ReturnType<typeof tempProject>;
beforeEach(() => {
  p = tempProject();
});
afterEach(() => p.cleanup());

const q = (extra: Record<string, unknown> = {}) => ViewQuery.parse({ project_id: p.root, ...extra });
const ctxAt = (ms: number, extra = {}) => retrievalContext(p.db, p.root, { nowMs: ms, userId: "alice", ...extra });

function addEvents(n: number, from = 0): void {
  insertEvents(
    p.db,
    Array.from({ length: n }, (_, i) => ({
      id: `ev_${from + i}`,
      project_id: p.root,
      user_id: "alice",
      source_tool: "claude_code",
      session_id: "s",
      timestamp: nowIso(NOW),
      event_type: "user_message" as const,
      content_json: "{}",
      file_paths: [],
      hash: `h_${from + i}`,
      processed_at: null,
    })),
  );
}

describe("view cache and staleness", () => {
  test("a fresh view is served from .ctx/views/ until its TTL passes", async () => {
    addItem(p.db, p.root, { type: "user_style", key: "pm", content: "Uses pnpm.", importance: 0.9 }, NOW);
    const first = UserStyleView.parse(await userStyleView(ctxAt(NOW), q()));
    expect(existsSync(projectPaths.view(p.root, "user_style"))).toBe(true);
    expect(readViewMeta(p.db, "user_style")).toMatchObject({
      view_name: "user_style",
      events_count_at_gen: 0,
      ttl_seconds: 3600,
    });
    const again = await userStyleView(ctxAt(NOW + 0.5 * HOUR), q());
    expect(again.generated_at).toBe(first.generated_at);
    const afterTtl = await userStyleView(ctxAt(NOW + 1.01 * HOUR), q());
    expect(afterTtl.generated_at).toBe(nowIso(NOW + 1.01 * HOUR));
  });

  test("enough new events (the delta) regenerate the view before the TTL", async () => {
    addItem(
      p.db,
      p.root,
      { type: "pitfall", key: "x", content: "Redis must run for job tests.", importance: 0.6 },
      NOW,
    );
    const first = await pitfallsView(ctxAt(NOW), q());
    addEvents(49);
    expect((await pitfallsView(ctxAt(NOW + 1000), q())).generated_at).toBe(first.generated_at);
    addEvents(1, 49);
    const regenerated = await pitfallsView(ctxAt(NOW + 2000), q());
    expect(regenerated.generated_at).toBe(nowIso(NOW + 2000));
    expect(readViewMeta(p.db, "pitfalls")!.events_count_at_gen).toBe(50);
  });

  test("a changed memory (forgotten or superseded item) regenerates at once", async () => {
    const a = addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "pm", content: "Package manager: npm.", importance: 0.9 },
      NOW,
    );
    expect((await projectBriefView(ctxAt(NOW), q())).key_facts).toEqual(["Package manager: npm."]);
    const b = addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "pm", content: "Package manager: pnpm.", importance: 0.9, age_days: 0 },
      NOW,
    );
    supersedeMemoryItem(p.db, a.id, b.id, null, nowIso(NOW));
    expect((await projectBriefView(ctxAt(NOW + 1000), q())).key_facts).toEqual(["Package manager: pnpm."]);
  });

  test("reused only for the same mode and a budget it fits; exclusions bypass the cache", async () => {
    for (let i = 0; i < 8; i++)
      addItem(
        p.db,
        p.root,
        {
          type: "user_style",
          key: `k${i}`,
          content: `Style rule number ${i} about naming things clearly.`,
          importance: 0.5 + i / 20,
        },
        NOW,
      );
    const core = await userStyleView(ctxAt(NOW), q({ context_budget_tokens: 400 }));
    expect(core.items).toHaveLength(5);
    const cachedBigger = await userStyleView(ctxAt(NOW + 1000), q({ context_budget_tokens: 800 }));
    expect(cachedBigger.generated_at).toBe(core.generated_at);
    expect(cachedBigger.markdown).toContain("/800 tokens");
    const full = await userStyleView(ctxAt(NOW + 2000), q({ mode: "full", context_budget_tokens: 800 }));
    expect(full.items).toHaveLength(8);
    expect(full.generated_at).toBe(nowIso(NOW + 2000));
    const tight = await userStyleView(ctxAt(NOW + 3000), q({ mode: "full", context_budget_tokens: 60 }));
    expect(tight.token_estimate).toBeLessThanOrEqual(60);
    expect(tight.generated_at).toBe(nowIso(NOW + 3000));
    const seen = await userStyleView(
      ctxAt(NOW + 4000),
      q({ mode: "full", context_budget_tokens: 60, exclude_memory_ids: tight.memory_ids }),
    );
    expect(seen.omitted_seen).toBe(tight.memory_ids.length);
    expect(seen.memory_ids.some((id) => tight.memory_ids.includes(id))).toBe(false);
    const onDisk = JSON.parse(readFileSync(projectPaths.view(p.root, "user_style"), "utf8"));
    expect(onDisk.generated_at).toBe(tight.generated_at); // the de-duplicated answer was not cached
  });
});

describe("views", () => {
  test("user_style: project style is merged over global style of the same key", async () => {
    const dir = tempProject("sqrl-user-");
    const userDb = openDatabase(join(dir.root, "user.db"), "user");
    try {
      insertUserStyle(userDb, {
        id: "g1",
        user_id: "alice",
        key: "package_manager",
        content: "Uses npm.",
        tags: [],
        importance: 0.9,
        created_at: nowIso(NOW - 90 * 24 * HOUR),
        updated_at: nowIso(NOW - 90 * 24 * HOUR),
        source: "manual",
        confidence: 1,
        evidence: [],
      });
      insertUserStyle(userDb, {
        id: "g2",
        user_id: "alice",
        key: "indent",
        content: "Two-space indentation.",
        tags: [],
        importance: 0.6,
        created_at: nowIso(NOW - 3 * 24 * HOUR),
        updated_at: nowIso(NOW - 3 * 24 * HOUR),
        source: "manual",
        confidence: 1,
        evidence: [],
      });
      insertUserStyle(userDb, {
        id: "g3",
        user_id: "bob",
        key: "tabs",
        content: "Tabs.",
        tags: [],
        importance: 0.6,
        created_at: nowIso(NOW),
        updated_at: nowIso(NOW),
        source: "manual",
        confidence: 1,
        evidence: [],
      });
      addItem(
        p.db,
        p.root,
        {
          type: "user_style",
          key: "package_manager",
          content: "Uses pnpm in this repo.",
          importance: 0.8,
          age_days: 2,
        },
        NOW,
      );
      const v = UserStyleView.parse(await userStyleView(ctxAt(NOW, { userDb }), q({ mode: "full" })));
      expect(v.items.map((i) => i.summary).sort()).toEqual(["Two-space indentation.", "Uses pnpm in this repo."]);
      expect(v.user_id).toBe("alice");
      expect(v.markdown).toContain("### In this project");
      expect(v.markdown).toContain("### Across your projects");
      expect(v.markdown).toContain("3 days ago");
      expect(v.items.find((i) => i.key === "indent")!.source_memory_ids).toEqual(["g2"]);
    } finally {
      userDb.close();
      dir.cleanup();
    }
  });

  test("project_brief: key facts, and modules from module: facts or from where episodes worked", async () => {
    addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "framework", content: "Framework: Hono.", importance: 0.9 },
      NOW,
    );
    addEpisode(
      p.db,
      p.root,
      {
        id: "ep1",
        days_ago: 2,
        summary: "Worked on auth",
        file_paths: ["src/auth/jwt.ts", "src/auth/session.ts"],
        events: [{ type: "user_message", content: { text: "hi" }, at: 0 }],
      },
      NOW,
    );
    addEpisode(
      p.db,
      p.root,
      {
        id: "ep2",
        days_ago: 1,
        summary: "Worked on auth again",
        file_paths: ["src/auth/jwt.ts", "docs/x.md"],
        events: [{ type: "user_message", content: { text: "hi" }, at: 0 }],
      },
      NOW,
    );
    const v = ProjectBriefView.parse(await projectBriefView(ctxAt(NOW), q()));
    expect(v.key_facts).toEqual(["Framework: Hono."]);
    expect(v.modules[0]).toMatchObject({ name: "src/auth", paths: ["src/auth/jwt.ts", "src/auth/session.ts"] });
    expect(v.modules[0]!.summary).toContain("2 episodes");
    addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "module:src/jobs",
        content: "Module `src/jobs/`: background jobs.",
        file_paths: ["src/jobs/a.ts"],
        importance: 0.5,
      },
      NOW,
    );
    const w = ProjectBriefView.parse(await projectBriefView(ctxAt(NOW + 1000), q()));
    expect(w.modules).toEqual([
      { name: "src/jobs", paths: ["src/jobs/a.ts"], summary: "Module `src/jobs/`: background jobs." },
    ]);
    expect(w.key_facts).toEqual(["Framework: Hono."]);
  });

  test("pitfalls: filtered by scope_paths, ranked by task_description", async () => {
    addItem(
      p.db,
      p.root,
      {
        type: "pitfall",
        key: "jwt",
        content: "JWT exp is in seconds, not milliseconds.",
        importance: 0.5,
        file_paths: ["src/auth/jwt.ts"],
      },
      NOW,
    );
    addItem(
      p.db,
      p.root,
      {
        type: "pitfall",
        key: "session",
        content: "Session cookies need SameSite=Lax for the admin app.",
        importance: 0.9,
        file_paths: ["src/auth/session.ts"],
      },
      NOW,
    );
    addItem(
      p.db,
      p.root,
      {
        type: "pitfall",
        key: "redis",
        content: "Job tests hang without Redis.",
        importance: 0.95,
        file_paths: ["src/jobs/email.ts"],
        tags: ["jobs"],
      },
      NOW,
    );
    const scoped = PitfallsView.parse(await pitfallsView(ctxAt(NOW), q({ scope_paths: ["src/auth"] })));
    expect(scoped.items.map((i) => i.key)).toEqual(["session", "jwt"]);
    expect(scoped.has_relevant_pitfalls).toBe(true);
    const ranked = PitfallsView.parse(
      await pitfallsView(
        ctxAt(NOW),
        q({ scope_paths: ["src/auth"], task_description: "token expiry in milliseconds" }),
      ),
    );
    expect(ranked.items.map((i) => i.key)).toEqual(["jwt", "session"]);
    const byTag = PitfallsView.parse(await pitfallsView(ctxAt(NOW), q({ scope_paths: ["src/workers/jobs.ts"] })));
    expect(byTag.items.map((i) => i.key)).toEqual(["redis"]);
    const none = PitfallsView.parse(await pitfallsView(ctxAt(NOW), q({ scope_paths: ["docs/readme.md"] })));
    expect(none).toMatchObject({ has_relevant_pitfalls: false, items: [] });
    expect(none.markdown).toContain("No known pitfalls for these paths.");
  });
});
