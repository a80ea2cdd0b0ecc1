/**
 * Qwen Code end to end: the pinned `qwen` (test/hosts/package.json) run headless against the model
 * stand-in in a temp git repo, with sqrl registered the way a user does it (`sqrl init --hosts=qwen`)
 * and its daemon capturing. The scripted work (request, read, failing test, edit, green test, commit)
 * must arrive as events, once (also after a daemon restart); a line appended to the live chat
 * arrives; a half-written line loses nothing after it. Serving: `qwen mcp list` says Connected, and a
 * model turn's budget-filling `get_task_context` answer reaches the model within its budget, the JSON
 * and the markdown Qwen Code forwards counted together (read from the recorded request; the
 * clientInfo it introduces itself with, from a copy of what it sends sqrl). Skips with one line when
 * Qwen Code is not installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { forwardingOf } from "../../src/mcp/hosts/forwarding.ts";
import { estimateTokens, loadTokenCounter } from "../../src/shared/tokens.ts";
import { type DaemonHome, queryProject, startDaemon, waitFor } from "../daemon/harness.ts";
import { runSqrl } from "../helpers/sqrl.ts";
import { seedProject } from "../mcp/fixtures.ts";
import {
  openaiResults,
  QWEN_BIN,
  QWEN_INSTALLED,
  qwenArgs,
  qwenEnv,
  recordedClientInfo,
  recordServerInput,
  runHost,
  WORK_COMMIT,
  WORK_PROMPT,
  workSteps,
  type EventRow,
  type HostSetup,
  rowContent,
  setUpHost,
  sourceRows,
  tearDownHost,
} from "./harness.ts";
import type { ModelServer } from "./model-server.ts";

if (!QWEN_INSTALLED)
  console.log("test/hosts/qwen: skipped: Qwen Code not installed (npm install --prefix test/hosts --no-save)");
setDefaultTimeout(90_000);
const suite = QWEN_INSTALLED ? describe : describe.skip;
/**
 * A budget the seeded answer fills: its JSON alone (132 tokens by sqrl's count, both relevant memories)
 * takes most of it, and both parts together (243) are well over it.
 */
const FILLING_BUDGET = 170;

let home: DaemonHome;
let repo: string;
let model: ModelServer;
let env: Record<string, string>;

const qwenRows = () => sourceRows(repo, "qwen_code");
const content = rowContent;

function chatFile(): string {
  const projects = join(home.env.QWEN_HOME!, "projects");
  for (const dir of readdirSync(projects)) {
    const chats = join(projects, dir, "chats");
    try {
      const f = readdirSync(chats).find((n) => n.endsWith(".jsonl"));
      if (f) return join(chats, f);
    } catch {
      // no chats in this folder
    }
  }
  throw new Error("Qwen Code wrote no chat file");
}

let setup: HostSetup | undefined;
beforeAll(async () => {
  if (!QWEN_INSTALLED) return;
  setup = setUpHost({
    host: "qwen",
    watch: "[watch]\nclaude = false\ncodex = false\ngemini = false\n",
    env: qwenEnv,
    seed: seedProject,
  });
  ({ home, repo, model, env } = setup);
});

afterAll(() => tearDownHost(setup));

suite("Qwen Code: capture of a real session", () => {
  test("the scripted work arrives as events: request, edit, failing and green runs, commit", async () => {
    model.play(
      workSteps(repo, { read: "read_file", shell: "run_shell_command", edit: "edit" }, (command) => ({
        command,
        is_background: false,
      })),
    );
    const run = await runHost(qwenArgs(model, WORK_PROMPT), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    await waitFor("the session's commit as an event", () =>
      qwenRows().some((x) => x.event_type === "command_run" && String(content(x).command).includes("git commit")),
    );
    const rows = qwenRows();
    expect(rows.find((r) => r.event_type === "user_message" && content(r).text === WORK_PROMPT)).toBeDefined();
    const edit = rows.find((r) => r.event_type === "code_change");
    expect(String(content(edit!).diff_summary)).toContain("src/add.js");
    const tests = rows.filter((r) => r.event_type === "test_run").map(content);
    expect(tests.map((t) => [t.runner, t.exit_code, t.is_error])).toEqual([
      ["npm test", 1, true],
      ["npm test", 0, false],
    ]);
    expect(rows.some((r) => r.event_type === "tool_result" && content(r).tool === "read_file")).toBe(true);
    expect(rows.some((r) => r.event_type === "assistant_response")).toBe(true);
    // The commit itself, from git.
    await waitFor("the git commit event", () =>
      queryProject<EventRow>(repo, "SELECT content_json FROM events WHERE event_type = 'git_commit'").some((r) =>
        r.content_json.includes(WORK_COMMIT),
      ),
    );
  });

  test("no duplicates after a daemon restart", async () => {
    const before = qwenRows().length;
    expect(runSqrl(["daemon", "stop", "--timeout", "10"], { env: home.env }).code).toBe(0);
    startDaemon(home);
    // A fresh line after the restart: once it is in, the restart's rescan of the file is done.
    const file = chatFile();
    const last = JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1)!) as Record<string, unknown>;
    const line = {
      ...last,
      uuid: "restart-probe",
      type: "user",
      provenance: "real_user",
      timestamp: new Date().toISOString(),
      message: { role: "user", parts: [{ text: "after the restart" }] },
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    await waitFor("the line appended after the restart", () =>
      qwenRows().some((r) => content(r).text === "after the restart"),
    );
    expect(qwenRows().length).toBe(before + 1);
  });

  test("a half-written line is skipped and loses nothing after it", async () => {
    const file = chatFile();
    const last = JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1)!) as Record<string, unknown>;
    const good = {
      ...last,
      uuid: "after-torn-line",
      timestamp: new Date().toISOString(),
      message: { role: "user", parts: [{ text: "after a torn line" }] },
    };
    appendFileSync(file, `{"uuid":"torn","type":"user","message":{"ro\n${JSON.stringify(good)}\n`);
    await waitFor("the line after the torn one", () => qwenRows().some((r) => content(r).text === "after a torn line"));
  });
});

