/**
 * The last `sqrl eval` on the `sqrl ui` Overview (issue 27), against the compiled binary's daemon and
 * the seeded store plus one later session: the page API before any eval; in Chromium, the page without
 * an eval says how to run one and its button runs it in the engine (busy, then the result); after
 * `sqrl eval` in a terminal, the page shows that run's figures, and "forget the ones never needed"
 * lists them, asks, forgets them (gone from the valid memory, kept as history, pinned or edited ones
 * left alone) and marks the eval stale.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { EvalReport } from "../../src/shared/eval-report.ts";
import { addEpisodeEvents, insertEpisode } from "../../src/sql/episodes.ts";
import { insertEvents } from "../../src/sql/events.ts";
import { insertMemoryItem } from "../../src/sql/memory-items.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { SQRL_BIN } from "../helpers/sqrl.ts";
import {
  chromiumPath,
  launchBrowser,
  openLoginFile,
  postLogin,
  readLoginFile,
  startUiStore,
  UI_SEED,
  type UiStore,
} from "./harness.ts";

const ready = existsSync(SQRL_BIN) && chromiumPath() !== undefined;
if (!ready)
  console.log(
    `skipping the sqrl ui eval tests: ${existsSync(SQRL_BIN) ? "no chromium (apt-get install -y chromium)" : `no ${SQRL_BIN} (bun run build)`}`,
  );

/** The later session: asks about the JWT check, fails nothing, so what it is served it does not need. */
const LATER_REQUEST = "Write a short doc comment explaining how verifyToken handles clock tolerance for JWT login";

/** An item sqrl learned (offline) before the later session, about what that session asks. */
const DOCS_RECIPE = "mem_eval_docs_recipe";

/**
 * A second session a day after the seed one (which is the first, only replayed as history), and an
 * offline recipe learned before it about the same thing.
 */
function seedLaterSession(root: string): void {
  const db = openProjectDb(root);
  try {
    const start = Date.now() - 86_400_000;
    const learned = new Date(start - 2 * 86_400_000).toISOString();
    const t = (min: number) => new Date(start + min * 60_000).toISOString();
    const texts: Array<[string, string, string[]]> = [
      ["user_message", LATER_REQUEST, []],
      ["assistant_response", "Added the doc comment above verifyToken.", ["src/auth/jwt.ts"]],
    ];
    const events = texts.map(([type, text, paths], i) => ({
      id: `evt_later_${i}`,
      project_id: root,
      user_id: "alice",
      source_tool: "claude_code",
      session_id: "sess_later",
      timestamp: t(i),
      event_type: type as "user_message",
      content_json: JSON.stringify({ text }),
      file_paths: paths,
      hash: `hash_later_${i}`,
      processed_at: t(10),
    }));
    db.transaction(() => {
      insertMemoryItem(db, {
        id: DOCS_RECIPE,
        project_id: root,
        user_id: "alice",
        scope: "project",
        type: "recipe",
        key: "auth_docs",
        content: "After editing the doc comment of verifyToken, rebuild the auth docs with `pnpm run docs:auth`.",
        tags: ["docs"],
        importance: 0.6,
        created_at: learned,
        updated_at: learned,
        source_episode_id: null,
        source_event_ids: [],
        confidence: 0.8,
        file_paths: ["src/auth/jwt.ts"],
        evidence_episode_ids: [],
        decision: "ADD_NEW",
        extractor: "offline",
      });
      insertEvents(db, events);
      insertEpisode(db, {
        id: "ep_later",
        project_id: root,
        user_id: "alice",
        session_id: "sess_later",
        start_ts: t(0),
        end_ts: t(1),
        event_count: events.length,
        summary: "Documented verifyToken's clock tolerance.",
        importance: 0.4,
        created_at: t(10),
        status: "closed",
        closed_at: t(30),
        extracted_at: t(30),
        extractor: "offline",
        summary_source: "offline",
        outcome: "",
        file_paths: ["src/auth/jwt.ts"],
      });
      addEpisodeEvents(
        db,
        "ep_later",
        events.map((e) => e.id),
      );
    })();
  } finally {
    db.close();
  }
}

let store: UiStore;
let browser: Browser;

/** With $SQRL_UI_SCREENSHOTS set (as for browser.test.ts), the eval card is saved there. */
async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SQRL_UI_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(resolve(dir), { recursive: true });
  await page.locator("[data-eval]").screenshot({ path: join(resolve(dir), `${name}.png`) });
}

async function loggedIn(): Promise<{ ctx: BrowserContext; page: Page; origin: string }> {
  const file = store.loginFile();
  const origin = new URL(readLoginFile(file).action).origin;
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: origin });
  const page = await openLoginFile(ctx, file);
  await page.waitForSelector("[data-overview] [data-eval]");
  return { ctx, page, origin };
}

