/**
 * Stale facts end to end (issue 15): the compiled `sqrl mcp` driven by the MCP SDK client and the
 * SessionStart hook, over a real git repository whose code changes under its memories. A renamed
 * function is served under its new name; a deleted file's memories are held back from task context
 * and the hook and said to be held back by the pitfalls view.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { recordAnchors } from "../../src/engine/learn/apply/record-anchors.ts";
import { TaskContext } from "../../src/shared/api.ts";
import { ToolAnswer } from "../../src/mcp/tools/tool-answer.ts";
import { insertMemoryItem } from "../../src/sql/memory-items.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { makeHome, type DaemonHome } from "../daemon/harness.ts";
import { commitAll, git, initRepo, JWT_TS, writeFile } from "../engine/retrieve/git-repo.ts";
import { runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";

let home: DaemonHome;
let root: string;

const POOL_TS = "export function createPool(url: string) {\n  return { url, max: 10 };\n}\n";
const MEMORIES = [
  {
    id: "mem_jwt",
    type: "pitfall" as const,
    key: "jwt_missing_exp",
    tags: ["auth", "jwt"],
    file_paths: ["src/auth/jwt.ts"],
    content:
      "Tokens without `exp` made `isExpired` throw in src/auth/jwt.ts; a missing exp now means the token never expires.",
  },
  {
    id: "mem_pool",
    type: "project_fact" as const,
    key: "decision:db_pool",
    tags: ["decision", "database"],
    file_paths: ["src/db/pool.ts"],
    content:
      "Decision: database connections come from one shared pool made by `createPool` in src/db/pool.ts, never opened per request.",
  },
];

async function connect(cwd = root): Promise<Client> {
  const client = new Client({ name: "verify-e2e", version: "1" });
  await client.connect(
    new StdioClientTransport({ command: SQRL_BIN, args: ["mcp"], env: home.env, cwd, stderr: "pipe" }),
  );
  return client;
}

/** What the model receives from get_task_context (the compact answer: markdown, no ids). */
async function taskContextOf(task: string, cwd = root): Promise<ToolAnswer> {
  const client = await connect(cwd);
  try {
    const res = await client.callTool({
      name: "get_task_context",
      arguments: { task_description: task, include_seen: true },
    });
    expect(res.isError).toBeFalsy();
    return ToolAnswer.parse(res.structuredContent);
  } finally {
    await client.close();
  }
}

/** The engine's full answer (ids, reasons, verification) through the CLI, from a folder. */
function engineContext(task: string, cwd = root): TaskContext {
  const res = runSqrl(["context", task, "--json"], { env: home.env, cwd });
  expect(res.code).toBe(0);
  return TaskContext.parse(JSON.parse(res.stdout));
}