suite("Qwen Code: serving sqrl", () => {
  test("`qwen mcp list` shows sqrl connected after `sqrl init --hosts=qwen`", async () => {
    const list = await runHost([QWEN_BIN, "mcp", "list"], { env, cwd: repo });
    expect(list.stdout).toMatch(/sqrl: .+ mcp \(stdio\) - Connected/);
  });

  test("SessionStart: the hook sqrl installed gives the model the repo's memory at session start", async () => {
    const settings = JSON.parse(readFileSync(join(home.env.QWEN_HOME!, "settings.json"), "utf8"));
    expect(JSON.stringify(settings.hooks.SessionStart)).toContain("hook claude-session-start");
    model.play([{ text: "done" }]);
    const run = await runHost(qwenArgs(model, "Add a delete endpoint for inventory items"), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const hook = runSqrl(["hook", "claude-session-start"], {
      env: home.env,
      cwd: repo,
      input: JSON.stringify({ cwd: repo, hook_event_name: "SessionStart", source: "startup" }),
    });
    const context = (JSON.parse(hook.stdout) as { hookSpecificOutput: { additionalContext: string } })
      .hookSpecificOutput.additionalContext;
    expect(context).toContain("sqrl memory for this repo");
    const sent = JSON.stringify(model.requests.find((r) => Array.isArray(r.body.tools))?.body ?? {});
    expect(sent).toContain(JSON.stringify(context).slice(1, -1));
  });

  test("a budget-filling get_task_context reaches the model within its budget: the JSON and the markdown together", async () => {
    const name = "mcp__sqrl__get_task_context";
    model.play([
      { tool: "tool_search", input: { query: `select:${name}` } },
      {
        tool: "tool_call",
        input: {
          name,
          arguments: {
            task_description: "Add a delete endpoint for inventory items",
            active_file_paths: ["src/routes/inventory.ts"],
            context_budget_tokens: FILLING_BUDGET,
          },
        },
      },
      { text: "done" },
    ]);
    const record = join(home.root, "qwen-mcp-input.jsonl");
    const restore = recordServerInput(join(home.env.QWEN_HOME!, "settings.json"), record);
    let run: Awaited<ReturnType<typeof runHost>>;
    try {
      run = await runHost(qwenArgs(model, "Fix the add function"), { env, cwd: repo });
    } finally {
      restore();
    }
    expect(run.code, run.stderr).toBe(0);
    // What the pinned Qwen Code says it is (sqrl's host table knows it by this name).
    const client = recordedClientInfo(record);
    expect(client.name).toBe("qwen-cli-mcp-client-sqrl");
    expect(forwardingOf(client).host).toBe("qwen");
    const result = openaiResults(model.requests).find((r) => r.tool === "tool_call");
    expect(result, JSON.stringify(openaiResults(model.requests)).slice(0, 2000)).toBeDefined();
    // Qwen Code forwards the structured answer (one JSON line), then the text content again.
    const [json, ...rest] = result!.text.split("\n");
    const answer = ToolAnswer.parse(JSON.parse(json!));
    expect(json).toBe(JSON.stringify(answer));
    expect(rest.join("\n")).toBe(answer.markdown);
    expect(answer.has_relevant_memory).toBe(true);
    expect(answer.markdown).toContain("soft delete");
    // Both parts together, by the real tokenizer, stay within the budget.
    const o200k = await loadTokenCounter("o200k");
    expect(o200k.name).toBe("o200k");
    const forwarded = o200k.count(result!.text);
    expect(forwarded).toBeLessThanOrEqual(FILLING_BUDGET);
    // The footer reports what Qwen Code forwards (sqrl's own counter on the whole text).
    const footer = [...answer.markdown.matchAll(/Budget: ~(\d+)\/(\d+) tokens/g)].at(-1);
    expect([Number(footer![1]), Number(footer![2])]).toEqual([estimateTokens(result!.text), FILLING_BUDGET]);
    console.log(
      `qwen get_task_context (budget ${FILLING_BUDGET}): ${forwarded} tokens forwarded (o200k; ${estimateTokens(result!.text)} by sqrl's estimator)`,
    );
    expect(result!.text).not.toContain(home.root);
  });
});
