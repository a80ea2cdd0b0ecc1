/**
 * `replay`: transcript-replay quality of sqrl's OFFLINE coding memory (issue 8).
 *
 * The scenario transcripts (test/fixtures/scenarios/*.jsonl, Claude Code format, cwd rewritten to a
 * temp git repo holding a copy of test/fixtures/scenarios/repo/) and — in full mode — the real
 * Claude Code fixture transcripts of ../shared (each origin repo rewritten to a temp repo of its own)
 * go through the real parts in-process: capture's one-shot ingest (`ingestFileOnce`, the backfill
 * path), then `processEvents` in batches of `daemon.batch_max_events` oldest-first exactly as the
 * daemon's batcher sends them, with a clock one hour after the newest event (every episode closes, as
 * under a daemon that keeps running). Then, per task, `task_context` with the default budget (400)
 * and `search_memory` with the task text (default top_k 5 and budget).
 *
 * Reported: recall of expected memories within budget (per task and overall), abstention on
 * unrelated tasks, forbidden contents stored as valid memory (dead-end hypotheses, unresolved errors,
 * secrets: must be 0; every valid item of every project and user.db is checked), tokens per call.
 * `--quick`: scenarios only.
 */
import type { Database } from "bun:sqlite";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { ingestFileOnce } from "../src/daemon/backfill.ts";
import { ProjectDbPool, type IngestContext } from "../src/daemon/ingest.ts";
import type { LlmProvider } from "../src/engine/llm/types.ts";
import { StateDbLedger } from "../src/engine/llm/usage.ts";
import { processEvents, type EngineDeps } from "../src/engine/learn/process-events.ts";
import { retrievalContext, type RetrievalContext } from "../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../src/engine/retrieve/search.ts";
import { taskContext } from "../src/engine/retrieve/task-context.ts";
import { SearchQuery, TaskContextRequest, type MemoryType } from "../src/shared/api.ts";
import { loadConfig } from "../src/shared/config.ts";
import type { ConfigValues } from "../src/shared/config-keys.ts";
import { isoToMs, nowIso } from "../src/shared/time.ts";
import { listEpisodes } from "../src/sql/episodes.ts";
import { markProcessed, unprocessedEvents } from "../src/sql/events.ts";
import { currentItems } from "../src/sql/memory-items.ts";
import { openDatabase, openProjectDb } from "../src/sql/open.ts";
import { listUserStyle } from "../src/sql/user-style.ts";
import { fmt, table, type Bench } from "./report.ts";