function hookContext(cwd = root): string {
  const res = runSqrl(["hook", "claude-session-start"], {
    env: home.env,
    input: JSON.stringify({ session_id: "s1", cwd, hook_event_name: "SessionStart", source: "startup" }),
  });
  expect(res.code).toBe(0);
  return (JSON.parse(res.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
    .additionalContext;
}

beforeAll(() => {
  home = makeHome();
  root = join(home.root, "repo");
  initRepo(root);
  writeFile(root, "src/auth/jwt.ts", JWT_TS);
  writeFile(root, "src/db/pool.ts", POOL_TS);
  commitAll(root, "init");
  expect(runSqrl(["init", root, "--yes"], { env: home.env }).code).toBe(0);
  const db = openProjectDb(root);
  try {
    const at = new Date(Date.now() - 86_400_000).toISOString();
    for (const m of MEMORIES) {
      insertMemoryItem(db, {
        ...m,
        project_id: root,
        user_id: null,
        scope: "project",
        importance: 0.9,
        created_at: at,
        updated_at: at,
        source_episode_id: null,
        source_event_ids: [],
        confidence: 0.9,
        evidence_episode_ids: [],
        decision: "ADD_NEW",
        extractor: "offline",
      });
    }
    recordAnchors(
      db,
      root,
      MEMORIES.map((m) => m.id),
      [],
      "extract",
      Date.now(),
    );
  } finally {
    db.close();
  }
});

afterAll(async () => {
  await home.cleanup();
});

describe("stale facts through sqrl mcp and the SessionStart hook", () => {
  test("verified at first: the status is in the engine's structured output and the reason", async () => {
    expect((await taskContextOf("isExpired throws for JWT tokens without exp")).markdown).toContain("isExpired");
    const m = engineContext("isExpired throws for JWT tokens without exp").selected_memories.find(
      (s) => s.memory_id === "mem_jwt",
    )!;
    expect(m.verification).toEqual({ status: "verified", reason: "what it cites is still in the code" });
    expect(m.reason).toContain("still there");
    expect(hookContext()).toContain("createPool");
  });

  test("a function renamed in a commit: served as moved, under its new name", async () => {
    writeFile(root, "src/auth/jwt.ts", JWT_TS.replace("isExpired", "tokenExpired"));
    commitAll(root, "rename isExpired to tokenExpired");
    const ctx = await taskContextOf("isExpired throws for JWT tokens without exp");
    expect(ctx.markdown).toContain("`tokenExpired`");
    expect(ctx.markdown).not.toContain("isExpired");
    const m = engineContext("isExpired throws for JWT tokens without exp").selected_memories.find(
      (s) => s.memory_id === "mem_jwt",
    )!;
    expect(m.verification?.status).toBe("moved");
    expect(m.content).toContain("`tokenExpired`");
  });

  test("a git worktree shares the repository's memories, checked against the worktree's own files", async () => {
    const tree = join(home.root, "repo-feature");
    git(root, "worktree", "add", "-q", "-b", "feature", tree);
    // The worktree is not registered: it is the same repository (same git common directory).
    const there = await taskContextOf(
      "isExpired throws for JWT tokens without exp; database pool createPool",
      join(tree, "src"),
    );
    expect(there.project).toBe("repo");
    expect(there.markdown).toContain("tokenExpired");
    expect(there.markdown).toContain("createPool");
    expect(hookContext(tree)).toContain("createPool");
    // Only the worktree loses the pool: it is held back there and still served in the main checkout.
    rmSync(join(tree, "src/db/pool.ts"));
    expect((await taskContextOf("database pool createPool", tree)).markdown).not.toContain("createPool");
    expect(hookContext(tree)).not.toContain("createPool");
    expect((await taskContextOf("database pool createPool")).markdown).toContain("createPool");
    expect(hookContext()).toContain("createPool");
  });

  test("files deleted: held back from task context, the hook and the pitfalls view", async () => {
    rmSync(join(root, "src/auth/jwt.ts"));
    rmSync(join(root, "src/db/pool.ts"));
    commitAll(root, "drop auth and pool");
    const ctx = await taskContextOf("isExpired throws for JWT tokens without exp; database pool createPool");
    expect(ctx.markdown).not.toContain("tokenExpired");
    expect(ctx.markdown).not.toContain("createPool");
    expect(engineContext("isExpired throws for JWT tokens without exp; database pool createPool").memory_ids).toEqual(
      [],
    );
    expect(hookContext()).not.toContain("createPool");
    const client = await connect();
    try {
      const res = await client.callTool({ name: "get_pitfalls_view", arguments: { include_seen: true } });
      const view = ToolAnswer.parse(res.structuredContent);
      expect(view.has_relevant_memory).toBe(false);
      expect(view.markdown).toContain("1 held back because the code they cite has changed");
    } finally {
      await client.close();
    }
  });

  test("sqrl doctor lists the stale items with their reasons (text and --json); sqrl status counts them", () => {
    const res = runSqrl(["doctor", root, "--json"], { env: home.env });
    expect(res.code).toBe(0);
    const [check] = JSON.parse(res.stdout) as Array<{
      ok: boolean;
      memory: { counts: Record<string, number>; stale: Array<{ memory_id: string; reason: string }> };
    }>;
    expect(check!.ok).toBe(true);
    expect(check!.memory.counts.stale).toBe(2);
    expect(check!.memory.stale.find((s) => s.memory_id === "mem_pool")?.reason).toBe("src/db/pool.ts no longer exists");
    const text = runSqrl(["doctor", root], { env: home.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`ok       ${root}`);
    expect(text.stdout).toContain("2 stale");
    expect(text.stdout).toContain("mem_jwt  [pitfall] jwt_missing_exp: src/auth/jwt.ts no longer exists");
    const status = runSqrl(["status", root, "--json"], { env: home.env });
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { checks: Record<string, number> }).checks).toMatchObject({
      checked: 2,
      of: 2,
      stale: 2,
      verified: 0,
      decayed: 0,
    });
    expect(runSqrl(["status", root], { env: home.env }).stdout).toContain(
      "Checked   against the code: 0 verified, 0 moved, 2 stale, 0 unverifiable; 0 decayed for disuse",
    );
    const show = runSqrl(["show", "mem_pool", "--project", root], { env: home.env });
    expect(show.stdout).toContain("checked against the code: stale (src/db/pool.ts no longer exists)");
  });
});
