/**
 * The issue's own scenario in the real hosts: memory distilled (offline extractor, the replay
 * benchmark's capture + processing) from the 24 real context-evaluator sessions in ../shared, then
 * "fix the lint errors that Biome reports in the remediation tab" asked through `get_task_context` at
 * the default 400-token budget and a tight 120 in Claude Code and in Codex. What each host hands the model must fit
 * the budget with a true footer, repeat no memory line and carry no path of this machine.
 * Skips with one line when the host CLIs or ../shared are absent.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { buildProjects, captureAndProcess } from "../../bench/replay.ts";
import { StateDbLedger } from "../../src/engine/llm/usage.ts";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { loadConfig } from "../../src/shared/config.ts";
import type { ConfigValues } from "../../src/shared/config-keys.ts";
import { estimateTokens } from "../../src/shared/tokens.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { makeHome, type DaemonHome } from "../daemon/harness.ts";
import { REPO_ROOT, runSqrl, SHARED_DIR } from "../helpers/sqrl.ts";
import {
  anthropicResults,
  claudeArgs,
  claudeEnv,
  codexEnv,
  codexExecArgs,
  HOSTS_INSTALLED,
  openaiResults,
  runHost,
  SKIP_REASON,
  type ForwardedResult,
} from "./harness.ts";
import { startModelServer, type ModelServer } from "./model-server.ts";

const ORIGIN = "packmindhub-context-evaluator";
const SHARED_OK = existsSync(join(SHARED_DIR, "fixtures", "transcripts", "claude-code", ORIGIN));
const READY = HOSTS_INSTALLED && SHARED_OK;
if (!READY)
  console.log(
    `test/hosts/real-memory: skipped: ${HOSTS_INSTALLED ? "../shared/fixtures (the real transcripts) is absent" : SKIP_REASON}`,
  );
// A host run is 1-3 s alone; on a loaded 2-core machine several times that.
setDefaultTimeout(60_000);
const suite = READY ? describe : describe.skip;

const TASK = "fix the lint errors that Biome reports in the remediation tab";
/** The default budget, and a tight one where the engine must be asked for less than the budget. */
const BUDGETS = [400, 120];
const TOOL = "mcp__sqrl__get_task_context";

let home: DaemonHome;
let root: string;
let model: ModelServer;
const measured: Array<{
  host: string;
  tool: string;
  task: string;
  budget: number;
  estimator: number;
  o200k: number;
  shown: number;
}> = [];

beforeAll(async () => {
  if (!READY) return;
  home = makeHome("[watch]\nclaude = false\ncodex = false\ngemini = false\ngit = false\n");
  const project = buildProjects(join(home.root, "replay"), false).find((p) => p.name === ORIGIN)!;
  root = project.root;
  expect(runSqrl(["init", root, "--yes", "--no-backfill", "--no-git"], { env: home.env }).code).toBe(0);
  const config = { ...loadConfig(join(home.root, "absent.toml")), user_id: "hosts@example.com" } as ConfigValues;
  const openUser = () => openDatabase(join(home.sqrlHome, "user.db"), "user");
  const openState = () => openDatabase(join(home.root, "replay-state.db"), "state");
  await captureAndProcess(
    [project],
    (nowMs) => ({
      config,
      llm: null,
      now: () => nowMs,
      openUserDb: openUser,
      ledger: new StateDbLedger(config["llm.daily_token_cap"], () => nowMs, openState),
    }),
    config["daemon.batch_max_events"],
  );
  model = startModelServer();
  const add = runSqrl(["hosts", "add", "claude,codex", "--yes", "--path", root], { env: claudeEnv(home.env, model) });
  expect(add.code, add.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  if (!READY) return;
  model.stop();
  if (process.env.SQRL_HOSTS_REPORT)
    writeFileSync(
      `${process.env.SQRL_HOSTS_REPORT.replace(/\.json$/, "")}-real.json`,
      `${JSON.stringify(measured, null, 2)}\n`,
    );
  await home.cleanup();
});

/** The calls: the same task at each budget, include_seen so both show what fits rather than what is new. */
const CALLS = BUDGETS.map((budget) => ({
  tool: TOOL,
  input: { task_description: TASK, context_budget_tokens: budget, include_seen: true },
}));

function check(host: string, results: ForwardedResult[]): void {
  const own = results.filter((x) => x.tool === TOOL);
  expect(own, `${host}: get_task_context results`).toHaveLength(BUDGETS.length);
  own.forEach((r, i) => {
    const budget = BUDGETS[i]!;
    const answer = ToolAnswer.parse(JSON.parse(r.text));
    expect(answer.has_relevant_memory).toBe(true);
    const tokens = estimateTokens(r.text);
    expect(tokens).toBeLessThanOrEqual(budget);
    expect(countTokens(r.text), `${host}: o200k`).toBeLessThanOrEqual(budget);
    const footer = [...answer.markdown.matchAll(/Budget: ~(\d+)\/(\d+) tokens/g)].at(-1);
    expect([Number(footer?.[1]), Number(footer?.[2])]).toEqual([tokens, budget]);
    const bullets = answer.markdown.split("\n").filter((l) => /^\s*[-*] /.test(l));
    expect(new Set(bullets).size).toBe(bullets.length);
    expect(r.text).not.toContain(home.root);
    expect(r.text).not.toContain(REPO_ROOT);
    measured.push({
      host,
      tool: "get_task_context",
      task: TASK,
      budget,
      estimator: tokens,
      o200k: countTokens(r.text),
      shown: bullets.length,
    });
  });
}

suite("real memory (24 context-evaluator sessions) in the real hosts", () => {
  test("Claude Code: the task context the model receives fits 400 tokens, and 120", async () => {
    model.play([{ tool: "ToolSearch", input: { query: "memory", max_results: 5 } }, ...CALLS, { text: "done" }]);
    const run = await runHost(claudeArgs(TASK), { env: claudeEnv(home.env, model), cwd: root });
    expect(run.code, run.stderr).toBe(0);
    check("claude", anthropicResults(model.requests));
  });

  test("Codex: the same calls fit the same budgets", async () => {
    model.play([...CALLS, { text: "done" }]);
    const run = await runHost(codexExecArgs(model, TASK), { env: codexEnv(home.env), cwd: root });
    expect(run.code, run.stderr).toBe(0);
    check("codex", openaiResults(model.requests));
  });
});