const REPO = resolve(import.meta.dir, "..");
const SCENARIOS = join(REPO, "test", "fixtures", "scenarios");
const SCENARIO_CWD = "/workspace/inventory-api";
export const SHARED_CLAUDE = resolve(REPO, "..", "shared", "fixtures", "transcripts", "claude-code");
export const USER = "bench@example.com";
const SECRET_SHAPES =
  /sk-ant-[A-Za-z0-9_-]{12,}|\bsk-[A-Za-z0-9]{24,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|-----BEGIN [A-Z ]*PRIVATE KEY-----/;

interface Expect {
  type: MemoryType;
  pattern: string;
}
interface RelatedTask {
  task: string;
  files: string[];
  expect: Expect[];
}
interface Forbidden {
  why: string;
  type?: MemoryType;
  pattern: string;
}
interface Expectations {
  related: RelatedTask[];
  unrelated: string[];
  forbidden: Forbidden[];
}

/**
 * Expectations on the real fixture transcripts, each checked by reading the transcript (origin folder
 * under ../shared/fixtures/transcripts/claude-code → tasks on that origin's temp repo):
 * - entireio-cli b1: `mise run lint` fails (exhaustive linter: missing cases in the AgentType switch of
 *   summarize.go), fixed by listing the cases; the user refused an `//exhaustive:ignore` directive.
 * - entireio-cli 8e: after the change `mise run fmt`, `mise run lint`, `mise run test` all pass; the
 *   user asks to keep working documentation in Linear.
 * - entireio-cli a6: edits of cmd/entire/cli/hooks_claudecode_handlers.go, then `mise run test && mise
 *   run lint` green (the module note it used to expect, "sessions work on hooks_claudecode_handlers.go",
 *   is no longer made: issue 14).
 * - marot-spotter tool_heavy: the app is started with `mix phx.server` (in the background).
 * The other origins (jnarowski-agentcmd, kvsankar-agent-history, vibecodingtracker) hold UI tweaks,
 * research and redacted or non-English sessions with nothing durable to expect: they are background
 * noise. The scenarios' unrelated tasks are asked in every project.
 */
const FIXTURE_EXPECTATIONS: Record<string, Omit<Expectations, "forbidden"> & { forbidden?: Forbidden[] }> = {
  "entireio-cli": {
    related: [
      {
        task: "Handle the new agent type in the summarize switch statement",
        files: ["cmd/entire/cli/summarize/summarize.go"],
        expect: [{ type: "pitfall", pattern: "missing cases|exhaustive" }],
      },
      {
        task: "Silence the exhaustive linter warning with an ignore directive",
        files: [],
        expect: [{ type: "user_style", pattern: "exhaustive:ignore|suppression" }],
      },
      {
        task: "Run the checks before committing the change",
        files: [],
        expect: [{ type: "recipe", pattern: "mise run fmt[\\s\\S]*mise run lint[\\s\\S]*mise run test" }],
      },
      {
        task: "Write the working documentation for the new feature",
        files: [],
        expect: [{ type: "user_style", pattern: "linear" }],
      },
      // Issue 17: a function name or ticket id that no memory mentions must not sink the rest of the task.
      {
        task: "fix the exhaustive lint failure in BuildCondensedTranscriptFromBytes",
        files: [],
        expect: [{ type: "pitfall", pattern: "missing cases|exhaustive" }],
      },
      {
        task: "write the ENT-98 working notes",
        files: [],
        expect: [{ type: "user_style", pattern: "linear" }],
      },
      {
        task: "Run the tests and the linter after changing the hooks",
        files: [],
        expect: [
          { type: "recipe", pattern: "mise run test[\\s\\S]*mise run lint" },
          { type: "user_style", pattern: "mise run test" },
        ],
      },
    ],
    unrelated: [],
  },
  "marot-spotter": {
    related: [
      {
        task: "Start the Phoenix server in the background",
        files: [],
        expect: [{ type: "user_style", pattern: "mix phx\\.server" }],
      },
    ],
    unrelated: [],
  },
};

// ---- world: temp repos, rewritten transcripts, capture, engine -----------------------------------

export interface Project {
  name: string;
  root: string;
  files: string[];
  expectations: Expectations;
}

export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsonlFiles(p));
    else if (p.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}

function gitInit(root: string): void {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    GIT_AUTHOR_NAME: "bench",
    GIT_AUTHOR_EMAIL: USER,
    GIT_COMMITTER_NAME: "bench",
    GIT_COMMITTER_EMAIL: USER,
    GIT_CONFIG_NOSYSTEM: "1",
    HOME: root,
  };
  const git = (...args: string[]) =>
    Bun.spawnSync(["git", ...args], { cwd: root, env, stdout: "ignore", stderr: "ignore" });
  if (git("init", "-q").exitCode !== 0) return; // no git on this machine: a plain folder still works
  git("add", "-A");
  git("commit", "-q", "--allow-empty", "-m", "Initial commit");
}

/** The cwds recorded in a file (every `"cwd":"…"`), as written. */
function recordedCwds(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/"cwd":"((?:[^"\\]|\\.)*)"/g)) out.add(JSON.parse(`"${m[1]!}"`) as string);
  return out;
}

/** Outermost cwds: a cwd inside another one is covered by it. */
function outermost(cwds: Iterable<string>): string[] {
  const all = [...new Set(cwds)].sort((a, b) => a.length - b.length);
  const out: string[] = [];
  for (const c of all) if (!out.some((o) => c === o || c.startsWith(`${o}/`))) out.push(c);
  return out;
}

