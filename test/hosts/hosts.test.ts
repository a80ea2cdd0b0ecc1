/**
 * sqrl in the real hosts: Claude Code and Codex from npm (pinned in test/hosts/package.json), run
 * headless against the local model stand-in, with sqrl registered the way a user does it
 * (`sqrl init --yes --hosts=claude,codex`). Every assertion is on what the host put in front of the
 * model, read from the recorded API requests: the SessionStart context, each tool result and each
 * error, byte for byte against what `sqrl mcp` answers an SDK client; each within its budget (the
 * forwarded text counted, the footer's figure true), each memory once, no path of this machine.
 * Skips with one line when the host CLIs are not installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { SERVER_INSTRUCTIONS } from "../../src/mcp/server.ts";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { estimateTokens } from "../../src/shared/tokens.ts";
import { makeHome, type DaemonHome } from "../daemon/harness.ts";
import { REPO_ROOT, runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";
import { SEED_EPISODE_ID, SEED_MEMORIES, seedProject } from "../mcp/fixtures.ts";
import {
  anthropicResults,
  anthropicSystem,
  claudeArgs,
  claudeEnv,
  codexEnv,
  codexExecArgs,
  HOSTS_INSTALLED,
  offeredTools,
  openaiResults,
  runHost,
  SKIP_REASON,
  CLAUDE_BIN,
  CODEX_BIN,
  type ForwardedResult,
} from "./harness.ts";
import { startModelServer, type ModelServer, type Step } from "./model-server.ts";

if (!HOSTS_INSTALLED) console.log(`test/hosts: skipped: ${SKIP_REASON}`);
// A host run is 1-3 s alone; on a loaded 2-core machine several times that.
setDefaultTimeout(60_000);
const suite = HOSTS_INSTALLED ? describe : describe.skip;

/** Default budgets (config defaults) per tool: what the forwarded text must fit. */
const BUDGET: Record<string, number> = {
  get_task_context: 400,
  get_user_style_view: 256,
  get_project_brief_view: 256,
  get_pitfalls_view: 256,
  search_project_memory: 600,
  get_memory_timeline: 600,
  recall_episode: 600,
};

/** One session's calls: every tool, then two errors (an unknown episode, a missing argument). */
const CALLS: Array<[string, Record<string, unknown>]> = [
  ["get_user_style_view", {}],
  ["get_project_brief_view", {}],
  [
    "get_task_context",
    { task_description: "Add a delete endpoint for inventory items", active_file_paths: ["src/routes/inventory.ts"] },
  ],
  ["get_pitfalls_view", { scope_paths: ["src/auth/jwt.ts"], task_description: "Refactor the JWT auth flow" }],
  ["search_project_memory", { query: "JWT login tests clock skew" }],
  ["get_memory_timeline", {}],
  ["recall_episode", { episode_id: SEED_EPISODE_ID }],
  ["recall_episode", { episode_id: "ep_does_not_exist" }],
  ["get_task_context", {}],
];

/** Natural queries a model types into Claude Code's ToolSearch, and the sqrl tools that answer them. */
const FINDABLE: Array<[string, string[]]> = [
  ["memory", ["get_task_context", "search_project_memory"]],
  ["conventions", ["get_user_style_view"]],
  ["how do we run the tests", ["get_project_brief_view", "search_project_memory", "get_task_context"]],
  ["pitfalls", ["get_pitfalls_view"]],
  ["what did we decide", ["search_project_memory", "get_task_context", "get_project_brief_view"]],
  ["past sessions", ["get_memory_timeline", "recall_episode"]],
  ["what changed last week", ["get_memory_timeline"]],
];

const PROMPT = "Add a delete endpoint for inventory items";

let home: DaemonHome;
let repo: string;
let model: ModelServer;
/** What `sqrl mcp` answers an SDK client for CALLS, in one session: the text a host should forward. */
let expected: Array<{ text: string; isError: boolean }>;
const measured: Array<{ host: string; tool: string; budget: number; estimator: number; o200k: number }> = [];

