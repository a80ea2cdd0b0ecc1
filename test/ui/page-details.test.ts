/**
 * Page details a user meets (issue 29 items 2 and 7), in a real Chromium against the compiled binary's
 * daemon: a registered folder that is gone (the page and `sqrl daemon status`), memory rows with a
 * readable subject and inline code, the capture time per source, an empty chart, an empty project,
 * and reasons that read as sentences.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { insertMemoryItem } from "../../src/sql/memory-items.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { CAPTURE_FIXTURES, rewriteFixture } from "../daemon/capture/helpers.ts";
import { daemonStatus, projectEvents, transcriptPath, waitFor } from "../daemon/harness.ts";
import { SQRL_BIN } from "../helpers/sqrl.ts";
import { chromiumPath, launchBrowser, openLoginFile, readLoginFile, startUiStore, type UiStore } from "./harness.ts";

const ready = existsSync(SQRL_BIN) && chromiumPath() !== undefined;
if (!ready) console.log("skipping the page-details browser tests: no chromium or no dist/sqrl");

const STEMMED = "mem_ui_stemmed";
const SESSION = "11111111-2222-3333-4444-555555555555";
let store: UiStore;
let browser: Browser;
let empty: string;

async function open(path: string, project = store.project): Promise<Page> {
  const file = store.loginFile();
  const ctx = await browser.newContext({ baseURL: new URL(readLoginFile(file).action).origin });
  const page = await openLoginFile(ctx, file);
  await page.waitForSelector("[data-screen=overview]");
  const u = new URL(`http://x/ui/${path}`);
  u.searchParams.set("project", project);
  await page.goto(`${u.pathname}${u.search}`);
  return page;
}

describe.skipIf(!ready)("page details", () => {
  beforeAll(async () => {
    store = await startUiStore();
    browser = await launchBrowser();
    const db = openProjectDb(store.project);
    try {
      const at = new Date().toISOString();
      insertMemoryItem(db, {
        id: STEMMED,
        project_id: store.project,
        user_id: "alice",
        scope: "project",
        type: "project_fact",
        key: "pref:enabl_run_evaluation_without_configuration",
        content: "Always enabled: runs on every evaluation without configuration; check it with `bun test`.",
        tags: [],
        importance: 0.6,
        created_at: at,
        updated_at: at,
        source_episode_id: null,
        source_event_ids: [],
        confidence: 0.8,
        file_paths: [],
        evidence_episode_ids: [],
        decision: "ADD_NEW",
        extractor: "offline",
      });
    } finally {
      db.close();
    }
    empty = join(store.home.env.HOME!, "empty-project");
    mkdirSync(empty, { recursive: true });
    expect(store.home.sqrl(["init", empty, "--yes", "--no-git", "--no-backfill"]).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await store?.cleanup();
  }, 60_000);

  test("a memory row shows a readable subject (not the stemmed key) and inline code as code", async () => {
    const page = await open("memories");
    const row = page.locator(`[data-memory-row=${STEMMED}]`);
    await row.waitFor();
    const subject = await row.locator("[data-subject]").textContent();
    expect(subject).toBe("enabled runs evaluation without configuration");
    expect(await row.locator("[data-subject]").getAttribute("title")).toContain("pref:enabl_run");
    const content = page.locator(`a.mem:has([data-memory-row=${STEMMED}]) .content`);
    expect(await content.locator("code").textContent()).toBe("bun test");
    expect(await content.textContent()).not.toContain("`");
    await page.context().close();
  }, 60_000);

  test("an empty project says nothing is learned yet; its tokens chart says there is no data", async () => {
    // (the store's global style shows in every project: the project's own list is empty)
    const page = await open("memories", empty);
    await page.goto(`/ui/memories?project=${encodeURIComponent(empty)}&scope=project`);
    await page.waitForSelector("[data-total='0']");
    expect(await page.textContent("[data-total]")).toContain("Nothing learned yet");
    await page.goto(`/ui/calls?project=${encodeURIComponent(empty)}`);
    await page.waitForSelector("[data-no-data]");
    expect(await page.textContent("[data-no-data]")).toContain("No data");
    // a filter that matches nothing still says so
    await page.goto(`/ui/memories?project=${encodeURIComponent(store.project)}&q=zzzqqqxxx`);
    await page.waitForSelector("[data-total='0']");
    expect(await page.textContent("[data-total]")).toContain("No memory matches.");
    await page.context().close();
  }, 60_000);

  test("reasons read as sentences: no '.;' where a check is appended", async () => {
    const page = await open("memories");
    await page.fill("input[type=search]", "JWT clock tolerance verifyToken");
    await page.locator("[data-memory-row] .badge", { hasText: "score" }).first().waitFor();
    const why = (await page.locator(".mem .why").allTextContents()).join("\n");
    expect(why).toContain("; ");
    expect(why).not.toContain(".;");
    await page.context().close();
  }, 60_000);

  test("last capture per source shows when sqrl captured, not the events' own (old) dates", async () => {
    const before = projectEvents(store.project).total;
    const file = transcriptPath(store.home, store.project, SESSION);
    writeFileSync(
      file,
      rewriteFixture(
        readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"),
        store.project,
      ),
    );
    await waitFor(
      "the daemon captures the transcript",
      async () => projectEvents(store.project).total > before,
      30_000,
    );
    const page = await open("");
    const cell = page.locator("[data-source=claude_code] [data-captured]");
    await cell.waitFor();
    const text = await cell.textContent();
    expect(text).toMatch(/^captured (just now|\d+ min ago)$/);
    expect(await cell.getAttribute("title")).toContain("newest event dated");
    await page.context().close();
  }, 60_000);

  test("a registered folder that is gone: the page and daemon status say missing with the command that unregisters it", async () => {
    const gone = join(store.home.env.HOME!, "gone-project");
    mkdirSync(gone, { recursive: true });
    expect(store.home.sqrl(["init", gone, "--yes", "--no-git", "--no-backfill"]).code).toBe(0);
    rmSync(gone, { recursive: true, force: true });
    await waitFor("the daemon sees the project", async () =>
      (await daemonStatus(store.home)).projects.some((p) => p.project_id === gone),
    );
    const status = store.home.sqrl(["daemon", "status"]);
    expect(status.code).toBe(0);
    const line = status.stdout.split("\n").find((l) => l.includes(gone)) ?? "";
    expect(line).toContain("missing");
    expect(line).toContain(`sqrl forget-project ${gone}`);
    expect(line).not.toContain("last error");

    const page = await open("");
    const row = page.locator("tr[data-missing]");
    await row.waitFor();
    expect(await row.textContent()).toContain(`sqrl forget-project ${gone}`);
    await page.context().close();

    expect(store.home.sqrl(["forget-project", gone]).code).toBe(0);
    await waitFor(
      "the daemon drops it",
      async () => !(await daemonStatus(store.home)).projects.some((p) => p.project_id === gone),
    );
  }, 60_000);
});