/** Copy transcripts to `dest`, every recorded root (and paths under it) rewritten to `root`. */
function rewriteTranscripts(
  files: readonly string[],
  baseDir: string,
  dest: string,
  root: string,
  roots: readonly string[],
): string[] {
  const byLength = [...roots].sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const f of files) {
    let text = readFileSync(f, "utf8");
    for (const r of byLength) text = text.split(r).join(root);
    const target = join(dest, relative(baseDir, f));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    out.push(target);
  }
  return out;
}

function loadScenarioExpectations(): Expectations {
  const raw = JSON.parse(readFileSync(join(SCENARIOS, "tasks.json"), "utf8")) as Expectations;
  return { related: raw.related, unrelated: raw.unrelated, forbidden: raw.forbidden };
}

/** The scenarios' project, then one project per origin folder under `claudeRoot` (the shared fixtures by default). */
export function buildProjects(tmp: string, quick: boolean, claudeRoot = SHARED_CLAUDE): Project[] {
  const projects: Project[] = [];
  const scenarioRoot = join(tmp, "repos", "inventory-api");
  cpSync(join(SCENARIOS, "repo"), scenarioRoot, { recursive: true });
  gitInit(scenarioRoot);
  const scenarioFiles = readdirSync(SCENARIOS)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => join(SCENARIOS, f))
    .sort();
  projects.push({
    name: "scenarios",
    root: scenarioRoot,
    files: rewriteTranscripts(scenarioFiles, SCENARIOS, join(tmp, "transcripts", "scenarios"), scenarioRoot, [
      SCENARIO_CWD,
    ]),
    expectations: loadScenarioExpectations(),
  });
  if (quick || !existsSync(claudeRoot)) return projects;
  const universal = projects[0]!.expectations.unrelated;
  for (const origin of readdirSync(claudeRoot).sort()) {
    const dir = join(claudeRoot, origin);
    if (!statSync(dir).isDirectory()) continue;
    const files = jsonlFiles(dir);
    const roots = outermost(files.flatMap((f) => [...recordedCwds(readFileSync(f, "utf8"))]));
    if (roots.length === 0) continue;
    const root = join(tmp, "repos", origin);
    mkdirSync(root, { recursive: true });
    const own = FIXTURE_EXPECTATIONS[origin];
    gitInit(root);
    projects.push({
      name: origin,
      root,
      files: rewriteTranscripts(files, dir, join(tmp, "transcripts", origin), root, roots),
      expectations: {
        related: own?.related ?? [],
        unrelated: [...universal, ...(own?.unrelated ?? [])],
        forbidden: own?.forbidden ?? [],
      },
    });
  }
  return projects;
}

interface Processing {
  /** Rows capture stored (after redaction and dedup) and lines it skipped as malformed. */
  stored: number;
  malformed: number;
  events: number;
  batches: number;
  episodes: number;
  openEpisodes: number;
  unextracted: number;
  processMs: number;
}