function forwardedOfSdk(res: Awaited<ReturnType<Client["callTool"]>>): { text: string; isError: boolean } {
  if (res.isError)
    return { text: (res.content as Array<{ text: string }>).map((c) => c.text).join("\n"), isError: true };
  return { text: JSON.stringify(res.structuredContent), isError: false };
}

/** Files a `git add -A` would take (untracked, not ignored) plus tracked ones, with their text. */
function filesForGit(root: string): Array<{ path: string; text: string }> {
  const res = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root });
  return res.stdout
    .toString()
    .split("\0")
    .filter(Boolean)
    .map((p) => ({ path: p, text: readFileSync(join(root, p), "utf8") }));
}

function sqrlTool(name: string): string {
  return `mcp__sqrl__${name}`;
}

/** Assertions shared by both hosts on every forwarded result. */
function checkForwarded(host: string, results: ForwardedResult[]): void {
  const sqrl = results.filter((r) => r.tool.startsWith("mcp__sqrl__"));
  expect(sqrl.map((r) => r.tool)).toEqual(CALLS.map(([name]) => sqrlTool(name)));
  sqrl.forEach((r, i) => {
    const [name] = CALLS[i]!;
    const want = expected[i]!;
    // Byte for byte: the host hands the model exactly sqrl's structured JSON (or its error text).
    // Errors: sqrl's text first (Claude Code appends its own hint about loading the schema after it).
    if (want.isError) expect(r.text.startsWith(want.text), `${host} ${name}: ${r.text}`).toBe(true);
    if (want.isError && host === "claude") expect(r.isError).toBe(true);
    else expect(r.text, `${host} ${name}`).toBe(want.text);
    // No path of this machine: not the temp home, not the checkout the binary came from.
    expect(r.text).not.toContain(home.root);
    expect(r.text).not.toContain(REPO_ROOT);
    if (want.isError) return;
    const answer = ToolAnswer.parse(JSON.parse(r.text));
    const tokens = estimateTokens(r.text);
    const budget = BUDGET[name]!;
    expect(tokens, `${host} ${name}`).toBeLessThanOrEqual(budget);
    expect(countTokens(r.text), `${host} ${name}: o200k`).toBeLessThanOrEqual(budget);
    const footer = [...answer.markdown.matchAll(/Budget: ~(\d+)\/(\d+) tokens/g)].at(-1);
    expect(footer, `${host} ${name}: footer`).toBeDefined();
    expect([Number(footer![1]), Number(footer![2])]).toEqual([tokens, budget]);
    // Each memory once: the start of every seed memory's text occurs at most once.
    for (const m of SEED_MEMORIES) {
      const snippet = JSON.stringify(m.content.slice(0, 28)).slice(1, -1);
      expect(r.text.split(snippet).length - 1, `${host} ${name}: ${m.key}`).toBeLessThanOrEqual(1);
    }
    if (!measured.some((x) => x.host === host && x.tool === name))
      measured.push({ host, tool: name, budget, estimator: tokens, o200k: countTokens(r.text) });
  });
}

beforeAll(async () => {
  if (!HOSTS_INSTALLED) return;
  // Capture off: the hosts' own sessions would otherwise become memory mid-suite and change the answers.
  home = makeHome("[watch]\nclaude = false\ncodex = false\ngemini = false\ngit = false\n");
  repo = join(home.root, "repo");
  mkdirSync(repo, { recursive: true });
  Bun.spawnSync(["git", "init", "-q", repo]);
  model = startModelServer();
  // The user's flow: init with both hosts, the real `claude` CLI on PATH doing Claude's registration.
  const init = runSqrl(["init", repo, "--yes", "--hosts=claude,codex"], { env: claudeEnv(home.env, model) });
  expect(init.code, init.stderr).toBe(0);
  seedProject(repo);
  // Expected answers: the same calls, one session, SDK client over stdio.
  const client = new Client({ name: "hosts-expected", version: "1" });
  await client.connect(
    new StdioClientTransport({ command: SQRL_BIN, args: ["mcp"], env: home.env, cwd: repo, stderr: "pipe" }),
  );
  expected = [];
  for (const [name, args] of CALLS) expected.push(forwardedOfSdk(await client.callTool({ name, arguments: args })));
  await client.close();
});

