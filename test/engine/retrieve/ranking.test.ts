import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { combine, pathMatch, recencyScore, WEIGHTS } from "../../../src/engine/retrieve/rank/scoring.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { rankTaskCandidates } from "../../../src/engine/retrieve/task-context.ts";
import { SearchQuery, SearchResponse } from "../../../src/shared/api.ts";
import { addItem, tempProject } from "./helpers.ts";

const NOW = Date.parse("2025-11-25T10:00:00.000Z");
let p: ReturnType<typeof tempProject>;
beforeEach(() => {
  p = tempProject();
});
afterEach(() => p.cleanup());

/** Two items with the same text; `a` and `b` differ only in what the test varies. */
function twins(a: Partial<Parameters<typeof addItem>[2]>, b: Partial<Parameters<typeof addItem>[2]>) {
  const base = {
    type: "pitfall" as const,
    key: "k",
    content: "Webhook retries double-charge the invoice when the idempotency key is missing.",
    importance: 0.5,
    age_days: 10,
  };
  const A = addItem(p.db, p.root, { ...base, key: "a", ...a }, NOW);
  const B = addItem(p.db, p.root, { ...base, key: "b", ...b }, NOW);
  return { A, B };
}

async function order(task: string, files: string[] = []): Promise<string[]> {
  const ctx = retrievalContext(p.db, p.root, { nowMs: NOW });
  return (await rankTaskCandidates(ctx, { task_description: task, active_file_paths: files })).map((s) => s.item.key);
}

describe("ranking follows 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path_match", () => {
  test("the weights are the reference's", () => {
    expect(WEIGHTS).toEqual({ similarity: 0.6, importance: 0.2, recency: 0.1, path: 0.1 });
    expect(combine({ similarity: 1, importance: 1, recency: 1, path: 1 })).toBeCloseTo(1);
    expect(combine({ similarity: 0.5, importance: 0.5, recency: 0, path: 0 })).toBeCloseTo(0.4);
  });

  test("importance moves an item up", async () => {
    twins({ importance: 0.3 }, { importance: 0.9 });
    expect(await order("webhook retries double charge")).toEqual(["b", "a"]);
  });

  test("recency moves an item up", async () => {
    twins({ age_days: 1 }, { age_days: 120 });
    expect(await order("webhook retries double charge")).toEqual(["a", "b"]);
    expect(recencyScore(new Date(NOW - 30 * 86_400_000).toISOString(), NOW)).toBeCloseTo(0.5);
  });

  test("a path match moves an item up", async () => {
    twins({ file_paths: ["src/billing/invoice.ts"] }, { file_paths: ["src/webhooks/stripe.ts"] });
    expect(await order("webhook retries double charge", ["src/webhooks/stripe.ts"])).toEqual(["b", "a"]);
    expect(pathMatch(["src/webhooks/stripe.ts"], ["src/webhooks/stripe.ts"]).score).toBe(1);
    expect(pathMatch(["src/webhooks/paypal.ts"], ["src/webhooks/stripe.ts"]).score).toBe(0.7);
    expect(pathMatch(["src/webhooks/x/y.ts"], ["src/webhooks/stripe.ts"]).score).toBe(0.4);
    expect(pathMatch(["src/webhooks/stripe.ts"], ["src/webhooks"]).score).toBe(1);
    expect(pathMatch(["docs/a.md"], ["src/webhooks/stripe.ts"]).score).toBe(0);
  });

  test("similarity outweighs importance: the item that matches more of the task wins", async () => {
    addItem(
      p.db,
      p.root,
      { type: "pitfall", key: "weak", content: "Webhook handlers log too much.", importance: 1, age_days: 1 },
      NOW,
    );
    addItem(
      p.db,
      p.root,
      {
        type: "pitfall",
        key: "strong",
        content: "Webhook retries double-charge the invoice without an idempotency key.",
        importance: 0.2,
        age_days: 60,
      },
      NOW,
    );
    expect((await order("webhook retries double charge the invoice"))[0]).toBe("strong");
  });

  test("search: each result has score, reason and source; scope_paths bias; types filter", async () => {
    const { A, B } = twins(
      { file_paths: ["src/billing/invoice.ts"], source_episode_id: "ep_1" },
      { file_paths: ["src/webhooks/stripe.ts"], source_episode_id: "ep_2" },
    );
    addItem(
      p.db,
      p.root,
      { type: "recipe", key: "r", content: "Replay a webhook with `stripe events resend`.", importance: 0.5 },
      NOW,
    );
    const ctx = retrievalContext(p.db, p.root, { nowMs: NOW });
    const biased = SearchResponse.parse(
      await searchMemory(
        ctx,
        SearchQuery.parse({ project_id: p.root, query: "webhook retries", scope_paths: ["src/webhooks/stripe.ts"] }),
      ),
    );
    expect(biased.results[0]!.memory_id).toBe(B.id);
    expect(biased.results[0]!.source).toEqual({ episode_ids: ["ep_2"], file_paths: ["src/webhooks/stripe.ts"] });
    expect(biased.results[0]!.reason).toContain("webhook");
    expect(biased.results[0]!.score).toBeGreaterThan(biased.results[1]!.score);
    expect(biased.results.map((r) => r.memory_id)).toContain(A.id);
    const onlyRecipes = SearchResponse.parse(
      await searchMemory(ctx, SearchQuery.parse({ project_id: p.root, query: "webhook", types: ["recipe"] })),
    );
    expect(onlyRecipes.results.map((r) => r.key)).toEqual(["r"]);
    const seen = SearchResponse.parse(
      await searchMemory(
        ctx,
        SearchQuery.parse({ project_id: p.root, query: "webhook retries", exclude_memory_ids: [B.id] }),
      ),
    );
    expect(seen.omitted_seen).toBe(1);
    expect(seen.results.map((r) => r.memory_id)).not.toContain(B.id);
  });

  test("search: code-aware tokens find snake_case, camelCase and path parts", async () => {
    addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "f",
        content: "parseAuthToken in src/auth/jwt_utils.ts validates the exp claim.",
        importance: 0.5,
      },
      NOW,
    );
    for (const [i, text] of [
      "Billing runs on Stripe.",
      "The admin app is Next.js.",
      "Deploys go through fly.io.",
    ].entries())
      addItem(p.db, p.root, { type: "project_fact", key: `other${i}`, content: text }, NOW);
    const ctx = retrievalContext(p.db, p.root, { nowMs: NOW });
    for (const q of ["auth token parsing", "jwt utils", "parse_auth_token", "jwtUtils"]) {
      const r = await searchMemory(ctx, SearchQuery.parse({ project_id: p.root, query: q }));
      expect(r.results.map((x) => x.key)).toEqual(["f"]);
    }
  });
});
