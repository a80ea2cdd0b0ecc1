/**
 * `sqrl ui` in a real browser (Debian's Chromium via playwright-core) with 10,000 memories behind a
 * real daemon: how soon the first screen is usable after opening the login file, how fast the memory
 * list answers a filter, a page turn and a search, and the daemon's idle RSS once the page's code is
 * loaded. Goals: first screen ≤ 300 ms, list filtered ≤ 100 ms, idle daemon ≤ 80 MB (daemon-idle's goal).
 * Times are taken inside the page (performance.now), so the test driver's round trips do not count.
 */
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import { sample } from "./daemon-idle.ts";
import { fmt, summarize, table, type Bench, type BenchReport } from "./report.ts";
import {
  chromiumPath,
  launchBrowser,
  openLoginFile,
  postLogin,
  readLoginFile,
  startUiStore,
} from "../test/ui/harness.ts";
import { readRuntime } from "../test/daemon/harness.ts";

const MEMORIES = 10_000;

/** Run `action` (a JS statement) in the page and resolve when `done` (a JS expression) holds; ms inside the page. */
async function timed(page: Page, action: string, done: string): Promise<number> {
  return (await page.evaluate(`(async () => {
    const t0 = performance.now();
    ${action};
    await new Promise((resolve) => {
      const check = () => { if (${done}) { obs.disconnect(); resolve(); return true; } return false; };
      const obs = new MutationObserver(check);
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      check();
    });
    return performance.now() - t0;
  })()`)) as number;
}

