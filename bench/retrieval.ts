/**
 * `bun run bench retrieval [--quick]`:
 * 1. Abstention calibration: task_context over the labelled set in test/fixtures/retrieval/ for a sweep
 *    of thresholds (related tasks: is a must-have memory selected; unrelated tasks: does it abstain).
 * 2. Latency: task_context and search p50/p95 over synthetic projects of 1k / 10k / 100k memory items
 *    (offline scoring, in-process, real SQLite files). Quick mode: 1k and 10k, fewer queries.
 */
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { retrievalContext } from "../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../src/engine/retrieve/search.ts";
import { scoreItems } from "../src/engine/retrieve/rank/relevance.ts";
import { buildQueryModel } from "../src/engine/retrieve/rank/scoring.ts";
import {
  isRelevant,
  MAX_SELECTED,
  MIN_SIMILARITY,
  rankTaskCandidates,
  RELEVANCE_THRESHOLD,
  taskContext,
} from "../src/engine/retrieve/task-context.ts";
import { SearchQuery, TaskContextRequest } from "../src/shared/api.ts";
import { currentItems } from "../src/sql/memory-items.ts";
import { openProjectDb } from "../src/sql/open.ts";
import { addItem, loadLabelled, seedLabelled, tempProject } from "../test/engine/retrieve/helpers.ts";
import { CORPORA, rng, synthItem, synthQuery, type CorpusName } from "./retrieval-corpus.ts";
import { fmt, summarize, table, type Bench, type BenchReport } from "./report.ts";

// ---- 1. calibration --------------------------------------------------------------------------------

interface Outcome {
  threshold: number;
  minSim: number;
  hit: number;
  mustRecall: number;
  precision: number;
  abstain: number;
}

export async function calibrationSweep(thresholds: number[], minSims: number[]): Promise<Outcome[]> {
  const set = loadLabelled();
  const now = Date.parse(set.now);
  const p = tempProject();
  try {
    const ids = seedLabelled(p.db, p.root, set, now);
    const keyOf = new Map([...ids].map(([k, v]) => [v, k]));
    const ctx = retrievalContext(p.db, p.root, { nowMs: now });
    const related = await Promise.all(
      set.related.map(async (t) => ({
        t,
        scored: await rankTaskCandidates(ctx, { task_description: t.task, active_file_paths: t.files }),
      })),
    );
    const unrelated = await Promise.all(
      set.unrelated.map((t) => rankTaskCandidates(ctx, { task_description: t.task, active_file_paths: t.files })),
    );
    const out: Outcome[] = [];
    for (const minSim of minSims) {
      for (const threshold of thresholds) {
        let hits = 0,
          mustFound = 0,
          mustTotal = 0,
          good = 0,
          selectedTotal = 0,
          abstained = 0;
        for (const { t, scored } of related) {
          const keys = scored
            .filter((s) => isRelevant(s, threshold, minSim))
            .slice(0, 20)
            .map((s) => keyOf.get(s.item.id)!);
          if (t.must.some((k) => keys.includes(k))) hits++;
          mustFound += t.must.filter((k) => keys.includes(k)).length;
          mustTotal += t.must.length;
          good += keys.filter((k) => t.must.includes(k) || t.nice.includes(k)).length;
          selectedTotal += keys.length;
        }
        for (const scored of unrelated) if (!scored.some((s) => isRelevant(s, threshold, minSim))) abstained++;
        out.push({
          threshold,
          minSim,
          hit: hits / related.length,
          mustRecall: mustFound / mustTotal,
          precision: selectedTotal === 0 ? 1 : good / selectedTotal,
          abstain: abstained / unrelated.length,
        });
      }
    }
    return out;
  } finally {
    p.cleanup();
  }
}

// ---- 2. latency ---------------------------------------------------------------------------------------

function buildProject(n: number, corpus: CorpusName): { db: Database; root: string; cleanup: () => void } {
  const base = mkdtempSync(join(tmpdir(), "sqrl-bench-retrieval-"));
  const { db, root } = buildProjectAt(join(base, "repo"), n, corpus);
  return { db, root, cleanup: () => (db.close(), rmSync(base, { recursive: true, force: true })) };
}

/** A synthetic project of n items at `root` (also used by profiling scripts that keep the files). */
export function buildProjectAt(root: string, n: number, corpus: CorpusName): { db: Database; root: string } {
  const db = openProjectDb(root);
  const r = rng(n);
  const now = Date.now();
  const chunk = 5000;
  for (let start = 0; start < n; start += chunk) {
    db.transaction(() => {
      for (let i = start; i < Math.min(n, start + chunk); i++) addItem(db, root, synthItem(corpus, r, i), now);
    })();
  }
  db.exec("PRAGMA optimize");
  return { db, root };
}