describe.skipIf(!ready)("the last eval on the sqrl ui page", () => {
  beforeAll(async () => {
    store = await startUiStore();
    seedLaterSession(store.project);
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await store?.cleanup();
  });

  test("page API: no eval yet; a run needs the page's Origin; forgetting without an eval says to run `sqrl eval`", async () => {
    const { origin, cookie, pageKey } = await postLogin(store.loginFile());
    const p = encodeURIComponent(store.project);
    const headers = { cookie, "x-sqrl-page": pageKey };
    const none = await fetch(`${origin}/ui/api/eval?project=${p}`, { headers });
    expect(none.status).toBe(200);
    expect(((await none.json()) as { last: unknown }).last).toBeNull();
    const noOrigin = await fetch(`${origin}/ui/api/eval/run?project=${p}`, { method: "POST", headers });
    expect(noOrigin.status).toBe(403);
    const forget = await fetch(`${origin}/ui/api/eval/forget_unused?project=${p}`, {
      method: "POST",
      headers: { ...headers, origin, "content-type": "application/json" },
      body: JSON.stringify({ memory_ids: [UI_SEED.withLineage] }),
    });
    expect(forget.status).toBe(404);
    expect(((await forget.json()) as { error: string }).error).toContain("sqrl eval");
  });

  test("no eval yet: the page says how to run one, and its button runs it in the engine (busy, then the figures)", async () => {
    const { ctx, page } = await loggedIn();
    const card = page.locator("[data-eval]");
    await card.locator("[data-eval-none]").waitFor();
    expect(await card.textContent()).toContain("sqrl eval");
    await shot(page, "eval-none");
    const run = card.locator("[data-action=run-eval]");
    await run.click();
    // Busy while it runs (button disabled, progress shown; on this small store it ends almost at once), then its result.
    await card.locator("[data-eval-ran]").waitFor({ timeout: 30_000 });
    expect(await card.locator("[data-eval-ran]").textContent()).toContain("from this page");
    expect(await card.locator("[data-eval-recall]").textContent()).toContain("needed items served");
    expect(await card.locator("[data-eval-none]").count()).toBe(0);
    await ctx.close();
  });

  test("after `sqrl eval`: its figures, the items worth most and least; the forget action lists, asks, forgets, and the items leave the valid memory", async () => {
    const res = store.home.sqrl(["eval", "--project", store.project, "--json"]);
    expect(res.code).toBe(0);
    const report = EvalReport.parse(JSON.parse(res.stdout));
    expect(report.sessions_evaluated).toBe(1);
    const neverNeeded = report.items.filter((i) => i.served > 0 && i.needed === 0).map((i) => i.memory_id);
    // The later session was served the docs recipe (learned offline) and did not need it.
    expect(neverNeeded).toContain(DOCS_RECIPE);

    const { ctx, page } = await loggedIn();
    const card = page.locator("[data-eval]");
    await card.locator("[data-eval-ran]").waitFor();
    expect(await card.locator("[data-eval-ran]").textContent()).toContain("by sqrl eval");
    expect(await card.locator("[data-eval-recall]").textContent()).toContain(
      `${report.needed_served} of ${report.needed_total} needed items served`,
    );
    expect(await card.locator("[data-eval-wasted]").textContent()).toContain(
      `${report.wasted_tokens.toLocaleString("en-US")} of ${report.served_tokens.toLocaleString("en-US")} served`,
    );
    expect(await card.locator("[data-eval-abstention]").textContent()).toContain(
      `${report.abstention.abstained} of ${report.abstention.sessions_nothing_needed} session`,
    );
    expect(await card.locator("[data-eval-stale]").count()).toBe(0);
    const least = card.locator("[data-eval-least] [data-memory]");
    expect(await least.count()).toBe(neverNeeded.length);
    // The seed's other items were written by a person (extractor manual): listed, never taken.
    const valid = await card
      .locator("[data-eval-least] [data-memory][data-state=valid]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-memory")!));
    const held = await card
      .locator("[data-eval-least] [data-memory][data-state=held]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-memory")!));
    expect(valid).toContain(DOCS_RECIPE);
    expect(valid.length + held.length).toBe(neverNeeded.length);

    // Ask first: the list and the count, then confirm.
    await card.locator("[data-action=forget-unused]").click();
    const panel = card.locator("[data-confirm-panel=forget-unused]");
    await panel.waitFor();
    expect(await panel.locator("[data-forget-list] [data-memory]").count()).toBe(valid.length);
    expect(await panel.textContent()).toContain(
      valid.length === 1 ? "Forget this memory?" : `Forget these ${valid.length} memories?`,
    );
    await shot(page, "eval-forget");
    if (held.length > 0) expect(await panel.textContent()).toContain("you pinned or edited");
    await panel.locator("[data-confirm=forget-unused]").click();
    await card.locator("[data-eval-done]").waitFor();
    expect(await card.locator("[data-eval-done]").textContent()).toContain(`Forgot ${valid.length}`);
    await card.locator("[data-eval-stale]").waitFor();
    expect(await card.locator("[data-eval-stale]").textContent()).toContain("run the eval again");
    await shot(page, "eval-stale");
    expect(await card.locator("[data-action=forget-unused]").count()).toBe(0);

    // Gone from the valid memory (the Memories list of active items), kept as history (the memory's own page).
    await page.goto(`/ui/memories?project=${encodeURIComponent(store.project)}&status=active`);
    await page.waitForSelector("[data-memory-row]");
    const active = await page
      .locator("[data-memory-row]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-memory-row")!));
    for (const id of valid) expect(active).not.toContain(id);
    for (const id of held) expect(active).toContain(id);
    await page.goto(`/ui/memories/${DOCS_RECIPE}?project=${encodeURIComponent(store.project)}`);
    await page.waitForSelector("[data-screen=memory][data-status=forgotten]");
    // And the agent is no longer served it.
    const after = store.home.sqrl(["context", LATER_REQUEST, "--project", store.project, "--json"]);
    expect(after.code).toBe(0);
    const ids = (JSON.parse(after.stdout) as { memory_ids: string[] }).memory_ids;
    for (const id of valid) expect(ids).not.toContain(id);
    await ctx.close();
  }, 60_000);
});
