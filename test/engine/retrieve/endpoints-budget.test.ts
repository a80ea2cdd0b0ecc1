import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recall } from "../../../src/engine/retrieve/recall.ts";
import { retrievalContext, type RetrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { timeline } from "../../../src/engine/retrieve/timeline.ts";
import { loadTokenCounter, tokenCounterSync, type TokenCounter } from "../../../src/shared/tokens.ts";
import { packLimit } from "../../../src/shared/tokens.ts";
import { pitfallsView } from "../../../src/engine/retrieve/views/pitfalls.ts";
import { projectBriefView } from "../../../src/engine/retrieve/views/project-brief.ts";
import { userStyleView } from "../../../src/engine/retrieve/views/user-style.ts";
import { memoryLine } from "../../../src/engine/retrieve/render/markdown.ts";
import {
  EpisodeRecall,
  PitfallsView,
  ProjectBriefView,
  RecallQuery,
  SearchQuery,
  SearchResponse,
  TaskContext,
  TaskContextRequest,
  Timeline,
  TimelineQuery,
  UserStyleView,
  ViewQuery,
} from "../../../src/shared/api.ts";
import { NOW, richProject } from "./fixture-project.ts";

const BUDGETS = [
  1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 25, 30, 40, 50, 64, 80, 100, 128, 160, 200, 256, 320, 400, 512, 640, 800, 1000,
  1300, 1600, 2000,
];
const counter = tokenCounterSync("accurate");

let fx: ReturnType<typeof richProject>;
let ctx: RetrievalContext;
let o200k: TokenCounter;
beforeAll(async () => {
  o200k = await loadTokenCounter("o200k");
  fx = richProject();
  ctx = retrievalContext(fx.db, fx.root, { nowMs: NOW, userId: "alice", userDb: fx.userDb });
});
afterAll(() => fx.cleanup());

interface Case {
  name: string;
  /** Call the endpoint with a budget; returns the parsed response, what it shows, and its markdown. */
  run: (budget: number) => Promise<{ markdown: string; token_estimate: number; shown: number }>;
  /** Tokens of the smallest item's line: from this budget on, something must be shown. */
  minLine: () => number;
}

const tiny = (key: string) => {
  const row = fx.db.query("SELECT content, updated_at FROM memory_items WHERE id = ?").get(key) as {
    content: string;
    updated_at: string;
  };
  return row;
};

const CASES: Case[] = [
  {
    name: "task_context",
    run: async (b) => {
      const r = TaskContext.parse(
        await taskContext(
          ctx,
          TaskContextRequest.parse({
            project_id: fx.root,
            task_description: "fix the auth token exp check",
            active_file_paths: ["src/auth/jwt.ts"],
            context_budget_tokens: b,
          }),
        ),
      );
      expect(r.has_relevant_memory).toBe(true);
      return { ...r, shown: r.selected_memories.length };
    },
    minLine: () => counter.count(memoryLine({ ...tiny("mem_tiny_fact"), file_paths: ["src/auth/jwt.ts"] }, NOW)),
  },
  {
    name: "search_memory",
    run: async (b) => {
      const r = SearchResponse.parse(
        await searchMemory(
          ctx,
          SearchQuery.parse({ project_id: fx.root, query: "auth token", top_k: 20, context_budget_tokens: b }),
        ),
      );
      return { ...r, shown: r.results.length };
    },
    minLine: () => counter.count(memoryLine({ ...tiny("mem_tiny_style"), file_paths: [] }, NOW)),
  },
  {
    name: "views/user_style",
    run: async (b) => {
      const r = UserStyleView.parse(
        await userStyleView(ctx, ViewQuery.parse({ project_id: fx.root, mode: "full", context_budget_tokens: b })),
      );
      return { ...r, shown: r.items.length };
    },
    minLine: () => counter.count(memoryLine({ ...tiny("mem_tiny_style") }, NOW, { paths: false })),
  },
  {
    name: "views/project_brief",
    run: async (b) => {
      const r = ProjectBriefView.parse(
        await projectBriefView(ctx, ViewQuery.parse({ project_id: fx.root, mode: "full", context_budget_tokens: b })),
      );
      return { ...r, shown: r.key_facts.length + r.modules.length };
    },
    minLine: () => counter.count(memoryLine({ ...tiny("mem_tiny_fact") }, NOW, { paths: false })),
  },
  {
    name: "views/pitfalls",
    run: async (b) => {
      const r = PitfallsView.parse(
        await pitfallsView(
          ctx,
          ViewQuery.parse({
            project_id: fx.root,
            mode: "full",
            context_budget_tokens: b,
            task_description: "auth token",
          }),
        ),
      );
      return { ...r, shown: r.items.length };
    },
    minLine: () => counter.count(memoryLine({ ...tiny("mem_tiny_pitfall"), file_paths: ["src/auth/jwt.ts"] }, NOW)),
  },
  {
    name: "timeline",
    run: async (b) => {
      const r = Timeline.parse(
        await timeline(ctx, TimelineQuery.parse({ project_id: fx.root, context_budget_tokens: b })),
      );
      return { ...r, shown: r.episodes.length };
    },
    minLine: () => 40,
  },
  {
    name: "recall",
    run: async (b) => {
      const r = EpisodeRecall.parse(
        await recall(ctx, RecallQuery.parse({ project_id: fx.root, episode_id: "ep_small", context_budget_tokens: b })),
      );
      return { ...r, shown: r.events.length };
    },
    minLine: () => 20,
  },
];

describe("budget invariant on every endpoint (budgets 1..2000, items of every size)", () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const min = c.minLine();
      let maxShown = 0;
      for (const budget of BUDGETS) {
        let r: Awaited<ReturnType<Case["run"]>>;
        try {
          r = await c.run(budget);
        } catch (err) {
          // Nothing at all fits: one line that says so and names a budget that would do.
          expect((err as { code?: string }).code).toBe("budget_too_small");
          expect((err as Error).message).toMatch(
            /^context_budget_tokens \d+ is too small for any answer here; the smallest needs \d+ tokens\.$/,
          );
          expect(packLimit(budget, counter)).toBeLessThan(min);
          continue;
        }
        expect(r.markdown.length).toBeGreaterThan(0);
        const est = counter.count(r.markdown);
        // "Never exceeds" holds for the real tokenizer, not only for the estimator that packed it.
        const real = o200k.count(r.markdown);
        if (real > budget || est > budget)
          throw new Error(`${c.name} at budget ${budget}: ${real} o200k tokens (estimated ${est})\n${r.markdown}`);
        expect(r.token_estimate).toBe(est);
        if (packLimit(budget, counter) >= min && r.shown === 0)
          throw new Error(
            `${c.name} at budget ${budget} showed nothing although a ${min}-token item fits:\n${r.markdown}`,
          );
        if (r.shown > 0) expect(r.markdown).toMatch(/Budget: ~\d+\/\d+ tokens · \d+ of \d+ \w+ shown|^- /m);
        if (budget >= 200) expect(r.markdown).toContain(`/${budget} tokens`);
        maxShown = Math.max(maxShown, r.shown);
      }
      expect(maxShown).toBeGreaterThan(1);
    });
  }
});