/**
 * How much of the exhaustive answer the candidate path reaches: for each query every item of the
 * store is scored by the relevance formula (no candidate step), and the top MAX_SELECTED relevant
 * scores are compared with those of rankTaskCandidates (FTS5 pool + path look-ups).
 */
async function candidateQuality(
  db: Database,
  root: string,
  queries: ReadonlyArray<{ task: string; files: string[] }>,
): Promise<{ share: number; exact: number }> {
  const ctx = retrievalContext(db, root);
  const all = currentItems(db, root);
  let ideal = 0;
  let got = 0;
  let exact = 0;
  for (const q of queries) {
    const model = buildQueryModel(db, q.task);
    const best = (await scoreItems(ctx, all, { text: q.task, paths: q.files, similarity: "absolute", model }))
      .filter((s) => isRelevant(s))
      .slice(0, MAX_SELECTED)
      .map((s) => s.score);
    const mine = (await rankTaskCandidates(ctx, { task_description: q.task, active_file_paths: q.files }))
      .filter((s) => isRelevant(s))
      .slice(0, MAX_SELECTED)
      .map((s) => s.score);
    ideal += best.reduce((a, b) => a + b, 0);
    got += mine.reduce((a, b) => a + b, 0);
    if (best.length === mine.length && best.every((v, i) => Math.abs(v - mine[i]!) < 1e-9)) exact++;
  }
  return { share: ideal === 0 ? 1 : got / ideal, exact: exact / queries.length };
}

/** Run the read path on a throwaway store first, so that no measured row pays for JIT compilation. */
async function warmEngine(): Promise<void> {
  const p = buildProject(500, "realistic");
  try {
    const r = rng(3);
    const ctx = retrievalContext(p.db, p.root);
    for (let i = 0; i < 200; i++) {
      const q = synthQuery("realistic", r);
      await taskContext(
        ctx,
        TaskContextRequest.parse({ project_id: p.root, task_description: q.task, active_file_paths: q.files }),
      );
      await searchMemory(ctx, SearchQuery.parse({ project_id: p.root, query: q.task }));
    }
  } finally {
    p.cleanup();
  }
}

function warmUps(runs: number): number {
  return Math.min(50, runs);
}

