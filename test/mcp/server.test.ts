/**
 * createServer() over the SDK's InMemoryTransport against a real engine server started in-process
 * (the daemon forwards the same paths unchanged; the compiled binary end to end is in e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { initProject } from "../../src/cli/init-project.ts";
import { startEngineServer, type EngineServer } from "../../src/engine/server.ts";
import { estimateTokens, loadTokenCounter } from "../../src/shared/tokens.ts";
import { forwardingOf } from "../../src/mcp/hosts/forwarding.ts";
import { DaemonBridge } from "../../src/mcp/daemon-bridge.ts";
import { serverManifest } from "../../src/mcp/manifest.ts";
import { buildSessionStartContext } from "../../src/mcp/session-start-hook.ts";
import { createServer, SERVER_INSTRUCTIONS } from "../../src/mcp/server.ts";
import { SessionDedup } from "../../src/mcp/session-dedup.ts";
import { Tracer } from "../../src/mcp/trace.ts";
import { NO_RELEVANT_MEMORY } from "../../src/shared/api.ts";
import { forwardedText, ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { listToolCalls } from "../../src/sql/tool-calls.ts";
import { tempDir } from "../helpers/sqrl.ts";
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

let tmp: ReturnType<typeof tempDir>;
let root: string;
let engine: EngineServer;
let savedHome: string | undefined;
let tracer: Tracer;

function bridge(): DaemonBridge {
  return new DaemonBridge({
    kind: "engine",
    start: false,
    target: () => ({
      pid: process.pid,
      host: "127.0.0.1",
      port: engine.port,
      token: engine.token,
      started_at: new Date().toISOString(),
    }),
  });
}

async function connect(opts: { cwd?: string; dedup?: SessionDedup; clientName?: string } = {}): Promise<Client> {
  const server = createServer({
    bridge: bridge(),
    dedup: opts.dedup ?? new SessionDedup(),
    tracer,
    cwd: opts.cwd ?? root,
  });
  const client = new Client({ name: opts.clientName ?? "test", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  return client;
}

function text(res: Awaited<ReturnType<Client["callTool"]>>): string {
  return (res.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");
}

/** The structured result, checked against the tools' shared output schema. */
function answer(res: Awaited<ReturnType<Client["callTool"]>>): ToolAnswer {
  return ToolAnswer.parse(res.structuredContent);
}

/** The footer's figure: `Budget: ~N/M tokens`. */
function footerFigure(markdown: string): { n: number; budget: number } {
  const m = [...markdown.matchAll(/Budget: ~(\d+)\/(\d+) tokens/g)].at(-1);
  if (!m) throw new Error(`no footer in: ${markdown}`);
  return { n: Number(m[1]), budget: Number(m[2]) };
}

beforeAll(async () => {
  savedHome = process.env.SQRL_HOME;
  tmp = tempDir("sqrl-mcp-mem-");
  process.env.SQRL_HOME = join(tmp.path, "sqrl");
  root = join(tmp.path, "repo");
  mkdirSync(join(root, "src", "routes"), { recursive: true });
  initProject(root);
  seedProject(root);
  engine = await startEngineServer();
  tracer = new Tracer(bridge());
});

afterAll(async () => {
  await tracer.close();
  await engine.stop();
  if (savedHome === undefined) delete process.env.SQRL_HOME;
  else process.env.SQRL_HOME = savedHome;
  tmp.cleanup();
});