export async function captureAndProcess(
  projects: readonly Project[],
  deps: (nowMs: number) => Partial<EngineDeps>,
  batchMax: number,
): Promise<{ clockMs: number; stats: Map<string, Processing> }> {
  const pool = new ProjectDbPool();
  const ctx: IngestContext = { projects: projects.map((p) => p.root), userId: USER, pool };
  const stats = new Map<string, Processing>();
  const captured = new Map<string, { stored: number; malformed: number }>();
  for (const p of projects) {
    const c = { stored: 0, malformed: 0 };
    for (const f of p.files) {
      const r = await ingestFileOnce(f, "claude", false, ctx);
      c.stored += r.added;
      c.malformed += r.malformed;
    }
    captured.set(p.name, c);
  }
  pool.close();
  // One clock for the run: an hour after the newest stored event (a daemon that keeps running).
  let newest = 0;
  for (const p of projects) {
    const db = openProjectDb(p.root);
    const row = db.query(`SELECT MAX(timestamp) AS ts FROM events`).get() as { ts: string | null };
    db.close();
    if (row.ts) newest = Math.max(newest, isoToMs(row.ts));
  }
  const clockMs = newest + 3_600_000;
  for (const p of projects) {
    const db = openProjectDb(p.root);
    let batches = 0;
    let events = 0;
    const t1 = performance.now();
    try {
      for (;;) {
        const batch = unprocessedEvents(db, p.root, batchMax);
        if (batch.length === 0) break;
        const byUser = new Map<string, typeof batch>();
        for (const e of batch) byUser.set(e.user_id, [...(byUser.get(e.user_id) ?? []), e]);
        for (const [userId, evs] of byUser) {
          await processEvents({ project_id: p.root, user_id: userId, events: evs }, deps(clockMs));
          markProcessed(
            db,
            evs.map((e) => e.id),
            nowIso(clockMs),
          );
          batches++;
          events += evs.length;
        }
      }
      const eps = listEpisodes(db, p.root, 100_000);
      stats.set(p.name, {
        ...(captured.get(p.name) ?? { stored: 0, malformed: 0 }),
        events,
        batches,
        episodes: eps.length,
        openEpisodes: eps.filter((e) => e.status !== "closed").length,
        unextracted: eps.filter((e) => e.extracted_at === null).length,
        processMs: performance.now() - t1,
      });
    } finally {
      db.close();
    }
  }
  return { clockMs, stats };
}

// ---- scoring ---------------------------------------------------------------------------------

interface Returned {
  type: string;
  key: string;
  content: string;
}

function matches(e: Expect, m: Returned): boolean {
  return m.type === e.type && new RegExp(e.pattern, "i").test(`${m.content}\n${m.key}`);
}

interface TaskRow {
  project: string;
  task: string;
  expected: number;
  ctxHits: number;
  searchHits: number;
  ctxTokens: number;
  searchTokens: number;
  ctxItems: number;
  missed: string[];
  /** `type key` of every memory task_context returned, in order. */
  returned: string[];
}

interface UnrelatedRow {
  project: string;
  task: string;
  abstained: boolean;
  items: number;
  tokens: number;
  searchTokens: number;
}

interface Violation {
  project: string;
  why: string;
  where: string;
  content: string;
}

async function runTasks(
  p: Project,
  rctx: RetrievalContext,
): Promise<{ related: TaskRow[]; unrelated: UnrelatedRow[] }> {
  const related: TaskRow[] = [];
  const unrelated: UnrelatedRow[] = [];
  for (const t of p.expectations.related) {
    const tc = await taskContext(
      rctx,
      TaskContextRequest.parse({ project_id: p.root, task_description: t.task, active_file_paths: t.files }),
    );
    const sr = await searchMemory(rctx, SearchQuery.parse({ project_id: p.root, query: t.task, scope_paths: t.files }));
    const ctxMems = tc.selected_memories;
    const srMems = sr.results;
    const ctxHit = t.expect.filter((e) => ctxMems.some((m) => matches(e, m)));
    related.push({
      project: p.name,
      task: t.task,
      expected: t.expect.length,
      ctxHits: ctxHit.length,
      searchHits: t.expect.filter((e) => srMems.some((m) => matches(e, m))).length,
      ctxTokens: tc.token_estimate,
      searchTokens: sr.token_estimate,
      ctxItems: ctxMems.length,
      missed: t.expect.filter((e) => !ctxHit.includes(e)).map((e) => `${e.type} /${e.pattern}/`),
      returned: ctxMems.map((m) => `${m.type} ${m.key}`),
    });
  }
  for (const task of p.expectations.unrelated) {
    const tc = await taskContext(rctx, TaskContextRequest.parse({ project_id: p.root, task_description: task }));
    const sr = await searchMemory(rctx, SearchQuery.parse({ project_id: p.root, query: task }));
    unrelated.push({
      project: p.name,
      task,
      abstained: !tc.has_relevant_memory,
      items: tc.selected_memories.length,
      tokens: tc.token_estimate,
      searchTokens: sr.token_estimate,
    });
  }
  return { related, unrelated };
}

