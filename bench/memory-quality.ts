/**
 * `memory-quality`: what the OFFLINE extractor stores from real sessions, judged against a labelled
 * set (issue 14). Labels: test/fixtures/memory-quality/labels-*.json, written by reading the shared
 * fixture transcripts (../shared/fixtures/transcripts/claude-code): per session, the memories a careful
 * teammate would write down ("must": rule, decision, lesson, recipe, fact; each with regexes that a
 * stored memory must all match) and the tempting things that must NOT be stored ("must_not"). The
 * scenario transcripts' expectations (test/fixtures/scenarios/tasks.json) join as a project of their own.
 * Sessions are split: "train" (rules were developed on them) and "holdout" (never tuned on).
 *
 * The transcripts go through the real parts exactly as the replay benchmark sends them (capture's
 * one-shot ingest, then processEvents in the daemon's batches, clock one hour after the newest event).
 * Reported, per kind and split: recall of must items among stored items; the share of stored items
 * that are noise (match a must_not) or unlabelled; median and p95 tokens per item; and, for each
 * labelled task, what a 400-token task context serves (items, tokens, whether the labelled memory is
 * among them). `--quick`: scenarios only. `--dump FILE`: every stored item with its verdict as JSON.
 * `--review FILE`: a reviewer's packet (memory-review.ts): each stored item of the real sessions with the
 * events it was drawn from, for a fresh reader to judge. `--labels DIR --transcripts DIR`: another
 * labelled set (sessions no rule was tuned on) instead of the shared one. `--origin NAME`, `--split
 * train|holdout`: only those labelled sessions (and only their transcripts) are run. `SQRL_MQ_KEEP=1`
 * keeps the run's folder (its homes and data.db files, to trace where a candidate went).
 *
 * The LLM path, measured without a model API (issue 25; llm-answers.ts): `--record DIR` runs the real
 * `openai_compatible` provider against a local stand-in that saves each request as DIR/<key>.json (key:
 * a hash of its text without the episode id) and refuses it, so the rules take every episode;
 * `--answers DIR` replays DIR/<key>.json (the text the model returned) through the same provider and the
 * whole pipeline (gates, updates, consolidation). Requests with no answer are listed, never made up.
 *
 * `--guidance DIR`: copy DIR/<origin>/ (a project's CLAUDE.md, AGENTS.md, skills …) into that project's
 * checkout before the sessions are processed, so what the repository's guidance already says is
 * measured too (the benchmark's checkouts otherwise hold only the transcripts).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { createProvider } from "../src/engine/llm/provider.ts";
import { retrievalContext } from "../src/engine/retrieve/retrieval-context.ts";
import { taskContext } from "../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../src/shared/api.ts";
import { estimateTokens } from "../src/shared/tokens.ts";
import { eventsByIds } from "../src/sql/events.ts";
import { currentItems } from "../src/sql/memory-items.ts";
import { openProjectDb } from "../src/sql/open.ts";
import { listUserStyle } from "../src/sql/user-style.ts";
import { reviewPacket, toEvidence, type Evidence } from "./memory-review.ts";
import { fmt, table, type Bench, type BenchReport } from "./report.ts";
import { startAnswerServer, type SeenRequest } from "./llm-answers.ts";
import { precheckLoss, type PrecheckLoss } from "./precheck-loss.ts";
import { buildProjects, processWith, USER } from "./replay.ts";
import { listEpisodes } from "../src/sql/episodes.ts";

const REPO = resolve(import.meta.dir, "..");
const LABELS = join(REPO, "test", "fixtures", "memory-quality");
const SCENARIOS = join(REPO, "test", "fixtures", "scenarios");
const PACKMIND = "packmindhub-context-evaluator";
const BUDGET = 400;

export const KINDS = ["rule", "decision", "lesson", "recipe", "fact"] as const;
export type Kind = (typeof KINDS)[number];
export type Split = "train" | "holdout";

export interface MustItem {
  id: string;
  kind: Kind;
  scope: "project" | "user";
  ideal: string;
  all: string[];
  evidence: string;
  task?: string;
  /**
   * A fresh reviewer's audit of the label (rules, decisions and lessons): would a strict teammate keep
   * this memory at all — true later in the project, not a changelog line, not readable in the code in
   * a minute? Where the knowledge came from: the user's words, an answer, an approved plan, the
   * assistant's reasoning, a tool's output.
   */
  review?: { verdict: "keep" | "reject"; source: string; reason: string };
}
interface MustNot {
  why: string;
  pattern: string;
}
export interface LabelledSession {
  origin: string;
  path: string;
  split: Split;
  must: MustItem[];
  must_not: MustNot[];
}