describe("sqrl MCP server in memory, real engine behind it", () => {
  test("tools/list: seven read-only, closed-world tools, each with an output schema; instructions carry the call pattern", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.outputSchema?.type).toBe("object");
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.description?.length ?? 0).toBeGreaterThan(20);
    }
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
    expect(SERVER_INSTRUCTIONS).toContain("get_task_context(");
    expect(SERVER_INSTRUCTIONS).toContain('get_user_style_view(mode="core"');
    await client.close();
  });

  test("the build-time manifest is exactly what the live server answers", async () => {
    const client = await connect();
    const manifest = await serverManifest();
    expect(manifest.tools).toEqual(JSON.parse(JSON.stringify((await client.listTools()).tools)));
    expect(manifest.capabilities).toEqual(client.getServerCapabilities() as Record<string, unknown>);
    expect(manifest.serverInfo).toEqual(client.getServerVersion() as unknown as Record<string, unknown>);
    await client.close();
  });

  test("every tool's result validates against its output schema: the markdown once, the project by name, no path of this machine", async () => {
    const client = await connect();
    const calls: Array<[string, Record<string, unknown>]> = [
      [
        "get_task_context",
        {
          task_description: "Add a delete endpoint for inventory items",
          active_file_paths: ["src/routes/inventory.ts"],
          include_seen: true,
        },
      ],
      ["get_user_style_view", { include_seen: true }],
      ["get_project_brief_view", { include_seen: true }],
      [
        "get_pitfalls_view",
        { scope_paths: ["src/auth/jwt.ts"], task_description: "refactor JWT auth", include_seen: true },
      ],
      ["search_project_memory", { query: "JWT login tests", include_seen: true }],
      ["get_memory_timeline", {}],
      ["recall_episode", { episode_id: SEED_EPISODE_ID }],
    ];
    for (const [name, args] of calls) {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError, `${name}: ${text(res)}`).toBeFalsy();
      const parsed = answer(res);
      expect(text(res)).toBe(parsed.markdown);
      expect(parsed.project).toBe("repo");
      expect(JSON.stringify(res.structuredContent)).not.toContain(tmp.path);
      // The seed's style memories belong to another user id than this test's default one.
      expect(parsed.has_relevant_memory, `${name}: ${parsed.markdown}`).toBe(name !== "get_user_style_view");
    }
    await client.close();
  });

  test("relevant memory is found; the budget is a hard ceiling", async () => {
    const client = await connect();
    for (const budget of [64, 120, 400]) {
      const res = await client.callTool({
        name: "get_task_context",
        arguments: {
          task_description: "Fix the JWT login tests that fail with token not yet valid",
          context_budget_tokens: budget,
          include_seen: true,
        },
      });
      const ctx = answer(res);
      // What the host forwards is the JSON; its count is the footer's figure and within the budget.
      const forwarded = estimateTokens(JSON.stringify(res.structuredContent));
      expect(forwarded).toBeLessThanOrEqual(budget);
      expect(footerFigure(ctx.markdown)).toEqual({ n: forwarded, budget });
      if (budget >= 120) {
        expect(ctx.has_relevant_memory).toBe(true);
        expect(ctx.markdown).toContain("clockTolerance");
      }
    }
    const search = await client.callTool({
      name: "search_project_memory",
      arguments: { query: "drizzle migrations", context_budget_tokens: 64, include_seen: true },
    });
    expect(estimateTokens(JSON.stringify(search.structuredContent))).toBeLessThanOrEqual(64);
    await client.close();
  });

  for (const host of [
    { name: "any answer", clientName: undefined },
    { name: "a host that forwards both parts (Copilot CLI)", clientName: "copilot-cli" },
  ])
    test(`a budget too small for ${host.name} names the budget that would do there, and that budget does`, async () => {
      const client = await connect(host.clientName ? { clientName: host.clientName } : undefined);
      const args = {
        task_description: "Fix the JWT login tests that fail with token not yet valid",
        include_seen: true,
      };
      const small = await client.callTool({
        name: "get_task_context",
        arguments: { ...args, context_budget_tokens: 5 },
      });
      expect(small.isError).toBe(true);
      const needed = Number(/the smallest needs (\d+) tokens/.exec(text(small))?.[1]);
      expect(needed).toBeGreaterThan(5);
      const enough = await client.callTool({
        name: "get_task_context",
        arguments: { ...args, context_budget_tokens: needed },
      });
      expect(enough.isError, text(enough)).toBeFalsy();
      const forwarded = host.clientName
        ? forwardedText(answer(enough), forwardingOf({ name: host.clientName }))
        : JSON.stringify(enough.structuredContent);
      expect(estimateTokens(forwarded)).toBeLessThanOrEqual(needed);
      await client.close();
    });

  test("a host that forwards the JSON and the markdown both (Qwen Code, Copilot CLI): every tool keeps the two together within the budget", async () => {
    const o200k = await loadTokenCounter("o200k");
    expect(o200k.name).toBe("o200k");
    const task = {
      task_description: "Add a delete endpoint for inventory items",
      active_file_paths: ["src/routes/inventory.ts"],
    };
    const calls: Array<[string, Record<string, unknown>, number]> = [
      ["get_task_context", task, 170],
      ["get_task_context", task, 400],
      ["get_user_style_view", { mode: "full" }, 200],
      ["get_project_brief_view", { mode: "full" }, 200],
      ["get_pitfalls_view", { scope_paths: ["src/routes/inventory.ts"] }, 200],
      ["search_project_memory", { query: "drizzle migrations", top_k: 5 }, 160],
      ["get_memory_timeline", { since: "2020-01-01" }, 200],
      ["recall_episode", { episode_id: SEED_EPISODE_ID }, 200],
    ];
    for (const clientName of ["qwen-cli-mcp-client-sqrl", "copilot-cli"]) {
      const forwarding = forwardingOf({ name: clientName });
      expect(forwarding.parts).toHaveLength(2);
      const client = await connect({ clientName });
      for (const [name, args, budget] of calls) {
        const res = await client.callTool({
          name,
          arguments: { ...args, context_budget_tokens: budget, include_seen: true },
        });
        expect(res.isError, `${clientName} ${name}: ${text(res)}`).toBeFalsy();
        const a = answer(res);
        expect(text(res)).toBe(a.markdown);
        const forwarded = forwardedText(a, forwarding);
        expect(o200k.count(forwarded), `${clientName} ${name} ${budget}`).toBeLessThanOrEqual(budget);
        // The footer reports what this host forwards, both parts.
        expect(footerFigure(a.markdown)).toEqual({ n: estimateTokens(forwarded), budget });
      }
      await client.close();
    }
  });

  test("the budget a host that forwards both parts needs: an unknown host's answer would be over it there, the host's own is not", async () => {
    const args = {
      task_description: "Add a delete endpoint for inventory items",
      active_file_paths: ["src/routes/inventory.ts"],
      context_budget_tokens: 170,
      include_seen: true,
    };
    const unknown = await connect();
    const plain = answer(await unknown.callTool({ name: "get_task_context", arguments: args }));
    await unknown.close();
    const qwen = await connect({ clientName: "qwen-cli-mcp-client-sqrl" });
    const both = answer(await qwen.callTool({ name: "get_task_context", arguments: args }));
    await qwen.close();
    const forwarding = forwardingOf({ name: "qwen-cli-mcp-client-sqrl" });
    // Unknown hosts keep the JSON-only packing: within 170 alone, over it once forwarded twice.
    expect(estimateTokens(JSON.stringify(plain))).toBeLessThanOrEqual(170);
    expect(estimateTokens(forwardedText(plain, forwarding))).toBeGreaterThan(170);
    expect(estimateTokens(forwardedText(both, forwarding))).toBeLessThanOrEqual(170);
    expect(both.markdown).toContain("soft delete");
  });

  test("abstention on an unrelated task", async () => {
    const client = await connect();
    const res = await client.callTool({
      name: "get_task_context",
      arguments: { task_description: "Write a haiku about autumn leaves and migrating geese" },
    });
    const ctx = answer(res);
    expect(ctx.has_relevant_memory).toBe(false);
    expect(ctx.markdown).toContain(NO_RELEVANT_MEMORY);
    await client.close();
  });

  test("de-dup across calls of one session; include_seen turns it off", async () => {
    const client = await connect({ dedup: new SessionDedup() });
    const args = {
      task_description: "Add a delete endpoint for inventory items",
      active_file_paths: ["src/routes/inventory.ts"],
    };
    const soft = "soft delete (deleted_at)";
    const first = answer(await client.callTool({ name: "get_task_context", arguments: args }));
    expect(first.markdown).toContain(soft);
    const secondRes = await client.callTool({ name: "get_task_context", arguments: args });
    expect(answer(secondRes).markdown).not.toContain(soft);
    expect(text(secondRes)).toMatch(/already shown/i);
    const again = answer(
      await client.callTool({ name: "get_task_context", arguments: { ...args, include_seen: true } }),
    );
    expect(again.markdown).toContain(soft);
    expect(again.markdown).not.toMatch(/already shown/i);
    // A view after the task context leaves out what the session already saw, too.
    const style = answer(await client.callTool({ name: "get_user_style_view", arguments: {} }));
    expect(style.markdown).not.toContain(soft);
    await client.close();
  });

  test("bad arguments give an error that names the field", async () => {
    const client = await connect();
    const missing = await client.callTool({ name: "get_task_context", arguments: {} });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("task_description");
    const wrong = await client.callTool({ name: "search_project_memory", arguments: { query: "x", top_k: "many" } });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain("top_k");
    const budget = await client.callTool({ name: "get_user_style_view", arguments: { context_budget_tokens: 0 } });
    expect(budget.isError).toBe(true);
    expect(text(budget)).toContain("context_budget_tokens");
    await client.close();
  });

  test("project_root: default cwd, a subfolder maps to its project, an unknown folder says to run sqrl init", async () => {
    const sub = await connect({ cwd: join(root, "src", "routes") });
    const res = await sub.callTool({ name: "get_project_brief_view", arguments: { include_seen: true } });
    expect(answer(res)).toMatchObject({ project: "repo", has_relevant_memory: true });
    const other = await sub.callTool({ name: "get_project_brief_view", arguments: { project_root: tmp.path } });
    expect(other.isError).toBe(true);
    expect(text(other)).toContain("sqrl init");
    await sub.close();
    // Started outside any project: the error says what to do without naming this machine's folders.
    const outside = await connect({ cwd: tmp.path });
    const none = await outside.callTool({ name: "get_project_brief_view", arguments: {} });
    expect(none.isError).toBe(true);
    expect(text(none)).toBe("get_project_brief_view failed: . is not a sqrl project. Run `sqrl init .` first.");
    await outside.close();
  });

  test("every call is traced in the project's data.db, through the API", async () => {
    const client = await connect();
    await client.callTool({
      name: "search_project_memory",
      arguments: { query: "soft delete inventory", include_seen: true },
    });
    await client.callTool({ name: "recall_episode", arguments: { episode_id: "ep_does_not_exist" } });
    await tracer.flush();
    const db = openProjectDb(root, { readonly: true });
    try {
      const rows = listToolCalls(db, { limit: 2 });
      expect(rows[0]!.tool).toBe("recall_episode");
      expect(rows[0]!.error).toBeTruthy();
      expect(rows[1]).toMatchObject({
        tool: "search_project_memory",
        error: null,
        args: { query: "soft delete inventory", include_seen: true },
      });
      expect(rows[1]!.memory_ids.length).toBeGreaterThan(0);
      expect(rows[1]!.token_estimate).toBeGreaterThan(0);
      expect(rows[1]!.latency_ms).toBeGreaterThan(0);
    } finally {
      db.close();
    }
    await client.close();
  });

  test("the session-start context: style + brief under one budget, no repeats, memory down → empty", async () => {
    for (const budget of [60, 150, 300]) {
      const res = await buildSessionStartContext({ cwd: root }, { bridge: bridge(), totalBudget: budget });
      expect(res.error).toBeNull();
      expect(res.token_estimate).toBeLessThanOrEqual(budget);
      expect(estimateTokens(res.additionalContext)).toBeLessThanOrEqual(budget);
      expect(res.additionalContext.length).toBeLessThan(10_000);
      if (budget >= 150) expect(res.additionalContext).toContain("pnpm");
      expect(new Set(res.memory_ids).size).toBe(res.memory_ids.length);
    }
    const down = new DaemonBridge({
      kind: "engine",
      start: false,
      target: () => ({ pid: 1, host: "127.0.0.1", port: 9, token: "x".repeat(32), started_at: "" }),
      timeoutMs: 500,
    });
    const none = await buildSessionStartContext({ cwd: root }, { bridge: down, totalBudget: 300 });
    expect(none.additionalContext).toBe("");
    expect(none.error).toMatch(/not reachable/);
    const unregistered = await buildSessionStartContext({ cwd: tmp.path }, { bridge: bridge(), totalBudget: 300 });
    expect(unregistered.additionalContext).toBe("");
  });
});
