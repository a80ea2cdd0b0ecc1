/**
 * createServer() over the SDK's InMemoryTransport against a real engine server started in-process
 * (the daemon forwards the same paths unchanged; the compiled binary end to end is in e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { initProject } from "../../src/cli/init-project.ts";
import { startEngineServer, type EngineServer } from "../../src/engine/server.ts";
import { estimateTokens } from "../../src/shared/tokens.ts";
import { DaemonBridge } from "../../src/mcp/daemon-bridge.ts";
import { serverManifest } from "../../src/mcp/manifest.ts";
import { buildSessionStartContext } from "../../src/mcp/session-start-hook.ts";
import { createServer, SERVER_INSTRUCTIONS } from "../../src/mcp/server.ts";
import { SessionDedup } from "../../src/mcp/session-dedup.ts";
import { Tracer } from "../../src/mcp/trace.ts";
import { EpisodeRecall, NO_RELEVANT_MEMORY, PitfallsView, ProjectBriefView, SearchResponse, TaskContext, Timeline, UserStyleView } from "../../src/shared/api.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { listToolCalls } from "../../src/sql/tool-calls.ts";
import { tempDir } from "../helpers/sqrl.ts";
import { SEED_EPISODE_ID, seedProject } from "./fixtures.ts";

const OUTPUT: Record<string, z.ZodType> = {
  get_task_context: TaskContext,
  get_user_style_view: UserStyleView,
  get_project_brief_view: ProjectBriefView,
  get_pitfalls_view: PitfallsView,
  search_project_memory: SearchResponse,
  get_memory_timeline: Timeline,
  recall_episode: EpisodeRecall,
};

let tmp: ReturnType<typeof tempDir>;
let root: string;
let engine: EngineServer;
let savedHome: string | undefined;
let tracer: Tracer;

function bridge(): DaemonBridge {
  return new DaemonBridge({
    kind: "engine",
    start: false,
    target: () => ({ pid: process.pid, host: "127.0.0.1", port: engine.port, token: engine.token, started_at: new Date().toISOString() }),
  });
}

async function connect(opts: { cwd?: string; dedup?: SessionDedup } = {}): Promise<Client> {
  const server = createServer({ bridge: bridge(), dedup: opts.dedup ?? new SessionDedup(), tracer, cwd: opts.cwd ?? root });
  const client = new Client({ name: "test", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  return client;
}

function text(res: Awaited<ReturnType<Client["callTool"]>>): string {
  return (res.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");
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
  tracer = new Tracer();
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
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(OUTPUT).sort());
    for (const t of tools) {
      expect(t.outputSchema?.type).toBe("object");
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.description?.length ?? 0).toBeGreaterThan(20);
    }
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
    expect(SERVER_INSTRUCTIONS).toContain("get_task_context(");
    expect(SERVER_INSTRUCTIONS).toContain("get_user_style_view(mode=\"core\"");
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

  test("every tool's result validates against its output schema and carries the markdown", async () => {
    const client = await connect();
    const calls: Array<[string, Record<string, unknown>]> = [
      ["get_task_context", { task_description: "Add a delete endpoint for inventory items", active_file_paths: ["src/routes/inventory.ts"], include_seen: true }],
      ["get_user_style_view", { include_seen: true }],
      ["get_project_brief_view", { include_seen: true }],
      ["get_pitfalls_view", { scope_paths: ["src/auth/jwt.ts"], task_description: "refactor JWT auth", include_seen: true }],
      ["search_project_memory", { query: "JWT login tests", include_seen: true }],
      ["get_memory_timeline", {}],
      ["recall_episode", { episode_id: SEED_EPISODE_ID }],
    ];
    for (const [name, args] of calls) {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError, `${name}: ${text(res)}`).toBeFalsy();
      const parsed = OUTPUT[name]!.parse(res.structuredContent) as { markdown: string };
      expect(text(res).startsWith(parsed.markdown)).toBe(true);
    }
    await client.close();
  });

  test("relevant memory is found; the budget is a hard ceiling", async () => {
    const client = await connect();
    for (const budget of [40, 120, 400]) {
      const res = await client.callTool({
        name: "get_task_context",
        arguments: { task_description: "Fix the JWT login tests that fail with token not yet valid", context_budget_tokens: budget, include_seen: true },
      });
      const ctx = TaskContext.parse(res.structuredContent);
      expect(ctx.token_estimate).toBeLessThanOrEqual(budget);
      expect(estimateTokens(ctx.markdown)).toBeLessThanOrEqual(budget);
      if (budget >= 120) {
        expect(ctx.has_relevant_memory).toBe(true);
        expect(ctx.selected_memories.some((m) => m.key === "jwt_clock_skew")).toBe(true);
      }
    }
    const search = SearchResponse.parse((await client.callTool({ name: "search_project_memory", arguments: { query: "drizzle migrations", context_budget_tokens: 60, include_seen: true } })).structuredContent);
    expect(search.token_estimate).toBeLessThanOrEqual(60);
    await client.close();
  });

  test("abstention on an unrelated task", async () => {
    const client = await connect();
    const res = await client.callTool({ name: "get_task_context", arguments: { task_description: "Write a haiku about autumn leaves and migrating geese" } });
    const ctx = TaskContext.parse(res.structuredContent);
    expect(ctx.has_relevant_memory).toBe(false);
    expect(ctx.selected_memories).toEqual([]);
    expect(ctx.markdown).toContain(NO_RELEVANT_MEMORY);
    await client.close();
  });

  test("de-dup across calls of one session; include_seen turns it off", async () => {
    const client = await connect({ dedup: new SessionDedup() });
    const args = { task_description: "Add a delete endpoint for inventory items", active_file_paths: ["src/routes/inventory.ts"] };
    const first = TaskContext.parse((await client.callTool({ name: "get_task_context", arguments: args })).structuredContent);
    expect(first.memory_ids.length).toBeGreaterThan(0);
    const secondRes = await client.callTool({ name: "get_task_context", arguments: args });
    const second = TaskContext.parse(secondRes.structuredContent);
    expect(second.memory_ids.filter((id) => first.memory_ids.includes(id))).toEqual([]);
    expect(second.omitted_seen).toBeGreaterThanOrEqual(first.memory_ids.length);
    expect(text(secondRes)).toMatch(/already shown/i);
    const again = TaskContext.parse((await client.callTool({ name: "get_task_context", arguments: { ...args, include_seen: true } })).structuredContent);
    expect(again.omitted_seen).toBe(0);
    expect(first.memory_ids.every((id) => again.memory_ids.includes(id))).toBe(true);
    // A view after the task context leaves out what the session already saw, too.
    const style = UserStyleView.parse((await client.callTool({ name: "get_user_style_view", arguments: {} })).structuredContent);
    expect(style.memory_ids.filter((id) => again.memory_ids.includes(id))).toEqual([]);
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
    expect(ProjectBriefView.parse(res.structuredContent).project_id).toBe(root);
    const other = await sub.callTool({ name: "get_project_brief_view", arguments: { project_root: tmp.path } });
    expect(other.isError).toBe(true);
    expect(text(other)).toContain("sqrl init");
    await sub.close();
  });

  test("every call is traced in the project's data.db", async () => {
    const client = await connect();
    await client.callTool({ name: "search_project_memory", arguments: { query: "soft delete inventory", include_seen: true } });
    await client.callTool({ name: "recall_episode", arguments: { episode_id: "ep_does_not_exist" } });
    await tracer.flush();
    const db = openProjectDb(root, { readonly: true });
    try {
      const rows = listToolCalls(db, { limit: 2 });
      expect(rows[0]!.tool).toBe("recall_episode");
      expect(rows[0]!.error).toBeTruthy();
      expect(rows[1]).toMatchObject({ tool: "search_project_memory", error: null, args: { query: "soft delete inventory", include_seen: true } });
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
    const down = new DaemonBridge({ kind: "engine", start: false, target: () => ({ pid: 1, host: "127.0.0.1", port: 9, token: "x".repeat(32), started_at: "" }), timeoutMs: 500 });
    const none = await buildSessionStartContext({ cwd: root }, { bridge: down, totalBudget: 300 });
    expect(none.additionalContext).toBe("");
    expect(none.error).toMatch(/not reachable/);
    const unregistered = await buildSessionStartContext({ cwd: tmp.path }, { bridge: bridge(), totalBudget: 300 });
    expect(unregistered.additionalContext).toBe("");
  });
});
