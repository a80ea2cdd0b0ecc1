/**
 * OpenCode end to end: the pinned `opencode` (test/hosts/package.json) run headless (`opencode run`)
 * against the model stand-in (Anthropic Messages, as a custom provider) in a temp git repo, with sqrl
 * registered the way a user does it (`sqrl init --hosts=opencode`) and its daemon capturing from
 * OpenCode's live SQLite store. The scripted work (request, read, failing test, edit, green test,
 * commit) must arrive as events, once (also after a daemon restart), and a later turn written by the
 * running CLI must arrive too. Serving: `opencode mcp list` says connected and a model turn's
 * `get_task_context` answer reaches the model within its budget (read from the recorded request).
 * Skips with one line when OpenCode is not installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { estimateTokens } from "../../src/shared/tokens.ts";
import { type DaemonHome, queryProject, startDaemon, waitFor } from "../daemon/harness.ts";
import { runSqrl } from "../helpers/sqrl.ts";
import { seedProject } from "../mcp/fixtures.ts";
import {
  anthropicResults,
  OPENCODE_BIN,
  OPENCODE_INSTALLED,
  opencodeArgs,
  opencodeEnv,
  opencodeWorkSteps,
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

if (!OPENCODE_INSTALLED)
  console.log("test/hosts/opencode: skipped: OpenCode not installed (npm install --prefix test/hosts --no-save)");
setDefaultTimeout(120_000);
const suite = OPENCODE_INSTALLED ? describe : describe.skip;

let home: DaemonHome;
let repo: string;
let model: ModelServer;
let env: Record<string, string>;

const rows = () => sourceRows(repo, "opencode");
const content = rowContent;

let setup: HostSetup | undefined;
beforeAll(async () => {
  if (!OPENCODE_INSTALLED) return;
  setup = setUpHost({
    host: "opencode",
    watch: "[watch]\nclaude = false\ncodex = false\ngemini = false\nqwen = false\n",
    env: opencodeEnv,
  });
  ({ home, repo, model, env } = setup);
});

afterAll(() => tearDownHost(setup));

suite("OpenCode: capture from its live SQLite store", () => {
  test("the scripted work arrives as events: request, edit, failing and green runs, commit", async () => {
    model.play(opencodeWorkSteps(repo));
    const run = await runHost(opencodeArgs(WORK_PROMPT), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    await waitFor("the session's commit as an event", () =>
      rows().some((x) => x.event_type === "command_run" && String(content(x).command).includes("git commit")),
    );
    const all = rows();
    expect(all.some((r) => r.event_type === "user_message" && String(content(r).text).includes(WORK_PROMPT))).toBe(
      true,
    );
    const edit = all.find((r) => r.event_type === "code_change");
    expect(String(content(edit!).diff_summary)).toContain("src/add.js");
    const tests = all.filter((r) => r.event_type === "test_run").map(content);
    expect(tests.map((t) => [t.runner, t.exit_code, t.is_error])).toEqual([
      ["npm test", 1, true],
      ["npm test", 0, false],
    ]);
    expect(all.some((r) => r.event_type === "tool_result" && content(r).tool === "read")).toBe(true);
    expect(all.some((r) => r.event_type === "assistant_response")).toBe(true);
    await waitFor("the git commit event", () =>
      queryProject<EventRow>(repo, "SELECT content_json FROM events WHERE event_type = 'git_commit'").some((r) =>
        r.content_json.includes(WORK_COMMIT),
      ),
    );
  });

  test("no duplicates after a daemon restart; a new turn written live arrives", async () => {
    const before = rows().length;
    expect(runSqrl(["daemon", "stop", "--timeout", "10"], { env: home.env }).code).toBe(0);
    startDaemon(home);
    model.play([{ text: "Nothing else to do." }]);
    const run = await runHost(opencodeArgs("Anything left?"), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    await waitFor("the new turn's answer", () =>
      rows().some((r) => r.event_type === "assistant_response" && content(r).text === "Nothing else to do."),
    );
    // The new turn adds its request and its answer; nothing of the first session came twice.
    expect(rows().length).toBe(before + 2);
  });
});

suite("OpenCode: serving sqrl", () => {
  test("`opencode mcp list` shows sqrl connected after `sqrl init --hosts=opencode`", async () => {
    const list = await runHost([OPENCODE_BIN, "mcp", "list"], { env, cwd: repo });
    // "●  ✓ sqrl \x1b[90mconnected" (colour codes and all)
    expect(Bun.stripANSI(list.stdout)).toMatch(/✓ sqrl connected\n/);
  });

  test("a model turn's get_task_context reaches the model within its budget", async () => {
    seedProject(repo);
    const name = "sqrl_get_task_context";
    model.play([
      {
        tool: name,
        input: {
          task_description: "Add a delete endpoint for inventory items",
          active_file_paths: ["src/routes/inventory.ts"],
        },
      },
      { text: "done" },
    ]);
    const run = await runHost(opencodeArgs("Add a delete endpoint for inventory items"), { env, cwd: repo });
    expect(run.code, run.stderr).toBe(0);
    const result = anthropicResults(model.requests).find((r) => r.tool === name);
    expect(result, JSON.stringify(anthropicResults(model.requests)).slice(0, 1500)).toBeDefined();
    // OpenCode hands the model the text content (sqrl's markdown), not the structured JSON.
    const text = result!.text;
    expect(text).toContain("Relevant memory for this task");
    expect(text).toContain("soft delete");
    expect(estimateTokens(text)).toBeLessThanOrEqual(400);
    expect(text).toMatch(/Budget: ~\d+\/400 tokens/);
    console.log(`opencode get_task_context: ${estimateTokens(text)} tokens forwarded (budget 400)`);
    expect(result!.text).not.toContain(home.root);
  });
});
