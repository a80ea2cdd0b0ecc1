/**
 * GitHub Copilot CLI end to end: the pinned `copilot` (test/hosts/package.json) run headless
 * (`copilot -p`) in its offline BYOK mode against the model stand-in (Anthropic Messages) in a temp
 * git repo, with sqrl registered the way a user does it (`sqrl init --hosts=copilot`) and its daemon
 * capturing `session-state/<id>/events.jsonl`. The scripted work (request, read, failing test, edit,
 * green test, commit) must arrive as events, once (also after a daemon restart), and a later session
 * must arrive too; a torn line loses nothing after it. Serving: `copilot mcp list` lists sqrl, and a
 * model turn's budget-filling `get_task_context` answer reaches the model within its budget, the
 * markdown and the JSON Copilot CLI forwards counted together (read from the recorded request; the
 * clientInfo it introduces itself with, from a copy of what it sends sqrl). Skips with one line when
 * Copilot CLI is not installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { forwardingOf } from "../../src/mcp/hosts/forwarding.ts";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { estimateTokens, loadTokenCounter } from "../../src/shared/tokens.ts";
import { type DaemonHome, queryProject, startDaemon, waitFor } from "../daemon/harness.ts";
import { runSqrl } from "../helpers/sqrl.ts";
import { seedProject } from "../mcp/fixtures.ts";
import {
  anthropicResults,
  COPILOT_BIN,
  COPILOT_INSTALLED,
  copilotArgs,
  copilotEnv,
  copilotWorkSteps,
  offeredTools,
  recordedClientInfo,
  recordServerInput,
  runHost,
  WORK_COMMIT,
  WORK_PROMPT,
  type EventRow,
  type HostSetup,
  rowContent,
  setUpHost,
  sourceRows,
  tearDownHost,
} from "./harness.ts";
import type { ModelServer } from "./model-server.ts";

if (!COPILOT_INSTALLED)
  console.log("test/hosts/copilot: skipped: Copilot CLI not installed (npm install --prefix test/hosts --no-save)");
setDefaultTimeout(120_000);
const suite = COPILOT_INSTALLED ? describe : describe.skip;
/**
 * A budget the seeded answer fills: its JSON alone (132 tokens by sqrl's count, both relevant memories)
 * takes most of it, and both parts together (243) are well over it.
 */
const FILLING_BUDGET = 170;

let home: DaemonHome;
let repo: string;
let model: ModelServer;
let env: Record<string, string>;

const rows = () => sourceRows(repo, "copilot_cli");
const content = rowContent;

let setup: HostSetup | undefined;
beforeAll(async () => {
  if (!COPILOT_INSTALLED) return;
  setup = setUpHost({
    host: "copilot",
    watch: "[watch]\nclaude = false\ncodex = false\ngemini = false\nqwen = false\nopencode = false\n",
    env: copilotEnv,
  });
  ({ home, repo, model, env } = setup);
});

afterAll(() => tearDownHost(setup));

