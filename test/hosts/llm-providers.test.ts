/**
 * Distilling with the model the user already has (issue 25): the real Claude Code and Codex CLIs
 * (pinned in test/hosts) as sqrl's `claude_code` and `codex` providers, signed in to a stand-in
 * account the way each CLI's own login leaves it, talking only to the local model stand-in.
 *
 * The user's flow end to end, once per CLI in its own temp home: `sqrl init --yes --hosts …` finds
 * the signed-in CLI and turns it on; a session captured by the daemon is distilled by the engine
 * through the CLI and its items are stored with extractor `llm`; the stand-in's record shows that the
 * run offered no tool, carried no sqrl MCP server and no sqrl hook text, authenticated with the
 * plan's token and never with the API key sitting in sqrl's environment; no transcript of the run was
 * left behind; `sqrl status`, `sqrl doctor` and the overview report provider, model and tokens; a
 * usage-limit answer leaves the next episode waiting, and it is distilled once the stand-in recovers.
 * Then the provider alone: a usage-limit answer is a retryable `rate_limited` failure, a stalled
 * call a `timeout`, an API key reaches the CLI only under `llm.billing = api_key`, and shutdown
 * kills a run in flight. Skips with one line when the host CLIs are not installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ClaudeCodeProvider } from "../../src/engine/llm/claude-code.ts";
import { cliRunsAlive, stopCliRuns } from "../../src/engine/llm/cli-run.ts";
import { CodexProvider } from "../../src/engine/llm/codex.ts";
import { callForJson, LlmCapReachedError } from "../../src/engine/llm/json-call.ts";
import { StateDbLedger } from "../../src/engine/llm/usage.ts";
import { openDatabase } from "../../src/sql/open.ts";
import { LlmCallError, type LlmProvider } from "../../src/engine/llm/types.ts";
import {
  EXTRACTION_JSON_SCHEMA,
  ExtractionOutput,
  SYSTEM_PROMPT,
} from "../../src/engine/learn/extract/llm-extractor.ts";
import {
  appendLines,
  claudeTurns,
  daemonFetch,
  makeHome,
  queryProject,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
} from "../daemon/harness.ts";
import { runSqrl } from "../helpers/sqrl.ts";
import {
  CLAUDE_BIN,
  CLAUDE_OAUTH_TOKEN,
  CODEX_BIN,
  filesUnder,
  HOST_BIN_DIR,
  HOSTS_INSTALLED,
  SKIP_REASON,
  signInClaude,
  signInCodex,
  STAND_IN_EMAIL,
} from "./harness.ts";
import { rateLimited, startModelServer, type ModelServer, type RecordedRequest, type Reply } from "./model-server.ts";

if (!HOSTS_INSTALLED) console.log(`test/hosts/llm-providers: skipped: ${SKIP_REASON}`);
// A CLI run is 1-3 s alone; the daemon's first batch, the engine and the run several times that on a loaded machine.
setDefaultTimeout(120_000);
const suite = HOSTS_INSTALLED ? describe : describe.skip;

/** Keys in sqrl's environment that must never reach the CLI under the default billing. */
const ANTHROPIC_KEY = "sk-ant-api03-MUST-NOT-BE-USED";
const OPENAI_KEY = "sk-proj-MUST-NOT-BE-USED";
/** Text of the SessionStart hook sqrl installs for Claude Code (`sqrl init --hosts claude`). */
const HOOK_TEXT = "sqrl memory for this repo";

let model: ModelServer;

/** The stand-in's answer to sqrl's extraction prompt: one item proved by the episode's first event. */
const EXTRACTION = JSON.stringify({
  summary:
    "The user asked to run the module tests and fix failures; the assistant ran bun test for the module and all three tests passed.",
  items: [
    {
      type: "recipe",
      key: "recipe:test_module",
      content:
        "Run one module's tests with `bun test test/<module>.test.ts`; all three pass when the module is healthy.",
      tags: ["testing"],
      importance: 0.7,
      confidence: 0.9,
      scope: "project",
      file_paths: [],
      evidence: [1, 2, 3],
    },
  ],
});

