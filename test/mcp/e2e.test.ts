/**
 * `sqrl mcp` end to end: the COMPILED binary (SQRL_BIN, default dist/sqrl) driven by the SDK's own
 * Client over StdioClientTransport and by the MCP Inspector CLI, with a real daemon and engine that
 * the first tool call starts. Every child gets an explicit env with temp homes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { estimateTokens } from "../../src/shared/tokens.ts";
import { NO_RELEVANT_MEMORY } from "../../src/shared/api.ts";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { makeHome, type DaemonHome } from "../daemon/harness.ts";
import { runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";
import { serverManifest } from "../../src/mcp/manifest.ts";
import { SEED_EPISODE_ID, seedProject } from "./fixtures.ts";

const TOOLS = [
  "get_task_context",
  "get_user_style_view",
  "get_project_brief_view",
  "get_pitfalls_view",
  "search_project_memory",
  "get_memory_timeline",
  "recall_episode",
];

let home: DaemonHome;
let root: string;

async function connect(env: Record<string, string> = home.env, cwd = root): Promise<Client> {
  const transport = new StdioClientTransport({ command: SQRL_BIN, args: ["mcp"], env, cwd, stderr: "pipe" });
  const client = new Client({ name: "e2e", version: "1" });
  await client.connect(transport);
  return client;
}

function text(res: Awaited<ReturnType<Client["callTool"]>>): string {
  return (res.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");
}

beforeAll(() => {
  home = makeHome();
  root = join(home.root, "repo");
  mkdirSync(root, { recursive: true });
  const init = runSqrl(["init", root, "--yes", "--no-git"], { env: home.env });
  expect(init.code).toBe(0);
  seedProject(root);
});

afterAll(async () => {
  await home.cleanup();
});

describe("sqrl mcp (compiled) with the SDK client", () => {
  test("tools/list: 7 tools with output schemas, the same list the SDK server builds", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.outputSchema?.type).toBe("object");
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    }
    expect(client.getInstructions()).toContain("get_task_context(");
    // The binary answers from its build-time manifest: it must equal what this source's server builds.
    const live = await serverManifest();
    expect(JSON.parse(JSON.stringify(tools))).toEqual(live.tools);
    expect(client.getServerCapabilities() as Record<string, unknown>).toEqual(live.capabilities);
    await client.close();
  });

  test("the first call starts the daemon; every tool's result validates against its output schema", async () => {
    expect(existsSync(join(home.sqrlHome, "daemon.json"))).toBe(false);
    const client = await connect();
    const calls: Array<[string, Record<string, unknown>]> = [
      ["get_user_style_view", {}],
      ["get_project_brief_view", {}],
      [
        "get_task_context",
        {
          task_description: "Add a delete endpoint for inventory items",
          active_file_paths: ["src/routes/inventory.ts"],
          include_seen: true,
        },
      ],
      [
        "get_pitfalls_view",
        { scope_paths: ["src/auth/jwt.ts"], task_description: "refactor JWT auth", include_seen: true },
      ],
      ["search_project_memory", { query: "JWT login tests", top_k: 3, include_seen: true }],
      ["get_memory_timeline", { limit: 5 }],
      ["recall_episode", { episode_id: SEED_EPISODE_ID }],
    ];
    for (const [name, args] of calls) {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError, `${name}: ${text(res)}`).toBeFalsy();
      const parsed = ToolAnswer.parse(res.structuredContent);
      expect(text(res)).toBe(parsed.markdown);
      expect(JSON.stringify(res.structuredContent)).not.toContain(home.root);
    }
    expect(existsSync(join(home.sqrlHome, "daemon.json"))).toBe(true);
    await client.close();
  });

  test("a budget too small for any answer gets one short line that says so, not empty text", async () => {
    const client = await connect();
    for (const budget of [1, 3]) {
      const res = await client.callTool({
        name: "get_task_context",
        arguments: { task_description: "Fix the JWT login tests", context_budget_tokens: budget, include_seen: true },
      });
      expect(res.isError).toBe(true);
      expect(text(res)).toContain("too small");
      expect(text(res).trim().split("\n")).toHaveLength(1);
    }
    await client.close();
  });

  test("get_memory_timeline reads since as people write it, and refuses what it cannot read", async () => {
    const client = await connect();
    const call = async (since: string) => client.callTool({ name: "get_memory_timeline", arguments: { since } });
    const recent = ToolAnswer.parse((await call("3 days ago")).structuredContent);
    expect(recent.has_relevant_memory).toBe(true);
    expect(recent.markdown).toContain(SEED_EPISODE_ID);
    const none = ToolAnswer.parse((await call("yesterday")).structuredContent);
    expect(none.has_relevant_memory).toBe(false);
    expect(none.markdown).not.toContain(SEED_EPISODE_ID);
    expect(none.markdown).not.toContain("No episodes recorded yet");
    const bad = await call("soon");
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("yesterday");
    await client.close();
  });

  test("budget respected, relevance, abstention", async () => {
    const client = await connect();
    for (const budget of [64, 200]) {
      const res = await client.callTool({
        name: "get_task_context",
        arguments: {
          task_description: "Fix the JWT login tests failing with token not yet valid",
          context_budget_tokens: budget,
          include_seen: true,
        },
      });
      const ctx = ToolAnswer.parse(res.structuredContent);
      expect(estimateTokens(JSON.stringify(res.structuredContent))).toBeLessThanOrEqual(budget);
      if (budget === 200) expect(ctx.markdown).toContain("clockTolerance");
    }
    const none = ToolAnswer.parse(
      (
        await client.callTool({
          name: "get_task_context",
          arguments: { task_description: "Write a haiku about autumn leaves and migrating geese" },
        })
      ).structuredContent,
    );
    expect(none.has_relevant_memory).toBe(false);
    expect(none.markdown).toContain(NO_RELEVANT_MEMORY);
    await client.close();
  });

  test("de-dup across two calls of one process; a new process starts fresh", async () => {
    const args = {
      task_description: "Add a delete endpoint for inventory items",
      active_file_paths: ["src/routes/inventory.ts"],
    };
    const client = await connect();
    const soft = "soft delete (deleted_at)";
    const first = ToolAnswer.parse(
      (await client.callTool({ name: "get_task_context", arguments: args })).structuredContent,
    );
    expect(first.markdown).toContain(soft);
    const secondRes = await client.callTool({ name: "get_task_context", arguments: args });
    expect(ToolAnswer.parse(secondRes.structuredContent).markdown).not.toContain(soft);
    expect(text(secondRes)).toMatch(/already shown/i);
    await client.close();
    const fresh = await connect();
    const again = ToolAnswer.parse(
      (await fresh.callTool({ name: "get_task_context", arguments: args })).structuredContent,
    );
    expect(again.markdown.replace(/Budget: ~\d+/, "")).toBe(first.markdown.replace(/Budget: ~\d+/, ""));
    await fresh.close();
  });

  test("bad arguments: an error result that names the field", async () => {
    const client = await connect();
    const res = await client.callTool({ name: "search_project_memory", arguments: { top_k: 3 } });
    expect(res.isError).toBe(true);
    expect(text(res)).toContain("query");
    await client.close();
  });

  test("a 1 MB query: clipped with a note, answered briefly; errors never echo it nor show internal URLs", async () => {
    const client = await connect();
    const marker = "zqxmarker";
    const huge = `JWT login tests ${`${marker} `.repeat(Math.ceil(1_000_000 / (marker.length + 1)))}`.slice(
      0,
      1_000_000,
    );
    expect(huge.length).toBe(1_000_000);
    const res = await client.callTool({
      name: "search_project_memory",
      arguments: { query: huge, include_seen: true },
    });
    expect(res.isError, text(res).slice(0, 300)).toBeFalsy();
    expect(ToolAnswer.parse(res.structuredContent).markdown).toContain("Query clipped");
    expect(JSON.stringify(res).length).toBeLessThan(20_000);
    const ctxRes = await client.callTool({
      name: "get_task_context",
      arguments: { task_description: huge, include_seen: true },
    });
    expect(ToolAnswer.parse(ctxRes.structuredContent).markdown).toContain("Query clipped");
    expect(JSON.stringify(ctxRes).length).toBeLessThan(20_000);
    // Past the daemon's body cap (1 MiB) the answer is a short 413 that says what to do.
    const tooBig = `${huge} ${huge}`;
    for (const args of [
      { query: huge, top_k: 1000 },
      { query: huge, project_root: join(home.root, "not-a-project") },
      { query: tooBig },
    ]) {
      const bad = await client.callTool({ name: "search_project_memory", arguments: args });
      expect(bad.isError).toBe(true);
      const message = text(bad);
      expect(message.length).toBeLessThan(900);
      expect(message).not.toContain(marker);
      expect(message).not.toMatch(/https?:\/\//);
    }
    await client.close();
  });

  test("a key pasted into a query or a task is never echoed back (issue 30 item 6)", async () => {
    const client = await connect();
    const key = "sk-" + "ant-api03-" + "EchoedQueryKeyAAAABBBBCCCC0123456789"; // assembled: no contiguous token in the repo
    const calls: Array<[string, Record<string, unknown>]> = [
      ["search_project_memory", { query: `JWT ${key}`, include_seen: true }],
      ["search_project_memory", { query: `nothing-matches-this ${key}`, include_seen: true }],
      ["get_task_context", { task_description: `fix JWT login with ${key}`, include_seen: true }],
      ["get_memory_timeline", { since: key }],
    ];
    for (const [name, args] of calls) {
      const res = await client.callTool({ name, arguments: args });
      expect(JSON.stringify(res)).not.toContain("EchoedQueryKey");
    }
    const heading = await client.callTool({ name: "search_project_memory", arguments: { query: `JWT ${key}` } });
    expect(text(heading)).toContain("[REDACTED:anthropic_key]");
    await client.close();
    const log = runSqrl(["log", root, "--json"], { env: home.env });
    expect(log.stdout).not.toContain("EchoedQueryKey");
  });

  test("sqrl log shows the traced calls", () => {
    const res = runSqrl(["log", root, "--json", "--tool", "recall_episode"], { env: home.env });
    expect(res.code).toBe(0);
    const rows = JSON.parse(res.stdout) as Array<{ tool: string; args: Record<string, unknown>; error: string | null }>;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.tool === "recall_episode")).toBe(true);
    expect(rows[0]!.args).toEqual({ episode_id: SEED_EPISODE_ID });
    const human = runSqrl(["log", root, "--limit", "3"], { env: home.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("ms");
  });
});

describe("sqrl mcp protocol hygiene", () => {
  test("stdout carries only JSON-RPC; a tools/call before tools/list works; the process exits when stdin closes", async () => {
    const proc = Bun.spawn([SQRL_BIN, "mcp"], {
      cwd: root,
      env: { ...home.env, SQRL_LOG_LEVEL: "5" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const send = (m: unknown) => proc.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "get_project_brief_view", arguments: { include_seen: true } },
    });
    send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    await proc.stdin.flush();
    proc.stdin.end();
    const code = await proc.exited;
    expect(code).toBe(0);
    const lines = (await new Response(proc.stdout).text()).split("\n").filter(Boolean);
    const msgs = lines.map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result?: Record<string, any> });
    expect(msgs.every((m) => m.jsonrpc === "2.0")).toBe(true);
    expect(msgs.map((m) => m.id).sort()).toEqual([1, 2, 3]);
    expect(msgs.find((m) => m.id === 1)!.result!.protocolVersion).toBe("2025-06-18");
    expect(ToolAnswer.parse(msgs.find((m) => m.id === 2)!.result!.structuredContent).project).toBe("repo");
    expect(msgs.find((m) => m.id === 3)!.result!.tools).toHaveLength(7);
  });
});

describe("daemon down and unstartable", () => {
  test("a tool call returns isError saying why and what to run, promptly", async () => {
    const broken = makeHome();
    try {
      const repo = join(broken.root, "repo");
      mkdirSync(repo, { recursive: true });
      expect(runSqrl(["init", repo, "--yes", "--no-git"], { env: broken.env }).code).toBe(0);
      writeFileSync(join(broken.sqrlHome, "logs"), "a file where the logs folder should be"); // the daemon cannot start
      const client = await connect(broken.env, repo);
      const res = await client.callTool({ name: "get_task_context", arguments: { task_description: "anything" } });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/daemon is not reachable/);
      expect(text(res)).toMatch(/starting it failed/);
      expect(text(res)).toContain("sqrl daemon");
      await client.close();
      // The SessionStart hook in the same situation: valid output, no context, exit 0.
      const hook = runSqrl(["hook", "claude-session-start"], { env: broken.env, input: JSON.stringify({ cwd: repo }) });
      expect(hook.code).toBe(0);
      expect(JSON.parse(hook.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "" },
      });
    } finally {
      await broken.cleanup();
    }
  });
});

describe("sqrl hook claude-session-start", () => {
  test("prints the SessionStart output with style and brief, under the cap", () => {
    const res = runSqrl(["hook", "claude-session-start"], {
      env: home.env,
      input: JSON.stringify({ session_id: "s1", cwd: root, hook_event_name: "SessionStart", source: "startup" }),
    });
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(out.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(out.hookSpecificOutput.additionalContext).toContain("pnpm");
    expect(out.hookSpecificOutput.additionalContext.length).toBeLessThan(10_000);
    expect(estimateTokens(out.hookSpecificOutput.additionalContext)).toBeLessThanOrEqual(300);
  });

  test("no project or unreadable input: valid output, no context, exit 0", () => {
    const res = runSqrl(["hook", "claude-session-start"], { env: home.env, input: JSON.stringify({ cwd: home.root }) });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "" },
    });
    const garbage = runSqrl(["hook", "claude-session-start"], { env: home.env, input: "not json" });
    expect(garbage.code).toBe(0);
    expect(JSON.parse(garbage.stdout).hookSpecificOutput.hookEventName).toBe("SessionStart");
  });
});

describe("sqrl hosts / init --hosts (compiled)", () => {
  test("user scope by default: this binary in each host's own config, nothing in the repo; idempotent; removed again", () => {
    const env = { ...home.env, SQRL_CLAUDE_BIN: "" };
    const add = runSqrl(
      ["hosts", "add", "claude,codex,gemini,cursor,qwen,opencode,copilot", "--path", root, "--yes", "--json"],
      {
        env,
      },
    );
    expect(add.code).toBe(0);
    const res = JSON.parse(add.stdout) as {
      changes: Array<{ host: string; action: string; path: string; scope: string }>;
      hook: { action: string; path: string };
    };
    expect(res.changes.map((c) => c.action)).toEqual(["added", "added", "added", "added", "added", "added", "added"]);
    expect(res.changes.every((c) => c.scope === "user")).toBe(true);
    expect(res.hook.action).toBe("added");
    const claudeJson = JSON.parse(readFileSync(join(home.env.CLAUDE_CONFIG_DIR!, ".claude.json"), "utf8"));
    expect(claudeJson.mcpServers.sqrl).toMatchObject({ command: SQRL_BIN, args: ["mcp"] });
    const codex = readFileSync(join(home.env.CODEX_HOME!, "config.toml"), "utf8");
    expect(codex).toContain("[mcp_servers.sqrl]");
    expect(codex).toContain(`SQRL_HOME = "${home.sqrlHome}"`); // Codex clears the environment of its servers
    expect(JSON.parse(readFileSync(join(home.env.GEMINI_HOME!, "settings.json"), "utf8")).mcpServers.sqrl.command).toBe(
      SQRL_BIN,
    );
    expect(JSON.parse(readFileSync(join(home.env.HOME!, ".cursor", "mcp.json"), "utf8")).mcpServers.sqrl.command).toBe(
      SQRL_BIN,
    );
    expect(JSON.parse(readFileSync(join(home.env.QWEN_HOME!, "settings.json"), "utf8")).mcpServers.sqrl).toEqual({
      command: SQRL_BIN,
      args: ["mcp"],
    });
    expect(
      JSON.parse(readFileSync(join(home.env.XDG_CONFIG_HOME!, "opencode", "opencode.json"), "utf8")).mcp.sqrl,
    ).toEqual({ type: "local", command: [SQRL_BIN, "mcp"], enabled: true });
    expect(JSON.parse(readFileSync(join(home.env.COPILOT_HOME!, "mcp-config.json"), "utf8")).mcpServers.sqrl).toEqual({
      type: "local",
      command: SQRL_BIN,
      args: ["mcp"],
      tools: ["*"],
    });
    const hook = JSON.parse(readFileSync(join(home.env.CLAUDE_CONFIG_DIR!, "settings.json"), "utf8")).hooks
      .SessionStart[0].hooks[0].command as string;
    expect(hook).toBe(`${SQRL_BIN} hook claude-session-start`);
    for (const f of [".mcp.json", ".gemini", ".cursor", ".claude", ".qwen", "opencode.json", ".github"])
      expect(existsSync(join(root, f))).toBe(false);

    const again = JSON.parse(runSqrl(["hosts", "add", "all", "--path", root, "--json"], { env }).stdout) as {
      changes: Array<{ action: string }>;
      hook: { action: string };
    };
    expect(again.changes.map((c) => c.action)).toEqual([
      "unchanged",
      "unchanged",
      "unchanged",
      "unchanged",
      "unchanged",
      "unchanged",
      "unchanged",
    ]);
    expect(again.hook.action).toBe("unchanged"); // kept without asking again (no --yes)

    const list = JSON.parse(runSqrl(["hosts", "list", "--path", root, "--json"], { env }).stdout) as {
      entries: Array<{ host: string; scope: string; registered: boolean; current: boolean }>;
    };
    expect(list.entries.filter((e) => e.registered).every((e) => e.current)).toBe(true);
    expect(
      list.entries
        .filter((e) => e.registered)
        .map((e) => e.host)
        .sort(),
    ).toEqual(["claude", "codex", "copilot", "cursor", "gemini", "opencode", "qwen"]);

    const remove = runSqrl(["hosts", "remove", "all", "--path", root, "--json"], { env });
    expect(remove.code).toBe(0);
    expect(existsSync(join(home.env.CLAUDE_CONFIG_DIR!, ".claude.json"))).toBe(false); // sqrl created it, sqrl's entry was all it held
    expect(existsSync(join(home.env.CODEX_HOME!, "config.toml"))).toBe(false);
    expect(existsSync(join(home.env.CLAUDE_CONFIG_DIR!, "settings.json"))).toBe(false);

    const bad = runSqrl(["hosts", "add", "vim", "--path", root], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Unknown host");
  });

  test("project scope: the repo's shared files name the portable `sqrl`, never this machine's paths", () => {
    const env = { ...home.env, SQRL_CLAUDE_BIN: "" };
    const add = runSqrl(["hosts", "add", "all", "--scope", "project", "--path", root, "--yes"], { env });
    expect(add.code).toBe(0);
    expect(JSON.parse(readFileSync(join(root, ".mcp.json"), "utf8")).mcpServers.sqrl).toMatchObject({
      command: "sqrl",
      args: ["mcp"],
    });
    expect(
      JSON.parse(readFileSync(join(root, ".claude", "settings.json"), "utf8")).hooks.SessionStart[0].hooks[0].command,
    ).toBe("sqrl hook claude-session-start");
    expect(JSON.parse(readFileSync(join(root, ".cursor", "mcp.json"), "utf8")).mcpServers.sqrl.args).toEqual([
      "mcp",
      "--project",
      "${workspaceFolder}",
    ]);
    for (const f of [
      ".mcp.json",
      ".claude/settings.json",
      ".gemini/settings.json",
      ".cursor/mcp.json",
      ".qwen/settings.json",
      "opencode.json",
      ".github/mcp.json",
    ])
      expect(readFileSync(join(root, f), "utf8")).not.toContain(home.root);
    expect(add.stdout).toContain("claude (project): waits for approval");
    const second = runSqrl(["hosts", "add", "claude", "--scope", "project", "--path", root], { env });
    expect(second.stdout).toContain("SessionStart hook already in");
    expect(second.stdout).not.toContain("not installed");
    expect(runSqrl(["status", root], { env }).stdout).toContain("claude (project) waits for approval");
    expect(runSqrl(["hosts", "remove", "all", "--scope", "project", "--path", root], { env }).code).toBe(0);
    for (const f of [
      ".mcp.json",
      ".gemini/settings.json",
      ".cursor/mcp.json",
      ".claude/settings.json",
      ".qwen/settings.json",
      "opencode.json",
      ".github/mcp.json",
    ])
      expect(existsSync(join(root, f))).toBe(false);
  });

  test("sqrl init --hosts claude --yes registers the server and the hook for the user", () => {
    const repo = join(home.root, "repo2");
    mkdirSync(repo, { recursive: true });
    const res = runSqrl(["init", repo, "--hosts", "claude", "--yes", "--no-git"], {
      env: { ...home.env, SQRL_CLAUDE_BIN: "" },
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("claude (user): registered sqrl in");
    expect(res.stdout).toContain("installed the SessionStart hook");
    expect(
      JSON.parse(readFileSync(join(home.env.CLAUDE_CONFIG_DIR!, ".claude.json"), "utf8")).mcpServers.sqrl.command,
    ).toBe(SQRL_BIN);
    expect(existsSync(join(repo, ".mcp.json"))).toBe(false);
    expect(existsSync(join(repo, ".claude"))).toBe(false);
  });
});