/** Every valid memory of every project and the user's global style, checked against forbidden contents and secret shapes. */
function violations(projects: readonly Project[], userDb: Database): Violation[] {
  const out: Violation[] = [];
  const allForbidden = projects.flatMap((p) => p.expectations.forbidden.map((f) => ({ f, owner: p.name })));
  const check = (project: string, where: string, type: string, text: string) => {
    for (const { f } of allForbidden) {
      if (f.type && f.type !== type) continue;
      if (new RegExp(f.pattern, "i").test(text)) out.push({ project, why: f.why, where, content: text.slice(0, 160) });
    }
    if (SECRET_SHAPES.test(text) && !allForbidden.some(({ f }) => new RegExp(f.pattern, "i").test(text)))
      out.push({ project, why: "secret-shaped string", where, content: text.slice(0, 160) });
  };
  for (const p of projects) {
    const db = openProjectDb(p.root);
    try {
      for (const it of currentItems(db, p.root))
        check(p.name, `${it.type} ${it.key}`, it.type, `${it.content}\n${it.key}\n${it.tags.join(" ")}`);
    } finally {
      db.close();
    }
  }
  for (const s of listUserStyle(userDb, USER))
    check("user.db", `user_style ${s.key}`, "user_style", `${s.content}\n${s.key}\n${s.tags.join(" ")}`);
  return out;
}