function isDistilling(r: RecordedRequest): boolean {
  return JSON.stringify(r.body).includes("You extract long-term engineering memory");
}

function standInAnswers(r: RecordedRequest): Reply | undefined {
  const body = JSON.stringify(r.body);
  if (body.includes("You extract long-term engineering memory"))
    return { text: EXTRACTION, inputTokens: 2100, outputTokens: 180 };
  if (body.includes("Summarize one episode"))
    return {
      text: JSON.stringify({ summary: "Ran one module's tests with bun test; all three passed after the fix." }),
      inputTokens: 900,
      outputTokens: 60,
    };
  return undefined;
}

/** Tools a request put in front of the model: Anthropic's `tools`, OpenAI's `tools` and `additional_tools` items. */
function toolsOffered(r: RecordedRequest): unknown[] {
  const own = Array.isArray(r.body.tools) ? (r.body.tools as unknown[]) : [];
  const input = Array.isArray(r.body.input) ? (r.body.input as Array<Record<string, unknown>>) : [];
  return [...own, ...input.filter((i) => i.type === "additional_tools")];
}

/** Every check on the requests of a distilling run: no tool, no sqrl server or hook, the plan's token only. */
function checkRuns(runs: RecordedRequest[], forbiddenKey: string): void {
  expect(runs.length).toBeGreaterThan(0);
  for (const r of runs) {
    expect(toolsOffered(r)).toEqual([]);
    const all = JSON.stringify(r);
    expect(all).not.toContain("mcp__sqrl");
    expect(all).not.toContain(HOOK_TEXT);
    expect(all).not.toContain(forbiddenKey);
    expect(r.headers["x-api-key"]).toBeUndefined();
    expect(r.headers.authorization).toStartWith("Bearer ");
  }
}

interface Flow {
  home: DaemonHome;
  repo: string;
  env: Record<string, string>;
}