async function timeIt(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  // Warm-up: the engine is a long-running process; without it the first size measured would pay
  // for JIT compilation of the whole read path in its tail.
  for (let i = 0; i < warmUps(runs); i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

export default (async (opts) => {
  // 1. calibration
  const thresholds = [0.25, 0.3, 0.325, 0.35, 0.375, 0.4, 0.45, 0.5];
  const sweep = await calibrationSweep(thresholds, [0, 0.1, MIN_SIMILARITY, 0.3]);
  const chosen = sweep.find((o) => o.threshold === RELEVANCE_THRESHOLD && o.minSim === MIN_SIMILARITY);
  const calibration = table(
    [
      "threshold",
      "min similarity",
      "related: must-have selected",
      "must-have recall",
      "precision (must+nice)",
      "unrelated: abstained",
    ],
    sweep
      .filter((o) => o.minSim === MIN_SIMILARITY || o.minSim === 0)
      .map((o) => [
        o.threshold === RELEVANCE_THRESHOLD && o.minSim === MIN_SIMILARITY ? `**${o.threshold}**` : o.threshold,
        o.minSim,
        `${fmt(o.hit * 100, 0)} %`,
        `${fmt(o.mustRecall * 100, 0)} %`,
        `${fmt(o.precision * 100, 0)} %`,
        `${fmt(o.abstain * 100, 0)} %`,
      ]),
  );

  // 2. latency
  const sizes = opts.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const corpora: readonly CorpusName[] = opts.quick ? ["realistic"] : CORPORA;
  const runs = opts.quick ? 60 : 300;
  const rows: Array<Array<string | number>> = [];
  const headline: string[] = [];
  const loads: string[] = [];
  await warmEngine();
  for (const corpus of corpora) {
    for (const n of sizes) {
      const t0 = performance.now();
      const p = buildProject(n, corpus);
      const buildS = (performance.now() - t0) / 1000;
      try {
        const r = rng(7);
        const queries = Array.from({ length: runs }, () => synthQuery(corpus, r));
        const ctx = retrievalContext(p.db, p.root);
        let answered = 0;
        let selected = 0;
        const tc = summarize(
          await timeIt(runs, async (i) => {
            const res = await taskContext(
              { ...ctx, nowMs: Date.now() },
              TaskContextRequest.parse({
                project_id: p.root,
                task_description: queries[i]!.task,
                active_file_paths: queries[i]!.files,
              }),
            );
            answered += res.has_relevant_memory ? 1 : 0;
            selected += res.selected_memories.length;
          }),
        );
        let results = 0;
        const se = summarize(
          await timeIt(runs, async (i) => {
            results += (
              await searchMemory(
                { ...ctx, nowMs: Date.now() },
                SearchQuery.parse({ project_id: p.root, query: queries[i]!.task }),
              )
            ).results.length;
          }),
        );
        const calls = runs + warmUps(runs); // timed runs plus warm-up
        rows.push([
          corpus,
          n.toLocaleString("en"),
          fmt(buildS, 1),
          fmt(tc.p50),
          fmt(tc.p95),
          fmt(se.p50),
          fmt(se.p95),
          `${fmt((answered / calls) * 100, 0)} % · ${fmt(selected / calls, 1)}`,
          fmt(results / calls, 1),
          runs,
        ]);
        loads.push(loadavg()[0]!.toFixed(1));
        headline.push(
          `${corpus} ${n.toLocaleString("en")} items: task_context p95 ${fmt(tc.p95)} ms, search p95 ${fmt(se.p95)} ms`,
        );
      } finally {
        p.cleanup();
      }
    }
  }
  // 3. candidate quality against an exhaustive scan (realistic corpus, one size: it scores every item per query)
  const qualityN = opts.quick ? 1_000 : 10_000;
  const qualityQueries = 60;
  const qp = buildProject(qualityN, "realistic");
  let quality: { share: number; exact: number };
  try {
    const r = rng(7);
    quality = await candidateQuality(
      qp.db,
      qp.root,
      Array.from({ length: qualityQueries }, () => synthQuery("realistic", r)),
    );
  } finally {
    qp.cleanup();
  }
  headline.push(
    `candidates reach ${fmt(quality.share * 100, 1)} % of the exhaustive top-${MAX_SELECTED} score (${qualityN.toLocaleString("en")} items)`,
  );

  const latency = table(
    [
      "corpus",
      "memory items",
      "build (s)",
      "task_context p50 (ms)",
      "task_context p95 (ms)",
      "search p50 (ms)",
      "search p95 (ms)",
      "task_context: has memory · shown",
      "search: results",
      "queries",
    ],
    rows,
  );

  const md = [
    "### Abstention calibration (labelled set, test/fixtures/retrieval/labelled.json)",
    "",
    `${loadLabelled().related.length} related tasks with must-have memories, ${loadLabelled().unrelated.length} unrelated tasks. ` +
      `Bold: the constants in src/engine/task-context.ts (score ≥ ${RELEVANCE_THRESHOLD} and similarity ≥ ${MIN_SIMILARITY} or an active file).`,
    "",
    calibration,
    "",
    "### Latency (in-process, offline scoring, synthetic items, one query at a time)",
    "",
    "Goal: p95 ≤ 10 ms at 10k items and ≤ 40 ms at 100k. Candidates come from the FTS5 index and path look-ups (never a scan of all items). " +
      "Corpora (bench/retrieval-corpus.ts): `realistic` = coding memories like the extractor's with Zipf-distributed modules, libraries and nouns, " +
      "task descriptions from one line to two sentences, half with active files, one in eight about something the store never saw; " +
      "`uniform` = the stress case where every query word is in ~5 % of the items. Default budgets (task_context 400, search 600 tokens). " +
      "Like the engine, each store is queried through one long-lived connection that remembers document frequencies and FTS5 doclists until the index changes " +
      "(so a word seen by an earlier query is not decoded again); the timed queries follow 50 warm-up queries. " +
      `1-minute load average after each row: ${loads.join(", ")} on ${cpus().length} cores — other work on the machine inflates the tail.`,
    "",
    latency,
    "",
    `Candidate quality (${qualityN.toLocaleString("en")} realistic items, ${qualityQueries} queries): every item scored by the relevance formula vs the candidate path ` +
      `(FTS5 pool + path look-ups): the relevant top ${MAX_SELECTED} reach **${fmt(quality.share * 100, 1)} %** of the exhaustive score sum; ` +
      `${fmt(quality.exact * 100, 0)} % of the queries get exactly the exhaustive top scores.`,
  ].join("\n");
  if (chosen)
    headline.unshift(
      `calibration: ${fmt(chosen.hit * 100, 0)} % related tasks get a must-have memory, ${fmt(chosen.abstain * 100, 0)} % unrelated abstain`,
    );
  return { title: "Retrieval: abstention calibration and latency", markdown: md, headline } satisfies BenchReport;
}) satisfies Bench;