function countItems(root: string): Record<string, number> {
  const db = openProjectDb(root);
  try {
    const out: Record<string, number> = {};
    for (const it of currentItems(db, root)) out[it.type] = (out[it.type] ?? 0) + 1;
    return out;
  } finally {
    db.close();
  }
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const max = (xs: readonly number[]) => (xs.length === 0 ? NaN : Math.max(...xs));
const ratio = (a: number, b: number) => (b === 0 ? "n/a" : `${a}/${b} = ${fmt(a / b)}`);
const cell = (s: string) => s.replace(/\|/g, "\\|");

export interface ReplayResult {
  related: TaskRow[];
  unrelated: UnrelatedRow[];
  violations: Violation[];
  stats: Map<string, Processing>;
  items: Map<string, Record<string, number>>;
  userStyle: number;
}

/** The whole replay, without printing (the unit of the benchmark). */
/**
 * The offline world both quality benchmarks run in: a private sqrl home under `tmp` (default config,
 * no LLM, its own user.db and state.db), the projects captured and processed as the daemon would.
 */
export async function processOffline(
  tmp: string,
  projects: readonly Project[],
): Promise<{ clockMs: number; stats: Map<string, Processing>; openUser: () => Database }> {
  return processWith(tmp, projects, null);
}

/**
 * The same run with a chat model (memory-quality's recorded answers): no proactive summaries (the
 * extraction call writes the episode's summary) and no daily cap, so every call of the run is made.
 */
export async function processWith(
  tmp: string,
  projects: readonly Project[],
  llm: LlmProvider | null,
  overrides: Partial<ConfigValues> = {},
): Promise<{ clockMs: number; stats: Map<string, Processing>; openUser: () => Database }> {
  const home = join(tmp, "home");
  mkdirSync(home, { recursive: true });
  const loaded = { ...loadConfig(join(home, "absent.toml")), user_id: USER } as ConfigValues;
  const config = {
    ...loaded,
    ...(llm ? { "llm.daily_token_cap": 1_000_000_000 } : {}),
    ...overrides,
  } as ConfigValues;
  const openUser = () => openDatabase(join(home, "user.db"), "user");
  const openState = () => openDatabase(join(home, "state.db"), "state");
  const deps = (nowMs: number): Partial<EngineDeps> => ({
    config,
    llm,
    now: () => nowMs,
    openUserDb: openUser,
    ledger: new StateDbLedger(config["llm.daily_token_cap"], () => nowMs, openState),
    ...(llm ? { summaryLimit: 0 } : {}),
  });
  const { clockMs, stats } = await captureAndProcess(projects, deps, config["daemon.batch_max_events"]);
  return { clockMs, stats, openUser };
}

export async function replay(quick: boolean): Promise<ReplayResult> {
  const tmp = mkdtempSync(join(tmpdir(), "sqrl-replay-"));
  try {
    const projects = buildProjects(tmp, quick);
    const { clockMs, stats, openUser } = await processOffline(tmp, projects);
    const userDb = openUser();
    const related: TaskRow[] = [];
    const unrelated: UnrelatedRow[] = [];
    const items = new Map<string, Record<string, number>>();
    try {
      for (const p of projects) {
        const db = openProjectDb(p.root);
        try {
          const rctx = retrievalContext(db, p.root, { nowMs: clockMs, userId: USER, userDb });
          const r = await runTasks(p, rctx);
          related.push(...r.related);
          unrelated.push(...r.unrelated);
        } finally {
          db.close();
        }
        items.set(p.name, countItems(p.root));
      }
      return {
        related,
        unrelated,
        violations: violations(projects, userDb),
        stats,
        items,
        userStyle: listUserStyle(userDb, USER).length,
      };
    } finally {
      userDb.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The class of a forbidden content, from its `why`. */
function violationKind(why: string): "dead-end" | "unresolved" | "secret" | "other" {
  if (/dead.end|hypothes/i.test(why)) return "dead-end";
  if (/unresolved|never (?:fixed|resolved)/i.test(why)) return "unresolved";
  if (/secret|key|token|password/i.test(why)) return "secret";
  return "other";
}

function render(r: ReplayResult): { markdown: string; headline: string[] } {
  const expected = r.related.reduce((a, t) => a + t.expected, 0);
  const ctxHits = r.related.reduce((a, t) => a + t.ctxHits, 0);
  const srHits = r.related.reduce((a, t) => a + t.searchHits, 0);
  const scen = r.related.filter((t) => t.project === "scenarios");
  const scenExp = scen.reduce((a, t) => a + t.expected, 0);
  const scenHits = scen.reduce((a, t) => a + t.ctxHits, 0);
  const abstained = r.unrelated.filter((u) => u.abstained).length;
  // A related task that returns nothing abstained wrongly.
  const falseAbstentions = r.related.filter((t) => t.ctxItems === 0).length;
  const byKind = new Map<string, number>();
  for (const v of r.violations) byKind.set(violationKind(v.why), (byKind.get(violationKind(v.why)) ?? 0) + 1);
  const ctxTokens = [...r.related.map((t) => t.ctxTokens), ...r.unrelated.map((u) => u.tokens)];
  const srTokens = [...r.related.map((t) => t.searchTokens), ...r.unrelated.map((u) => u.searchTokens)];

  const perTask = table(
    [
      "project",
      "task",
      "task_context recall",
      "search recall",
      "items",
      "tokens (ctx / search)",
      "missed in task_context",
    ],
    r.related.map((t) => [
      t.project,
      cell(t.task),
      `${t.ctxHits}/${t.expected}`,
      `${t.searchHits}/${t.expected}`,
      t.ctxItems,
      `${t.ctxTokens} / ${t.searchTokens}`,
      cell(t.missed.join("; ") || "—"),
    ]),
  );
  const unrel = table(
    ["project", "unrelated task", "abstained", "items", "tokens"],
    r.unrelated.map((u) => [u.project, cell(u.task), u.abstained ? "yes" : "**no**", u.items, u.tokens]),
  );
  const summary = table(
    ["metric", "value"],
    [
      ["recall of expected memories in task_context (budget 400), all", ratio(ctxHits, expected)],
      ["  of which scenarios", ratio(scenHits, scenExp)],
      ["recall in search_memory (top 5, task text)", ratio(srHits, expected)],
      ["abstention on unrelated tasks (abstained / unrelated)", ratio(abstained, r.unrelated.length)],
      ["abstention precision (unrelated among all abstentions)", ratio(abstained, abstained + falseAbstentions)],
      ["related tasks that returned nothing", falseAbstentions],
      ["dead-end hypotheses stored as facts (must be 0)", byKind.get("dead-end") ?? 0],
      ["unresolved errors stored as pitfalls (must be 0)", byKind.get("unresolved") ?? 0],
      ["secrets stored (must be 0)", byKind.get("secret") ?? 0],
      ["all forbidden contents in valid memory (must be 0)", r.violations.length],
      ["task_context tokens per call, all (mean / max)", `${fmt(mean(ctxTokens), 0)} / ${max(ctxTokens)}`],
      [
        "  related tasks / unrelated tasks (mean)",
        `${fmt(mean(r.related.map((t) => t.ctxTokens)), 0)} / ${fmt(mean(r.unrelated.map((u) => u.tokens)), 0)}`,
      ],
      ["search_memory tokens per call, all (mean / max)", `${fmt(mean(srTokens), 0)} / ${max(srTokens)}`],
      [
        "  related tasks / unrelated tasks (mean)",
        `${fmt(mean(r.related.map((t) => t.searchTokens)), 0)} / ${fmt(mean(r.unrelated.map((u) => u.searchTokens)), 0)}`,
      ],
    ],
  );
  const proc = table(
    [
      "project",
      "events stored (malformed lines)",
      "events processed",
      "batches",
      "episodes",
      "open",
      "not extracted",
      "valid items (style/fact/pitfall/recipe)",
      "process ms",
    ],
    [...r.stats].map(([name, s]) => {
      const it = r.items.get(name) ?? {};
      return [
        name,
        `${s.stored} (${s.malformed})`,
        s.events,
        s.batches,
        s.episodes,
        s.openEpisodes,
        s.unextracted,
        `${it.user_style ?? 0}/${it.project_fact ?? 0}/${it.pitfall ?? 0}/${it.recipe ?? 0}`,
        fmt(s.processMs, 0),
      ];
    }),
  );
  const details = [
    "<details><summary>What task_context returned per related task</summary>",
    "",
    ...r.related.map((t) => `- ${t.project} / ${t.task}: ${t.returned.map((k) => `\`${k}\``).join(", ") || "nothing"}`),
    "",
    "</details>",
  ].join("\n");
  const viol =
    r.violations.length === 0
      ? "No forbidden content in any valid memory item."
      : table(
          ["project", "why", "item", "content"],
          r.violations.map((v) => [v.project, v.why, cell(v.where), cell(v.content)]),
        );
  const markdown = [
    "Offline (no LLM) memory built from transcripts by the real capture ingest and engine, then queried per task.",
    "Expectations: `test/fixtures/scenarios/tasks.json` (scenarios) and `bench/replay.ts` (real fixture transcripts, checked by reading them).",
    "",
    summary,
    "",
    perTask,
    "",
    unrel,
    "",
    proc,
    `\nGlobal user style items (user.db): ${r.userStyle}.`,
    "",
    viol,
    "",
    details,
  ].join("\n");
  const headline = [
    `task_context recall ${ratio(ctxHits, expected)} (scenarios ${ratio(scenHits, scenExp)}), search recall ${ratio(srHits, expected)}`,
    `abstention on unrelated ${ratio(abstained, r.unrelated.length)}, forbidden stored ${r.violations.length}, tokens/call mean ${fmt(mean(ctxTokens), 0)} max ${max(ctxTokens)}`,
  ];
  return { markdown, headline };
}

export default (async (opts) => {
  const result = await replay(opts.quick);
  const { markdown, headline } = render(result);
  return { title: "Replay: coding-memory quality on transcripts (offline)", markdown, headline };
}) satisfies Bench;