/** Every labelled session: "@origin/path" names another origin's file; a plain path is the packmind project's. */
export function loadLabels(dir = LABELS): LabelledSession[] {
  const out: LabelledSession[] = [];
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)
    .filter((n) => /^labels-.*\.json$/.test(n))
    .sort()) {
    const raw = JSON.parse(readFileSync(join(dir, f), "utf8")) as {
      part: string;
      sessions: Array<{ path: string; must: MustItem[]; must_not: MustNot[] }>;
    };
    const split: Split = raw.part === "holdout" ? "holdout" : "train";
    for (const s of raw.sessions) {
      const m = /^@([^/]+)\/(.+)$/.exec(s.path);
      out.push({
        origin: m ? m[1]! : PACKMIND,
        path: m ? m[2]! : s.path,
        split,
        must: s.must ?? [],
        must_not: s.must_not ?? [],
      });
    }
  }
  return out;
}

/** The scenarios' expectations as must items (their memory type decides the kind). */
function scenarioLabels(): LabelledSession[] {
  const raw = JSON.parse(readFileSync(join(SCENARIOS, "tasks.json"), "utf8")) as {
    related: Array<{ task: string; expect: Array<{ type: string; pattern: string }> }>;
    forbidden: Array<{ why: string; pattern: string }>;
  };
  const kindOf = (t: string): Kind =>
    t === "pitfall" ? "lesson" : t === "recipe" ? "recipe" : t === "user_style" ? "rule" : "fact";
  const must: MustItem[] = [];
  raw.related.forEach((r, i) =>
    r.expect.forEach((e, j) =>
      must.push({
        id: `scn-${i}-${j}`,
        kind: kindOf(e.type),
        scope: "project",
        ideal: e.pattern,
        all: [e.pattern],
        evidence: "",
        task: r.task,
      }),
    ),
  );
  return [
    {
      origin: "scenarios",
      path: "*",
      split: "train",
      must,
      must_not: raw.forbidden.map((f) => ({ why: f.why, pattern: f.pattern })),
    },
  ];
}

export interface StoredItem {
  project: string;
  type: string;
  key: string;
  scope: string;
  content: string;
  tokens: number;
  verdict: "must" | "noise" | "unlabelled";
  matched: string[];
  /** Every label it matches was rejected by the reviewer's audit (superseded later, a changelog line). */
  auditRejected: boolean;
  /** The events the item was drawn from (for the review packet). */
  evidence: Evidence[];
}

const compiled = new Map<string, RegExp>();
function re(p: string): RegExp {
  let r = compiled.get(p);
  if (!r) compiled.set(p, (r = new RegExp(p, "i")));
  return r;
}
export function matchesMust(m: MustItem, text: string): boolean {
  return m.all.every((p) => re(p).test(text));
}

interface TaskRow {
  project: string;
  id: string;
  kind: Kind;
  split: Split;
  items: number;
  tokens: number;
  hit: boolean;
  noiseServed: number;
}

export interface QualityResult {
  labels: LabelledSession[];
  stored: StoredItem[];
  recall: Array<{
    kind: Kind;
    split: Split;
    found: number;
    total: number;
    missed: string[];
    /** The same over the labels the reviewer's audit kept (all labels of a kind it did not audit). */
    endorsedFound: number;
    endorsedTotal: number;
  }>;
  tasks: TaskRow[];
  /** With a model stand-in: every request it saw, and the episodes (with their session) of the run. */
  llm?: LlmRun;
}

/** What the model stand-in saw in one run. */
export interface LlmRun {
  requests: SeenRequest[];
  /** Episode id → session id, of every episode of the run. */
  sessionOf: Map<string, string>;
  /** Episodes extracted by the model / by the rules. */
  byLlm: number;
  byRules: number;
  /** Whether the engine's pre-check ran, and what it would cost and save on this run's episodes. */
  precheck: boolean;
  loss: PrecheckLoss;
}

/** Which labelled sessions a run covers; with either set, only those sessions' transcripts are processed. */
export interface SessionFilter {
  origin?: string;
  split?: Split;
}

/** The model stand-in: record every request into `record`, answer from `answers` (memory-quality --record/--answers). */
export interface StandIn {
  record?: string;
  answers?: string;
  /** Run the engine's pre-check (llm.precheck); off, every episode is sent. */
  precheck: boolean;
}