suite("Copilot CLI: capture of a real session", () => {
  test("the scripted work arrives as events: request, edit, failing and green runs, commit", async () => {
    model.play(copilotWorkSteps(repo));
    const run = await runHost(copilotArgs(WORK_PROMPT), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    await waitFor("the session's commit as an event", () =>
      rows().some((x) => x.event_type === "command_run" && String(content(x).command).includes("git commit")),
    );
    const all = rows();
    expect(all.some((r) => r.event_type === "user_message" && content(r).text === WORK_PROMPT)).toBe(true);
    const edit = all.find((r) => r.event_type === "code_change");
    expect(String(content(edit!).diff_summary)).toContain("src/add.js");
    const tests = all.filter((r) => r.event_type === "test_run").map(content);
    expect(tests.map((t) => [t.runner, t.exit_code, t.is_error])).toEqual([
      ["npm test", 1, true],
      ["npm test", 0, false],
    ]);
    expect(all.some((r) => r.event_type === "tool_result" && content(r).tool === "view")).toBe(true);
    expect(all.some((r) => r.event_type === "assistant_response")).toBe(true);
    await waitFor("the git commit event", () =>
      queryProject<EventRow>(repo, "SELECT content_json FROM events WHERE event_type = 'git_commit'").some((r) =>
        r.content_json.includes(WORK_COMMIT),
      ),
    );
  });

  test("no duplicates after a daemon restart; a new session written live arrives", async () => {
    const before = rows().length;
    expect(runSqrl(["daemon", "stop", "--timeout", "10"], { env: home.env }).code).toBe(0);
    startDaemon(home);
    model.play([{ text: "Nothing else to do." }]);
    const run = await runHost(copilotArgs("Anything left?"), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    await waitFor("the new session's answer", () =>
      rows().some((r) => r.event_type === "assistant_response" && content(r).text === "Nothing else to do."),
    );
    expect(rows().length).toBe(before + 2);
  });
  test("a half-written line is skipped and loses nothing after it", async () => {
    const dir = join(home.env.COPILOT_HOME!, "session-state");
    const session = readdirSync(dir).find((d) => existsSync(join(dir, d, "events.jsonl")))!;
    const file = join(dir, session, "events.jsonl");
    const good = {
      type: "user.message",
      data: { content: "after a torn line" },
      id: "after-torn",
      timestamp: new Date().toISOString(),
    };
    appendFileSync(file, `{"type":"user.message","data":{"con\n${JSON.stringify(good)}\n`);
    await waitFor("the line after the torn one", () => rows().some((r) => content(r).text === "after a torn line"));
  });
});

suite("Copilot CLI: serving sqrl", () => {
  test("`copilot mcp list` lists sqrl after `sqrl init --hosts=copilot`", async () => {
    const list = await runHost([COPILOT_BIN, "mcp", "list"], { env, cwd: repo });
    expect(list.stdout).toMatch(/^\s+sqrl \(local\)$/m);
  });

  test("a budget-filling get_task_context reaches the model within its budget: the markdown and the JSON together", async () => {
    seedProject(repo);
    model.play([{ text: "probe" }]);
    await runHost(copilotArgs("probe"), { env, cwd: repo });
    const tools = offeredTools(model.requests, "anthropic").map((t) => String(t.name));
    const name = tools.find((t) => t.includes("sqrl") && t.endsWith("get_task_context"));
    expect(name, tools.join(", ")).toBeDefined();
    model.play([
      {
        tool: name!,
        input: {
          task_description: "Add a delete endpoint for inventory items",
          active_file_paths: ["src/routes/inventory.ts"],
          context_budget_tokens: FILLING_BUDGET,
        },
      },
      { text: "done" },
    ]);
    const record = join(home.root, "copilot-mcp-input.jsonl");
    const restore = recordServerInput(join(home.env.COPILOT_HOME!, "mcp-config.json"), record);
    let run: Awaited<ReturnType<typeof runHost>>;
    try {
      run = await runHost(copilotArgs("Add a delete endpoint for inventory items"), { env, cwd: repo });
    } finally {
      restore();
    }
    expect(run.code, run.stderr).toBe(0);
    // What the pinned Copilot CLI says it is (sqrl's host table knows it by this name).
    const client = recordedClientInfo(record);
    expect(client.name).toBe("copilot-cli");
    expect(forwardingOf(client).host).toBe("copilot");
    const result = anthropicResults(model.requests).find((r) => r.tool === name);
    expect(result, JSON.stringify(anthropicResults(model.requests)).slice(0, 1500)).toBeDefined();
    const text = result!.text;
    expect(text).toContain("soft delete");
    // Copilot CLI forwards the text content (the markdown), a blank line, then the structured answer as JSON.
    const json = text.slice(text.lastIndexOf("\n\n{") + 2);
    const answer = ToolAnswer.parse(JSON.parse(json));
    expect(json).toBe(JSON.stringify(answer));
    expect(text).toBe(`${answer.markdown}\n\n${json}`);
    // Both parts together, by the real tokenizer, stay within the budget.
    const o200k = await loadTokenCounter("o200k");
    expect(o200k.name).toBe("o200k");
    const forwarded = o200k.count(text);
    expect(forwarded).toBeLessThanOrEqual(FILLING_BUDGET);
    // The footer reports what Copilot CLI forwards (sqrl's own counter on the whole text).
    const footer = [...answer.markdown.matchAll(/Budget: ~(\d+)\/(\d+) tokens/g)].at(-1);
    expect([Number(footer![1]), Number(footer![2])]).toEqual([estimateTokens(text), FILLING_BUDGET]);
    expect(text).not.toContain(home.root);
    console.log(
      `copilot get_task_context (budget ${FILLING_BUDGET}): ${forwarded} tokens forwarded (o200k; ${estimateTokens(text)} by sqrl's estimator)`,
    );
  });
});