export default (async (opts): Promise<BenchReport> => {
  if (!chromiumPath()) {
    return {
      title: "sqrl ui in the browser",
      markdown: "Skipped: Chromium is not installed (`apt-get install -y chromium`).",
      headline: ["skipped (no chromium)"],
    };
  }
  const runs = opts.quick ? 3 : 15;
  const loadBefore = loadavg()[0]!;
  const store = await startUiStore({ extra: MEMORIES - 12 }); // with the fixture's 10 active items and 2 global style items: 10,000
  const browser = await launchBrowser();
  try {
    const project = encodeURIComponent(store.project);
    const first: number[] = [];
    const firstList: number[] = [];
    const filter: number[] = [];
    const turn: number[] = [];
    const search: number[] = [];
    const floor: number[] = [];
    let total = 0;
    // The browser's own floor, measured the same way: a one-line page in a fresh context.
    const blank = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response("<!doctype html><p id=x>hi</p>", { headers: { "content-type": "text/html" } }),
    });
    for (let i = 0; i < runs; i++) {
      const ctx = await browser.newContext();
      await ctx.addInitScript(
        `window.__seen = {}; new MutationObserver(() => { if (!window.__seen.x && document.querySelector("#x")) window.__seen.x = performance.now(); }).observe(document, { subtree: true, childList: true });`,
      );
      const page = await ctx.newPage();
      await page.goto(`http://127.0.0.1:${blank.port}/`);
      floor.push((await page.evaluate(`window.__seen.x`)) as number);
      await ctx.close();
    }
    await blank.stop(true);
    for (let i = 0; i < runs; i++) {
      const file = store.loginFile();
      const ctx = await browser.newContext({ baseURL: new URL(readLoginFile(file).action).origin });
      // Note (inside the page) when a selector first matches: the driver's polling does not count.
      await ctx.addInitScript(
        `window.__seen = {}; new MutationObserver(() => { for (const s of ["[data-active-total]", "[data-memory-row]"]) if (!window.__seen[s] && document.querySelector(s)) window.__seen[s] = performance.now(); }).observe(document, { subtree: true, childList: true });`,
      );
      const page = await ctx.newPage();
      // First screen: the login file posts its code → cookie and page key → page → overview with the project's counts.
      await openLoginFile(ctx, file, page);
      await page.waitForSelector("[data-active-total]");
      first.push((await page.evaluate(`window.__seen["[data-active-total]"]`)) as number);
      // The memory list opened directly (10,000 active rows, first page).
      await page.goto(`/ui/memories?project=${project}`);
      await page.waitForSelector("[data-memory-row]");
      firstList.push((await page.evaluate(`window.__seen["[data-memory-row]"]`)) as number);
      total = Number(await page.getAttribute("[data-total]", "data-total"));
      // Filter by type (one click → list re-rendered with the new total).
      filter.push(
        await timed(
          page,
          `document.querySelector("[data-type-filter=project_fact]").click()`,
          `document.querySelector("[data-total]")?.getAttribute("data-total") !== "${total}" && !document.querySelector("[data-loading]")`,
        ),
      );
      // Next page.
      const firstId = await page.getAttribute("[data-memory-row]", "data-memory-row");
      turn.push(
        await timed(
          page,
          `[...document.querySelectorAll(".pager button")].pop().click()`,
          `document.querySelector("[data-memory-row]") && document.querySelector("[data-memory-row]").getAttribute("data-memory-row") !== "${firstId}"`,
        ),
      );
      // Search through the ranker: the page API round trip (the search box waits 200 ms after typing first).
      search.push(
        (await page.evaluate(
          `(async () => { const t0 = performance.now(); const r = await fetch("/ui/api/memories?project=${project}&q=" + encodeURIComponent("feature 42 queue service"), { headers: { "x-sqrl-page": sessionStorage.getItem("sqrl-page-key") } }); await r.json(); return performance.now() - t0; })()`,
        )) as number,
      );
      await ctx.close();
    }
    // Idle with the page's code loaded in the daemon.
    await Bun.sleep(opts.quick ? 2_000 : 10_000);
    const daemon = readRuntime(store.home, "daemon")!;
    const rss = sample(daemon.pid).rssMb;
    // "What the agent sees" runs the MCP tools' code inside the daemon: idle again after using it.
    const { origin, cookie, pageKey } = await postLogin(store.loginFile());
    await (
      await fetch(`${origin}/ui/api/agent?project=${project}`, {
        method: "POST",
        headers: { cookie, origin, "x-sqrl-page": pageKey, "content-type": "application/json" },
        body: JSON.stringify({ task: "Fix the failing login tests" }),
      })
    ).json();
    await Bun.sleep(opts.quick ? 2_000 : 10_000);
    const rssAgent = sample(daemon.pid).rssMb;
    const rows = [
      ["first screen usable (login file → overview)", first, 300],
      ["memory list, first page (10,000 items)", firstList, 300],
      ["list filtered by type", filter, 100],
      ["list next page", turn, 100],
      ["search through the ranker (API round trip)", search, 100],
    ] as const;
    const body = rows.map(([name, samples, goal]) => {
      const s = summarize([...samples]);
      return [name, fmt(s.p50, 0), fmt(s.p95, 0), `≤ ${goal}`, s.p95 <= goal ? "yes" : "**no**"];
    });
    if (process.env.SQRL_BENCH_VERBOSE)
      console.error(`first screen per run: ${first.map((x) => Math.round(x)).join(" ")}`);
    const f = summarize(floor);
    body.push(["(floor: a one-line page in a fresh browser context)", fmt(f.p50, 0), fmt(f.p95, 0), "", ""]);
    const markdown = [
      `Headless Chromium (Debian package) with ${fmt(total, 0)} active memories in one project, ${runs} runs each, times measured inside the page from navigation start (first screens) or from the click (list). Machine load average (1 min) ${fmt(loadBefore, 1)} before, ${fmt(loadavg()[0]!, 1)} after: browser, daemon and engine share the CPUs with whatever else runs.`,
      "",
      table(["step", "p50 (ms)", "p95 (ms)", "goal (ms)", "met"], body),
      "",
      table(
        ["process", "RSS after use, idle (MB)", "goal"],
        [
          ["daemon (ui code loaded: overview, list, filters, search)", fmt(rss, 1), "≤ 80 MB (daemon-idle)"],
          ['daemon, after "what the agent sees" too (MCP tool code loaded)', fmt(rssAgent, 1), "≤ 80 MB"],
        ],
      ),
    ].join("\n");
    const p95 = (i: number) => fmt(summarize([...rows[i]![1]]).p95, 0);
    return {
      title: "sqrl ui in the browser",
      markdown,
      headline: [
        `first screen p95 ${p95(0)} ms, list filtered p95 ${p95(2)} ms at ${fmt(total, 0)} memories; idle daemon ${fmt(rss, 1)} MB with the ui loaded (${fmt(rssAgent, 1)} MB after the agent screen)`,
      ],
    };
  } finally {
    await browser.close();
    await store.cleanup();
  }
}) satisfies Bench;