/** With a stand-in the run's folders have a fixed place: a transcript's paths, and so a request's key, do not change. */
const LLM_TMP = join(tmpdir(), "sqrl-mq-llm");

function pct(n: number, d: number): string {
  return d === 0 ? "–" : `${((100 * n) / d).toFixed(0)} %`;
}
function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/**
 * Another labelled set than the shared one: `labels` is a folder of labels-*.json (paths "@origin/…"),
 * `transcripts` the folder holding one folder per origin. Sessions nobody tuned a rule on are the
 * honest test of what the extractor keeps.
 */
export interface LabelledSet {
  labels: string;
  transcripts: string;
}

/** The whole run, without printing (the unit of the benchmark and of the quality test). */
export async function memoryQuality(
  quick: boolean,
  set?: LabelledSet,
  filter: SessionFilter = {},
  standIn?: StandIn,
  guidance?: string,
): Promise<QualityResult> {
  const filtered = filter.origin !== undefined || filter.split !== undefined;
  // --origin/--split pick real labelled sessions: the synthetic scenarios join the whole run only (their
  // labels once stayed in a filtered run's recall while their transcripts were left out: 19 of train's 79
  // labels counted as missed without a session behind them).
  const labels = (
    set ? loadLabels(set.labels) : [...(filtered ? [] : scenarioLabels()), ...(quick ? [] : loadLabels())]
  ).filter(
    (l) => !filtered || ((!filter.origin || l.origin === filter.origin) && (!filter.split || l.split === filter.split)),
  );
  let tmp: string;
  if (standIn) {
    rmSync(LLM_TMP, { recursive: true, force: true });
    mkdirSync(LLM_TMP, { recursive: true });
    tmp = LLM_TMP;
  } else tmp = mkdtempSync(join(tmpdir(), "sqrl-mq-"));
  const server = standIn ? startAnswerServer(standIn) : null;
  try {
    const origins = new Set(labels.map((l) => l.origin));
    const projects = buildProjects(tmp, quick && !set, set?.transcripts)
      .filter((p) => origins.has(p.name))
      .map((p) => {
        if (!filtered) return p;
        const wanted = new Set(labels.filter((l) => l.origin === p.name).map((l) => l.path));
        const dir = join(tmp, "transcripts", p.name);
        return { ...p, files: p.files.filter((f) => wanted.has(relative(dir, f))) };
      });
    if (guidance)
      for (const p of projects)
        if (existsSync(join(guidance, p.name))) cpSync(join(guidance, p.name), p.root, { recursive: true });
    const llm = server
      ? await createProvider(
          {
            "llm.provider": "openai_compatible",
            "llm.model": "stand-in",
            "llm.base_url": server.url,
            "llm.api_key_env": "MQ_STAND_IN_KEY",
            "llm.timeout_ms": 30_000,
          },
          {},
        )
      : null;
    const { clockMs, openUser } = await processWith(tmp, projects, llm, { "llm.precheck": standIn?.precheck ?? true });
    const userDb = openUser();
    const stored: StoredItem[] = [];
    const tasks: TaskRow[] = [];
    const classify = (
      project: string,
      type: string,
      key: string,
      scope: string,
      content: string,
      evidence: Evidence[] = [],
    ): StoredItem => {
      const own = labels.filter((l) => project === "user.db" || l.origin === project);
      const hits = own.flatMap((l) => l.must.filter((m) => matchesMust(m, content)));
      const matched = hits.map((m) => m.id);
      const noise = matched.length === 0 && own.some((l) => l.must_not.some((n) => re(n.pattern).test(content)));
      return {
        project,
        type,
        key,
        scope,
        content,
        tokens: estimateTokens(content),
        verdict: matched.length > 0 ? "must" : noise ? "noise" : "unlabelled",
        matched,
        auditRejected: hits.length > 0 && hits.every((m) => m.review?.verdict === "reject"),
        evidence,
      };
    };
    try {
      const projectOf = new Map(projects.map((p) => [p.root, p]));
      for (const s of listUserStyle(userDb, USER)) {
        const evidence = s.evidence.flatMap((e) => {
          const p = projectOf.get(e.project_id);
          if (!p) return [];
          const db = openProjectDb(p.root);
          try {
            return eventsByIds(db, e.event_ids).map((ev) => toEvidence(p.name, ev));
          } finally {
            db.close();
          }
        });
        stored.push(classify("user.db", "user_style", s.key, "user", s.content, evidence));
      }
      for (const p of projects) {
        const db = openProjectDb(p.root);
        try {
          for (const it of currentItems(db, p.root)) {
            const evidence = eventsByIds(db, it.source_event_ids).map((ev) => toEvidence(p.name, ev));
            stored.push(classify(p.name, it.type, it.key, it.scope, it.content, evidence));
          }
          const rctx = retrievalContext(db, p.root, { nowMs: clockMs, userId: USER, userDb });
          for (const l of labels.filter((x) => x.origin === p.name)) {
            for (const m of l.must) {
              if (!m.task) continue;
              const tc = await taskContext(
                rctx,
                TaskContextRequest.parse({
                  project_id: p.root,
                  task_description: m.task,
                  context_budget_tokens: BUDGET,
                }),
              );
              const served = tc.selected_memories.map((x) => classify(p.name, x.type, x.key, "", x.content));
              tasks.push({
                project: p.name,
                id: m.id,
                kind: m.kind,
                split: l.split,
                items: served.length,
                tokens: tc.token_estimate,
                hit: tc.selected_memories.some((x) => matchesMust(m, x.content)),
                noiseServed: served.filter((x) => x.verdict === "noise").length,
              });
            }
          }
        } finally {
          db.close();
        }
      }
    } finally {
      userDb.close();
    }
    const recall: QualityResult["recall"] = [];
    for (const split of ["train", "holdout"] as const) {
      for (const kind of KINDS) {
        // One lesson labelled in several sessions (the same patterns) counts once.
        const seen = new Set<string>();
        const musts = labels
          .filter((l) => l.split === split)
          .flatMap((l) => l.must.filter((m) => m.kind === kind).map((m) => ({ m, origin: l.origin })))
          .filter(({ m, origin }) => {
            const k = `${origin}\u0000${[...m.all].sort().join("\u0000")}`;
            return !seen.has(k) && seen.add(k) !== undefined;
          });
        const found = musts.filter(({ m, origin }) =>
          stored.some((s) => (s.project === origin || s.project === "user.db") && matchesMust(m, s.content)),
        );
        const endorsed = musts.filter(({ m }) => m.review?.verdict !== "reject");
        recall.push({
          kind,
          split,
          found: found.length,
          total: musts.length,
          missed: musts.filter((x) => !found.includes(x)).map(({ m }) => `${m.id}: ${m.ideal}`),
          endorsedFound: endorsed.filter((x) => found.includes(x)).length,
          endorsedTotal: endorsed.length,
        });
      }
    }
    let llmRun: LlmRun | undefined;
    if (server) {
      const sessionOf = new Map<string, string>();
      let byLlm = 0;
      let byRules = 0;
      for (const p of projects) {
        const db = openProjectDb(p.root);
        try {
          for (const e of listEpisodes(db, p.root, 100_000)) {
            sessionOf.set(e.id, e.session_id ?? e.id);
            if (e.extractor === "llm") byLlm++;
            else if (e.extractor) byRules++;
          }
        } finally {
          db.close();
        }
      }
      llmRun = {
        requests: [...server.seen],
        sessionOf,
        byLlm,
        byRules,
        precheck: standIn!.precheck,
        loss: precheckLoss(projects, labels),
      };
    }
    return { labels, stored, recall, tasks, ...(llmRun ? { llm: llmRun } : {}) };
  } finally {
    server?.stop();
    if (!process.env.SQRL_MQ_KEEP) rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Tokens the model was sent and answered per session of the run (sessions with at least one
 * episode); `precheck`: only the calls of episodes the pre-check sends (the run's own when it ran).
 */
export function tokensPerSession(
  run: LlmRun,
  precheck = run.precheck,
): { sessions: number; input: number; output: number; calls: number } {
  const sessions = new Set(run.sessionOf.values()).size;
  // Without answers the update decisions are about the rules' candidates: only extraction calls count.
  const all = run.requests.some((r) => r.answered) ? run.requests : run.requests.filter((r) => r.kind === "extraction");
  const reqs = precheck ? all.filter((r) => !r.episode || !run.loss.skipped.has(r.episode)) : all;
  const input = reqs.reduce((a, r) => a + r.inputTokens, 0);
  const output = reqs.reduce((a, r) => a + r.outputTokens, 0);
  const n = Math.max(1, sessions);
  return { sessions, input: input / n, output: output / n, calls: reqs.length / n };
}

function render(r: QualityResult): BenchReport {
  const recallRows = KINDS.map((k) => {
    const tr = r.recall.find((x) => x.kind === k && x.split === "train")!;
    const ho = r.recall.find((x) => x.kind === k && x.split === "holdout")!;
    return [
      k,
      `${tr.found}/${tr.total}`,
      pct(tr.found, tr.total),
      `${ho.found}/${ho.total}`,
      pct(ho.found, ho.total),
      `${tr.endorsedFound}/${tr.endorsedTotal}`,
      `${ho.endorsedFound}/${ho.endorsedTotal}`,
    ];
  });
  const goalKinds: Kind[] = ["rule", "decision", "lesson"];
  const sum = (split: Split, f: "found" | "total" | "endorsedFound" | "endorsedTotal") =>
    r.recall.filter((x) => x.split === split && goalKinds.includes(x.kind)).reduce((a, x) => a + x[f], 0);
  const audited = r.labels.flatMap((l) => l.must).filter((m) => goalKinds.includes(m.kind) && m.review);
  const n = r.stored.length;
  const noise = r.stored.filter((s) => s.verdict === "noise").length;
  const unl = r.stored.filter((s) => s.verdict === "unlabelled").length;
  const toks = r.stored.map((s) => s.tokens);
  const byType = new Map<string, number>();
  for (const s of r.stored) byType.set(s.type, (byType.get(s.type) ?? 0) + 1);
  const servedItems = r.tasks.map((t) => t.items);
  const served = r.tasks.reduce((a, t) => a + t.items, 0);
  const servedNoise = r.tasks.reduce((a, t) => a + t.noiseServed, 0);
  const extractor = r.llm ? "model stand-in's answers, offline rules where a call failed" : "offline extractor";
  const md = [
    `Recall of labelled must-have memories among stored items (${extractor}). The last two columns`,
    `count only the labels a fresh reviewer's audit kept (it rejected ${audited.filter((m) => m.review?.verdict === "reject").length} of ${audited.length} labelled rules, decisions and`,
    "lessons: superseded later in the project, changelog lines of approved plans, readable in the code):",
    "",
    table(["kind", "train", "", "holdout", "", "train, audited", "holdout, audited"], recallRows),
    "",
    table(
      [
        "stored",
        "by type",
        "noise (must_not)",
        "matches only audit-rejected labels",
        "unlabelled",
        "tokens/item median",
        "p95",
        "max",
      ],
      [
        [
          String(n),
          [...byType].map(([t, c]) => `${t} ${c}`).join(", "),
          `${noise} (${pct(noise, n)})`,
          String(r.stored.filter((s) => s.auditRejected).length),
          `${unl} (${pct(unl, n)})`,
          fmt(quantile(toks, 0.5), 0),
          fmt(quantile(toks, 0.95), 0),
          fmt(Math.max(0, ...toks), 0),
        ],
      ],
    ),
    "",
    `Task context at ${BUDGET} tokens for the ${r.tasks.length} labelled tasks: labelled memory served ${r.tasks.filter((t) => t.hit).length}/${r.tasks.length}; items per context median ${fmt(quantile(servedItems, 0.5), 0)}, max ${fmt(Math.max(0, ...servedItems), 0)}; noise among served ${servedNoise}/${served} (${pct(servedNoise, served)}).`,
    ...(r.llm ? ["", renderLlm(r.llm)] : []),
  ].join("\n");
  return {
    title: "Memory quality (offline extraction vs labelled real sessions)",
    markdown: md,
    headline: [
      `recall rules+decisions+lessons train ${pct(sum("train", "found"), sum("train", "total"))}, holdout ${pct(sum("holdout", "found"), sum("holdout", "total"))} (goal ≥ 80 %); of the labels the audit kept: train ${pct(sum("train", "endorsedFound"), sum("train", "endorsedTotal"))}, holdout ${pct(sum("holdout", "endorsedFound"), sum("holdout", "endorsedTotal"))}`,
      `noise ${pct(noise, n)} of ${n} stored (goal ≤ 10 %), unlabelled ${pct(unl, n)}`,
      `tokens/item median ${fmt(quantile(toks, 0.5), 0)} (goal ≤ 50), items per 400-token context max ${fmt(Math.max(0, ...servedItems), 0)}`,
    ],
  };
}

/** What the model stand-in saw: calls, answers, the requests nobody answered, tokens per session. */
function renderLlm(run: LlmRun): string {
  const t = tokensPerSession(run);
  const missing = run.requests.filter((q) => !q.answered);
  const byKind = new Map<string, number>();
  for (const q of missing) byKind.set(q.kind, (byKind.get(q.kind) ?? 0) + 1);
  const without = tokensPerSession(run, false);
  const withPc = tokensPerSession(run, true);
  const l = run.loss;
  const lost = l.lost.map((x) => `${x.id} (${x.kind})`).join(", ");
  return [
    `Model stand-in (pre-check ${run.precheck ? "on" : "off"}): ${run.requests.length} calls, ${run.requests.length - missing.length} answered; episodes extracted by the model ${run.byLlm}, by the rules ${run.byRules}. Per session (${t.sessions}): ${fmt(t.calls, 1)} calls, ${fmt(t.input, 0)} input and ${fmt(t.output, 0)} output tokens.`,
    `Pre-check: keeps ${l.skipped.size} of ${l.episodes} episodes from the model; labelled memories whose every evidence episode it keeps from the model: ${l.lost.length} of ${l.traced} traced (${l.labels} labels)${lost ? `: ${lost}` : ""}.${run.precheck ? "" : ` Calls per session without / with it: ${fmt(without.calls, 1)} / ${fmt(withPc.calls, 1)}, input tokens ${fmt(without.input, 0)} / ${fmt(withPc.input, 0)}, output tokens ${fmt(without.output, 0)} / ${fmt(withPc.output, 0)}.`}`,
    missing.length === 0
      ? "Every request had an answer."
      : `Requests with no answer (the call failed and the rules took over): ${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ")}: ${missing.map((q) => q.key).join(", ")}.`,
  ].join("\n");
}

/** The value after a flag, or an error that says what the flag needs. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  if (at < 0) return undefined;
  const v = args[at + 1];
  if (!v || v.startsWith("--")) throw new Error(`${flag} needs a path: bun run bench memory-quality ${flag} <path>`);
  return resolve(v);
}

const bench: Bench = async ({ quick, args }) => {
  const labelsDir = flagValue(args, "--labels");
  const transcripts = flagValue(args, "--transcripts");
  if (Boolean(labelsDir) !== Boolean(transcripts))
    throw new Error("--labels and --transcripts go together: a folder of labels-*.json and the transcripts they label");
  const set = labelsDir && transcripts ? { labels: labelsDir, transcripts } : undefined;
  const origin = args.includes("--origin") ? args[args.indexOf("--origin") + 1] : undefined;
  const rawSplit = args.includes("--split") ? args[args.indexOf("--split") + 1] : undefined;
  if (rawSplit !== undefined && rawSplit !== "train" && rawSplit !== "holdout")
    throw new Error("--split takes train or holdout: bun run bench memory-quality --split holdout");
  if (args.includes("--origin") && (!origin || origin.startsWith("--")))
    throw new Error("--origin needs a project name, e.g. --origin packmindhub-context-evaluator");
  const record = flagValue(args, "--record");
  const answers = flagValue(args, "--answers");
  const standIn =
    record || answers ? { ...(record ? { record } : {}), ...(answers ? { answers } : {}), precheck: false } : undefined;
  const split: Split | undefined = rawSplit;
  const filter: SessionFilter = { ...(origin ? { origin } : {}), ...(split ? { split } : {}) };
  const guidance = flagValue(args, "--guidance");
  const r = await memoryQuality(quick, set, filter, standIn, guidance);
  // With answers, the same run again with the engine's pre-check on: what it costs in recall, for real.
  const withPrecheck = answers
    ? await memoryQuality(quick, set, filter, { answers, precheck: true }, guidance)
    : undefined;
  if (record)
    console.log(`${readdirSync(record).filter((f) => f.endsWith(".json")).length} requests recorded in ${record}`);
  const dumpAt = args.indexOf("--dump");
  const dump = dumpAt >= 0 ? args[dumpAt + 1] : process.env.SQRL_MQ_DUMP;
  if (dump) writeFileSync(dump, JSON.stringify({ stored: r.stored, recall: r.recall, tasks: r.tasks }, null, 1));
  const reviewAt = args.indexOf("--review");
  if (reviewAt >= 0 && args[reviewAt + 1])
    writeFileSync(args[reviewAt + 1]!, reviewPacket(r.stored, r.labels, set?.transcripts));
  const report = render(r);
  if (!withPrecheck) return report;
  const second = render(withPrecheck);
  return {
    ...report,
    markdown: `${report.markdown}\n\nThe same answers with the engine's pre-check on (llm.precheck = true, the default):\n\n${second.markdown}`,
    headline: [...report.headline, ...second.headline.map((h) => `with pre-check: ${h}`)],
  };
};
export default bench;