afterAll(async () => {
  if (!HOSTS_INSTALLED) return;
  model.stop();
  if (process.env.SQRL_HOSTS_REPORT)
    writeFileSync(process.env.SQRL_HOSTS_REPORT, `${JSON.stringify(measured, null, 2)}\n`);
  await home.cleanup();
});

suite("registration with the real CLIs", () => {
  test("right after `sqrl init --hosts=claude,codex`: Connected in Claude Code, enabled in Codex, ready in sqrl status", async () => {
    const claude = await runHost([CLAUDE_BIN, "mcp", "list"], { env: claudeEnv(home.env, model), cwd: repo });
    expect(claude.stdout).toMatch(/^sqrl: .+ - ✔ Connected$/m);
    const codex = await runHost([CODEX_BIN, "mcp", "list"], { env: codexEnv(home.env), cwd: repo });
    expect(codex.stdout).toMatch(/^sqrl\s+\S+\s+mcp\s.*\benabled\b/m);
    const status = runSqrl(["status", repo], { env: home.env });
    expect(status.stdout).toContain("Hosts     claude (user) ready");
    expect(status.stdout).toContain("codex (user) ready");
    expect(status.stdout).not.toContain("waits for approval");
  });

  test("the repo's files meant for git hold no path of this machine", () => {
    const files = filesForGit(repo);
    expect(files.map((f) => f.path)).toEqual([".gitignore"]);
    for (const f of files) expect(f.text).not.toContain(home.root);
  });
});