/** A temp home with the CLIs on PATH, both API keys in the environment, capture of Claude transcripts on. */
function flowHome(extraConfig: string): Flow {
  const home = makeHome(
    `[watch]\nclaude = true\ncodex = false\ngemini = false\ngit = false\n[daemon]\nbatch_interval_seconds = 1\n${extraConfig}`,
  );
  const repo = join(home.root, "repo");
  mkdirSync(repo, { recursive: true });
  Bun.spawnSync(["git", "init", "-q", repo]);
  const env = {
    ...home.env,
    PATH: `${HOST_BIN_DIR}:${home.env.PATH}`,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    OPENAI_API_KEY: OPENAI_KEY,
    ANTHROPIC_BASE_URL: model.url,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  return { home: { ...home, env, sqrl: (args) => runSqrl(args, { env }) }, repo, env };
}

/** A finished two-turn session two hours ago in `repo`, as Claude Code writes it: the daemon picks it up. */
function writeSession(f: Flow, sessionId: string): void {
  const turns = claudeTurns({ cwd: f.repo, sessionId, turns: 2, startMs: Date.now() - 2 * 3_600_000 });
  appendLines(transcriptPath(f.home, f.repo, sessionId), turns.lines);
}

async function llmItems(repo: string): Promise<Array<{ id: string; content: string }>> {
  return waitFor(
    "a memory item distilled by the LLM",
    () => {
      const rows = queryProject<{ id: string; content: string }>(
        repo,
        "SELECT m.id, m.content FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id WHERE mm.extractor = 'llm' AND m.deleted = 0",
      );
      return rows.length > 0 ? rows : undefined;
    },
    90_000,
  );
}

beforeAll(() => {
  if (!HOSTS_INSTALLED) return;
  model = startModelServer();
  model.answer(standInAnswers);
});

afterAll(() => {
  if (!HOSTS_INSTALLED) return;
  model.stop();
});

suite("claude_code: sqrl init --yes turns a signed-in Claude Code on, and the daemon distils through it", () => {
  let f: Flow;
  let runs: RecordedRequest[] = [];
  beforeAll(() => {
    if (!HOSTS_INSTALLED) return;
    f = flowHome("[llm]\nwait_retry_seconds = 1\n");
    signInClaude(f.home.claudeDir);
  });
  afterAll(async () => {
    if (HOSTS_INSTALLED) await f.home.cleanup();
  });

  test("init --yes --hosts claude: one line says what goes where at what cost, then llm.provider = claude_code", () => {
    const init = runSqrl(["init", f.repo, "--yes", "--hosts", "claude"], { env: f.env });
    expect(init.code, init.stderr).toBe(0);
    const line = init.stdout.split("\n").find((l) => l.startsWith("LLM:"));
    expect(line).toContain("redacted episodes");
    expect(line).toContain("Claude Code (claude-haiku-4-5)");
    expect(line).toContain(`Claude Max, ${STAND_IN_EMAIL}`);
    expect(line).toContain("tokens per session from your plan's usage, no API charge");
    expect(line).toContain("Turned on: llm.provider = claude_code");
    const config = readFileSync(join(f.home.sqrlHome, "config.toml"), "utf8");
    expect(config).toContain('provider = "claude_code"');
    expect(config).toContain(`cli_path = "${CLAUDE_BIN}"`);
    // sqrl's own MCP server and SessionStart hook are registered in this Claude Code: the run must skip both.
    expect(readFileSync(join(f.home.claudeDir, "settings.json"), "utf8")).toContain("hook claude-session-start");
  });

  test("the next session is distilled through `claude -p`: items stored with extractor llm", async () => {
    model.play([]);
    writeSession(f, "11111111-2222-4333-8444-555555555555");
    const before = filesUnder(join(f.home.claudeDir, "projects"));
    startDaemon(f.home);
    const items = await llmItems(f.repo);
    expect(items[0]!.content).toContain("bun test test/<module>.test.ts");
    const episodes = queryProject<{ extractor: string }>(
      f.repo,
      "SELECT extractor FROM episode_state WHERE extracted_at IS NOT NULL",
    );
    expect(episodes.map((e) => e.extractor)).toContain("llm");
    runs = model.requests.filter(isDistilling);
    // The only transcript under Claude Code's projects folder is still the session sqrl captured.
    expect(before).toHaveLength(1);
    expect(filesUnder(join(f.home.claudeDir, "projects"))).toEqual(before);
    expect(readdirSync(join(f.home.sqrlHome, "llm-runs"))).toEqual([]);
  });

  test("the stand-in saw no tool, no sqrl MCP server, no sqrl hook, and the plan's token, never the API key", () => {
    checkRuns(runs, ANTHROPIC_KEY);
    for (const r of runs) expect(r.headers.authorization).toBe(`Bearer ${CLAUDE_OAUTH_TOKEN}`);
    // sqrl's own system prompt, not Claude Code's agent prompt.
    expect(JSON.stringify(runs[0]!.body.system)).toContain(SYSTEM_PROMPT.slice(0, 60));
  });

  test("sqrl status, doctor and the overview show provider, model, tokens today and tokens per session", async () => {
    const status = runSqrl(["status", f.repo], { env: f.env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /LLM {7}claude_code \(claude-haiku-4-5\), \d+ of 200000 tokens today, ~\d+ tokens per session \(1 sessions, last 7 days\)/,
    );
    expect(status.stdout).toContain(
      `Claude Code signed in (Claude Max, ${STAND_IN_EMAIL}), billed to the plan's usage`,
    );
    const json = JSON.parse(runSqrl(["status", f.repo, "--json"], { env: f.env }).stdout) as {
      llm: { provider: string; tokens_today: number; tokens_per_session: number; account: { billing: string } };
    };
    expect(json.llm).toMatchObject({ provider: "claude_code", account: { billing: "subscription" } });
    // What the stand-in reported (2100 + 180 per extraction, 900 + 60 per summary) is what counts.
    expect(json.llm.tokens_today).toBeGreaterThanOrEqual(2280);
    expect(json.llm.tokens_per_session).toBe(json.llm.tokens_today);
    const doctor = runSqrl(["doctor", f.repo], { env: f.env });
    expect(doctor.stdout).toMatch(/LLM {6}claude_code \(claude-haiku-4-5\), \d+ of 200000 tokens today/);
    const res = await daemonFetch(f.home, `/overview?project_id=${encodeURIComponent(f.repo)}`);
    const overview = (await res.json()) as { llm: Record<string, unknown> };
    expect(overview.llm).toMatchObject({
      provider: "claude_code",
      model: "claude-haiku-4-5",
      billing: "subscription",
      tokens_today: json.llm.tokens_today,
      sessions: 1,
    });
  });
});

suite("claude_code: a usage-limited Claude Code leaves the episode waiting; it is distilled once the limit lifts", () => {
  let f: Flow;
  beforeAll(() => {
    if (!HOSTS_INSTALLED) return;
    f = flowHome("[llm]\nwait_retry_seconds = 1\n");
    signInClaude(f.home.claudeDir);
  });
  afterAll(async () => {
    if (!HOSTS_INSTALLED) return;
    model.answer(standInAnswers);
    await f.home.cleanup();
  });

  test("rate-limited: the episode waits (not the offline rules); recovered: distilled by the model, once", async () => {
    expect(runSqrl(["init", f.repo, "--yes", "--no-backfill"], { env: f.env }).code).toBe(0);
    let limited = true;
    let refused = 0;
    model.answer((r) => {
      if (limited && isDistilling(r)) {
        refused++;
        return rateLimited(r.api);
      }
      return standInAnswers(r);
    });
    writeSession(f, "33333333-4444-4555-8666-777777777777");
    startDaemon(f.home);
    const wait = await waitFor(
      "the episode waiting for the model",
      () => queryProject<{ reason: string; attempts: number }>(f.repo, "SELECT reason, attempts FROM llm_waits")[0],
      90_000,
    );
    expect(wait.reason).toBe("rate_limited");
    // Waiting, not extracted offline: no memory yet, the episode not marked extracted.
    expect(queryProject(f.repo, "SELECT 1 FROM episode_state WHERE extracted_at IS NOT NULL")).toEqual([]);
    expect(runSqrl(["status", f.repo], { env: f.env }).stdout).toMatch(/1 episode waits for it \(1 rate-limited/);
    limited = false;
    const items = await llmItems(f.repo);
    expect(items).toHaveLength(1);
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(queryProject(f.repo, "SELECT 1 FROM llm_waits")).toEqual([]);
    const done = queryProject<{ extractor: string }>(
      f.repo,
      "SELECT extractor FROM episode_state WHERE extracted_at IS NOT NULL",
    );
    expect(done.map((e) => e.extractor)).toEqual(["llm"]);
  });
});

suite("codex: sqrl init --yes turns a signed-in Codex on, and the daemon distils through it", () => {
  let f: Flow;
  let token = "";
  let runs: RecordedRequest[] = [];
  beforeAll(() => {
    if (!HOSTS_INSTALLED) return;
    // Codex signed in with ChatGPT; Claude Code not signed in (so auto picks Codex). The stand-in is the model API.
    f = flowHome(`[llm]\nbase_url = "${model.url}/v1"\n`);
    token = signInCodex(join(f.home.root, "codex"));
  });
  afterAll(async () => {
    if (HOSTS_INSTALLED) await f.home.cleanup();
  });

  test("init --yes --hosts codex: Claude Code is not signed in, Codex is: llm.provider = codex with its fast model", () => {
    const init = runSqrl(["init", f.repo, "--yes", "--hosts", "codex"], { env: f.env });
    expect(init.code, init.stderr).toBe(0);
    const line = init.stdout.split("\n").find((l) => l.startsWith("LLM:"));
    expect(line).toContain("Codex (gpt-6-luna)");
    expect(line).toContain("ChatGPT");
    expect(line).toContain("Turned on: llm.provider = codex");
    const config = readFileSync(join(f.home.sqrlHome, "config.toml"), "utf8");
    expect(config).toContain('provider = "codex"');
    expect(config).toContain('model = "gpt-6-luna"');
    // sqrl is registered in Codex's config.toml: the distilling run must not load it.
    expect(readFileSync(join(f.home.root, "codex", "config.toml"), "utf8")).toContain("[mcp_servers.sqrl]");
  });

  test("the next session is distilled through `codex exec`: items stored with extractor llm, no session file left", async () => {
    model.play([]);
    writeSession(f, "22222222-3333-4444-8555-666666666666");
    startDaemon(f.home);
    await llmItems(f.repo);
    runs = model.requests.filter(isDistilling);
    expect(existsSync(join(f.home.root, "codex", "sessions"))).toBe(false);
    expect(readdirSync(join(f.home.sqrlHome, "llm-runs"))).toEqual([]);
  });

  test("the stand-in saw no tool, no sqrl MCP server, the answer schema, and the ChatGPT token, never the API key", () => {
    checkRuns(runs, OPENAI_KEY);
    for (const r of runs) expect(r.headers.authorization).toBe(`Bearer ${token}`);
    const format = (runs[0]!.body.text as { format?: { type: string; schema: unknown } }).format;
    expect(format).toMatchObject({ type: "json_schema", schema: EXTRACTION_JSON_SCHEMA });
  });

  test("sqrl status names Codex, its model and the ChatGPT sign-in", () => {
    const status = runSqrl(["status", f.repo], { env: f.env });
    expect(status.stdout).toMatch(/LLM {7}codex \(gpt-6-luna\), \d+ of 200000 tokens today, ~\d+ tokens per session/);
    expect(status.stdout).toContain("Codex signed in (ChatGPT), billed to the plan's usage");
  });
});

suite("the providers alone, against the stand-in", () => {
  let home: DaemonHome;
  const prev = process.env.SQRL_HOME;
  beforeAll(() => {
    if (!HOSTS_INSTALLED) return;
    home = makeHome("");
    process.env.SQRL_HOME = home.sqrlHome; // the providers' private run folders live under it
    signInClaude(home.claudeDir);
    signInCodex(join(home.root, "codex"));
  });
  afterAll(async () => {
    if (!HOSTS_INSTALLED) return;
    model.answer(standInAnswers);
    if (prev === undefined) delete process.env.SQRL_HOME;
    else process.env.SQRL_HOME = prev;
    await home.cleanup();
  });

  function provider(
    kind: "claude_code" | "codex",
    over: { billing?: "subscription" | "api_key"; timeoutMs?: number } = {},
  ): LlmProvider {
    const env = { ...home.env, ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY };
    const opts = {
      model: kind === "claude_code" ? "claude-haiku-4-5" : "gpt-6-luna",
      timeoutMs: over.timeoutMs ?? 60_000,
      billing: over.billing ?? "subscription",
      env,
    };
    return kind === "claude_code"
      ? new ClaudeCodeProvider({ ...opts, bin: CLAUDE_BIN, baseURL: model.url })
      : new CodexProvider({ ...opts, bin: CODEX_BIN, baseURL: `${model.url}/v1` });
  }

  const req = { system: SYSTEM_PROMPT, prompt: "Episode ep_1 (1 events):\n[1] user: always use pnpm", maxTokens: 100 };

  async function failure(p: LlmProvider): Promise<LlmCallError> {
    try {
      await p.complete(req);
    } catch (err) {
      expect(err).toBeInstanceOf(LlmCallError);
      return err as LlmCallError;
    }
    throw new Error("the call did not fail");
  }

  for (const kind of ["claude_code", "codex"] as const) {
    test(`${kind}: a usage-limit answer is a retryable rate_limited LlmCallError`, async () => {
      model.answer((r) => rateLimited(r.api));
      const err = await failure(provider(kind));
      expect(err.kind).toBe("rate_limited");
      expect(err.retryable).toBe(true);
      // The stand-in recovers: the same provider answers again.
      model.answer(standInAnswers);
      const ok = await provider(kind).complete({ ...req, jsonSchema: EXTRACTION_JSON_SCHEMA });
      expect(JSON.parse(ok.text)).toMatchObject({ items: [{ key: "recipe:test_module" }] });
      expect(ok.inputTokens).toBe(2100);
      expect(ok.outputTokens).toBe(180);
    });

    test(`${kind}: a call the model never answers is a retryable timeout, and the run is killed`, async () => {
      model.answer(() => ({ text: "{}", delayMs: 30_000 }));
      const started = Date.now();
      const err = await failure(provider(kind, { timeoutMs: 4000 }));
      expect(err.kind).toBe("timeout");
      expect(err.retryable).toBe(true);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(cliRunsAlive()).toBe(0);
      model.answer(standInAnswers);
    });
  }

  test("the daily token cap counts what the CLI reports, and holds", async () => {
    model.answer(standInAnswers);
    const ledger = new StateDbLedger(3000, Date.now, () => openDatabase(join(home.root, "cap-state.db"), "state"));
    const p = provider("claude_code");
    const out = await callForJson(p, ledger, { ...req, jsonSchema: EXTRACTION_JSON_SCHEMA }, ExtractionOutput);
    expect(out.items).toHaveLength(1);
    expect(ledger.remaining()).toBe(3000 - 2100 - 180); // the stand-in's reported usage, not an estimate
    const before = model.requests.length;
    await expect(callForJson(p, ledger, req, ExtractionOutput)).rejects.toBeInstanceOf(LlmCapReachedError);
    expect(model.requests.length).toBe(before); // refused before the CLI ran
  });

  test("an API key reaches the CLI only when the user says so (llm.billing = api_key)", async () => {
    model.play([]);
    await provider("claude_code").complete(req);
    expect(model.requests.at(-1)!.headers["x-api-key"]).toBeUndefined();
    await provider("claude_code", { billing: "api_key" }).complete(req);
    expect(model.requests.at(-1)!.headers["x-api-key"]).toBe(ANTHROPIC_KEY);
  });

  test("Claude Code signed out: a retryable signed_out LlmCallError, and no request made", async () => {
    const out = makeHome("");
    try {
      model.play([]);
      const p = new ClaudeCodeProvider({
        bin: CLAUDE_BIN,
        model: "claude-haiku-4-5",
        timeoutMs: 60_000,
        billing: "subscription",
        env: { ...out.env, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
        baseURL: model.url,
      });
      const err = await failure(p);
      expect(err.kind).toBe("signed_out");
      expect(err.retryable).toBe(true);
      expect(model.requests).toEqual([]);
    } finally {
      await out.cleanup();
    }
  });

  test("a CLI that is not installed is a retryable unavailable LlmCallError", async () => {
    const p = new CodexProvider({
      bin: join(home.root, "no-such-codex"),
      model: "gpt-6-luna",
      timeoutMs: 60_000,
      billing: "subscription",
      env: home.env,
    });
    const err = await failure(p);
    expect(err.kind).toBe("unavailable");
    expect(err.retryable).toBe(true);
  });

  test("shutdown kills a run in flight (last: the process refuses new runs after it)", async () => {
    model.answer(() => ({ text: "{}", delayMs: 60_000 }));
    const call = provider("claude_code")
      .complete(req)
      .catch((err: unknown) => err);
    await waitFor("a CLI run in flight", () => (cliRunsAlive() > 0 ? true : undefined), 20_000);
    const started = Date.now();
    stopCliRuns();
    const err = (await call) as LlmCallError;
    expect(err).toBeInstanceOf(LlmCallError);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(cliRunsAlive()).toBe(0);
  });
});
