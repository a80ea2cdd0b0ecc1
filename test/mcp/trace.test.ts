/**
 * The MCP trace through the API (a real engine server in-process; the daemon forwards the same
 * route), session de-dup and the session-start hook's pieces.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { initProject } from "../../src/cli/init-project.ts";
import { startEngineServer } from "../../src/engine/server.ts";
import { DaemonBridge } from "../../src/mcp/daemon-bridge.ts";
import { SessionDedup } from "../../src/mcp/session-dedup.ts";
import { normalizeLine, parseHookInput, repeatsStyle, sessionStartOutput } from "../../src/mcp/session-start-hook.ts";
import { MAX_TRACED_ARG_CHARS, Tracer } from "../../src/mcp/trace.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { countToolCalls, listToolCalls } from "../../src/sql/tool-calls.ts";
import { tempDir } from "../helpers/sqrl.ts";

describe("trace: tool_calls in the project's data.db, sent through the API", () => {
  test("records every field; newest first; filter by tool; limit; long arguments clipped; the MCP side never opens SQLite", async () => {
    const tmp = tempDir("sqrl-trace-");
    const saved = process.env.SQRL_HOME;
    process.env.SQRL_HOME = join(tmp.path, "sqrl");
    const root = join(tmp.path, "repo");
    mkdirSync(root, { recursive: true });
    initProject(root);
    const engine = await startEngineServer();
    const bridge = new DaemonBridge({
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
    const tracer = new Tracer(bridge);
    try {
      await tracer.record(
        root,
        {
          tool: "get_task_context",
          args: { task_description: "a" },
          memoryIds: ["m1", "m2"],
          tokenEstimate: 120,
          latencyMs: 3.456,
          error: null,
        },
        "2025-01-01T00:00:01.000Z",
      );
      await tracer.record(
        root,
        {
          tool: "search_project_memory",
          args: { query: "b" },
          memoryIds: [],
          tokenEstimate: null,
          latencyMs: 1,
          error: "boom",
        },
        "2025-01-01T00:00:02.000Z",
      );
      await tracer.record(
        root,
        {
          tool: "get_task_context",
          args: { task_description: "c" },
          memoryIds: ["m3"],
          tokenEstimate: 40,
          latencyMs: 2,
          error: null,
        },
        "2025-01-01T00:00:03.000Z",
      );
      await tracer.record(
        root,
        {
          tool: "search_project_memory",
          args: { query: "q".repeat(100_000) },
          memoryIds: [],
          tokenEstimate: 5,
          latencyMs: 1,
          error: null,
        },
        "2025-01-01T00:00:00.000Z",
      );
      await tracer.close();
      const db = openProjectDb(root, { readonly: true });
      try {
        expect(countToolCalls(db)).toBe(4);
        const all = listToolCalls(db).slice(0, 3);
        expect(all.map((r) => r.args)).toEqual([{ task_description: "c" }, { query: "b" }, { task_description: "a" }]);
        expect(all[1]).toMatchObject({
          tool: "search_project_memory",
          error: "boom",
          token_estimate: null,
          memory_ids: [],
        });
        expect(all[2]).toMatchObject({ memory_ids: ["m1", "m2"], token_estimate: 120, latency_ms: 3.46 });
        expect(listToolCalls(db, { tool: "get_task_context" }).map((r) => r.ts)).toEqual([
          "2025-01-01T00:00:03.000Z",
          "2025-01-01T00:00:01.000Z",
        ]);
        expect(listToolCalls(db, { limit: 1 })).toHaveLength(1);
        const long = listToolCalls(db).at(-1)!.args.query as string;
        expect(long.length).toBeLessThan(MAX_TRACED_ARG_CHARS + 40);
        expect(long).toEndWith("(100000 characters)");
      } finally {
        db.close();
      }
      // The MCP face reaches memory only through the API: no module of src/mcp imports SQLite.
      const { importGraph } = await import("../../scripts/import-graph.ts");
      const graph = importGraph(join(import.meta.dir, "..", "..", "src"));
      const mcpFiles = graph.files.filter((f) => f.startsWith("mcp/"));
      for (const f of mcpFiles)
        expect(readFileSync(join(import.meta.dir, "..", "..", "src", f), "utf8")).not.toContain("bun:sqlite");
      expect(graph.edges.filter((e) => e.from.startsWith("mcp/") && e.to.startsWith("sql/"))).toEqual([]);
    } finally {
      await tracer.close();
      await engine.stop();
      if (saved === undefined) delete process.env.SQRL_HOME;
      else process.env.SQRL_HOME = saved;
      tmp.cleanup();
    }
  });
});

describe("session de-dup", () => {
  test("excludes what was delivered unless include_seen", () => {
    const d = new SessionDedup();
    expect(d.excludeFor(false)).toEqual([]);
    d.record(["a", "b"]);
    d.record(["b", "c"]);
    expect(d.excludeFor(undefined).sort()).toEqual(["a", "b", "c"]);
    expect(d.excludeFor(true)).toEqual([]);
  });
});

describe("session-start hook pieces", () => {
  test("brief lines repeating a style item are recognised after normalizing", () => {
    const style = ["Use pnpm, not npm", "Tests run with `bun test --bail`"].map(normalizeLine);
    expect(repeatsStyle("- **Use pnpm, not npm.**", style)).toBe(true);
    expect(repeatsStyle("- Package manager: use pnpm not npm (from lockfile)", style)).toBe(true);
    expect(repeatsStyle("- Framework: Hono on Bun", style)).toBe(false);
    expect(repeatsStyle("## Project", style)).toBe(false);
  });

  test("output shape, cap, and unreadable input", () => {
    const out = JSON.parse(sessionStartOutput("x".repeat(20_000)));
    expect(out.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(out.hookSpecificOutput.additionalContext.length).toBeLessThan(10_000);
    expect(parseHookInput("not json")).toEqual({});
    expect(parseHookInput(JSON.stringify({ cwd: "/x", session_id: "s", extra: 1 }))).toMatchObject({
      cwd: "/x",
      session_id: "s",
    });
  });
});