suite("Claude Code (claude -p) with sqrl", () => {
  test("SessionStart: the hook's context reaches the system prompt byte for byte, within its budget", async () => {
    model.play([{ text: "done" }]);
    const run = await runHost(claudeArgs(PROMPT), { env: claudeEnv(home.env, model), cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const hook = runSqrl(["hook", "claude-session-start"], {
      env: home.env,
      cwd: repo,
      input: JSON.stringify({ cwd: repo, hook_event_name: "SessionStart", source: "startup" }),
    });
    const context = (JSON.parse(hook.stdout) as { hookSpecificOutput: { additionalContext: string } })
      .hookSpecificOutput.additionalContext;
    expect(context).toContain("sqrl memory for this repo");
    expect(anthropicSystem(model.requests)).toContain(`SessionStart hook additional context: ${context}`);
    expect(estimateTokens(context)).toBeLessThanOrEqual(300);
    expect(context).not.toContain(home.root);
  });

  test("every tool and every error, as the model receives them: exact, within budget, each memory once, no local path", async () => {
    const steps: Step[] = [
      { tool: "ToolSearch", input: { query: "memory", max_results: 5 } },
      ...CALLS.map(([name, input]) => ({ tool: sqrlTool(name), input })),
      { text: "done" },
    ];
    model.play(steps);
    const run = await runHost(claudeArgs(PROMPT), { env: claudeEnv(home.env, model), cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const results = anthropicResults(model.requests);
    expect(results[0]!.tool).toBe("ToolSearch");
    checkForwarded("claude", results);
  });

  test("ToolSearch finds the right sqrl tool in its top 5 for natural queries", async () => {
    model.play([
      ...FINDABLE.map(([query]) => ({ tool: "ToolSearch", input: { query, max_results: 5 } })),
      { text: "done" },
    ]);
    const run = await runHost(claudeArgs(PROMPT), { env: claudeEnv(home.env, model), cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const results = anthropicResults(model.requests).filter((r) => r.tool === "ToolSearch");
    expect(results).toHaveLength(FINDABLE.length);
    const misses: string[] = [];
    results.forEach((r, i) => {
      const [query, want] = FINDABLE[i]!;
      const top = r.references.slice(0, 5);
      if (!want.some((t) => top.includes(sqrlTool(t)))) misses.push(`"${query}" → ${top.join(", ") || "nothing"}`);
    });
    expect(misses).toEqual([]);
  });
});

suite("Codex (codex exec) with sqrl", () => {
  test("the seven tools under mcp__sqrl with the server's instructions", async () => {
    model.play([{ text: "done" }]);
    const run = await runHost(codexExecArgs(model, PROMPT), { env: codexEnv(home.env), cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const ns = offeredTools(model.requests, "openai").find((t) => t.name === "mcp__sqrl") as
      | { description: string; tools: Array<{ name: string }> }
      | undefined;
    expect(ns?.description).toBe(SERVER_INSTRUCTIONS);
    expect(ns!.tools.map((t) => t.name).sort()).toEqual(Object.keys(BUDGET).sort());
  });

  test("every tool and every error, as the model receives them: exact, within budget, each memory once, no local path", async () => {
    model.play([...CALLS.map(([name, input]) => ({ tool: sqrlTool(name), input })), { text: "done" }]);
    const run = await runHost(codexExecArgs(model, PROMPT), { env: codexEnv(home.env), cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    checkForwarded("codex", openaiResults(model.requests));
  });
});

suite("project scope: shared files, portable, and the approval they wait for", () => {
  test("`sqrl hosts add claude --scope project` twice: portable files, the hook kept, status and claude agree it waits for approval", async () => {
    const env = claudeEnv(home.env, model);
    // Only the project's entry, so that Claude Code's answer is about it (a user entry would win).
    expect(runSqrl(["hosts", "remove", "claude", "--scope", "user", "--path", repo], { env }).code).toBe(0);
    const first = runSqrl(["hosts", "add", "claude", "--scope", "project", "--yes", "--path", repo], { env });
    expect(first.code, first.stderr).toBe(0);
    const second = runSqrl(["hosts", "add", "claude", "--scope", "project", "--path", repo], { env });
    expect(second.stdout).not.toContain("not installed");
    expect(second.stdout).toContain("SessionStart hook already in");
    const list = runSqrl(["hosts", "list", "claude", "--path", repo], { env });
    expect(list.stdout).toMatch(/hook:project SessionStart: sqrl hook claude-session-start/);
    const files = filesForGit(repo);
    expect(files.map((f) => f.path).sort()).toEqual([".claude/settings.json", ".gitignore", ".mcp.json"]);
    for (const f of files) expect(f.text, f.path).not.toContain(home.root);
    expect(JSON.parse(files.find((f) => f.path === ".mcp.json")!.text).mcpServers.sqrl).toMatchObject({
      command: "sqrl",
      args: ["mcp"],
    });
    const claude = await runHost([CLAUDE_BIN, "mcp", "list"], { env, cwd: repo });
    expect(claude.stdout).toMatch(/Pending approval/);
    expect(runSqrl(["status", repo], { env }).stdout).toContain("claude (project) waits for approval");
    const removed = runSqrl(["hosts", "remove", "claude", "--scope", "project", "--path", repo], { env });
    expect(removed.code).toBe(0);
    expect(filesForGit(repo).map((f) => f.path)).toEqual([".gitignore"]);
    // Back to the user's registration: Connected again, with no approval.
    expect(runSqrl(["hosts", "add", "claude", "--yes", "--path", repo], { env }).code).toBe(0);
    expect((await runHost([CLAUDE_BIN, "mcp", "list"], { env, cwd: repo })).stdout).toMatch(
      /^sqrl: .+ - ✔ Connected$/m,
    );
  });

  test("every host in project scope writes nothing machine-specific into the repo", () => {
    const env = { ...home.env, SQRL_CLAUDE_BIN: "" };
    const add = runSqrl(["hosts", "add", "all", "--scope", "project", "--yes", "--path", repo], { env });
    expect(add.code, add.stderr).toBe(0);
    for (const f of filesForGit(repo)) expect(f.text, f.path).not.toContain(home.root);
    runSqrl(["hosts", "remove", "all", "--scope", "project", "--path", repo], { env });
    expect(filesForGit(repo).map((f) => f.path)).toEqual([".gitignore"]);
  });
});
