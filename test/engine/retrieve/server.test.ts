import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineServer, type EngineServer } from "../../../src/engine/server.ts";
import {
  ApiError,
  EpisodeRecall,
  Health,
  PitfallsView,
  ProcessEventsResponse,
  ProjectBriefView,
  SearchResponse,
  TaskContext,
  Timeline,
  UserStyleView,
} from "../../../src/shared/api.ts";
import { addProject } from "../../../src/shared/projects.ts";
import { addEpisode, addItem, tempProject } from "./helpers.ts";

let home: string;
let savedHome: string | undefined;
let server: EngineServer;
let proj: ReturnType<typeof tempProject>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "sqrl-engine-home-"));
  savedHome = process.env.SQRL_HOME;
  process.env.SQRL_HOME = home;
  proj = tempProject();
  addProject(proj.root);
  const now = Date.now();
  addItem(
    proj.db,
    proj.root,
    {
      type: "pitfall",
      key: "exp",
      content: "JWT exp is in seconds.",
      importance: 0.8,
      file_paths: ["src/auth/jwt.ts"],
    },
    now,
  );
  addItem(proj.db, proj.root, { type: "user_style", key: "pm", content: "Uses pnpm.", importance: 0.9 }, now);
  addItem(proj.db, proj.root, { type: "project_fact", key: "fw", content: "Framework: Hono.", importance: 0.9 }, now);
  addEpisode(
    proj.db,
    proj.root,
    {
      id: "ep_1",
      days_ago: 1,
      summary: "Fixed JWT exp.",
      events: [{ type: "user_message", content: { text: "fix jwt exp" }, at: 0 }],
    },
    now,
  );
  server = await startEngineServer({ token: "t".repeat(32) });
});

afterAll(async () => {
  await server.stop();
  proj.cleanup();
  if (savedHome === undefined) delete process.env.SQRL_HOME;
  else process.env.SQRL_HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

async function call(
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? server.token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
  });
  return { status: res.status, json: await res.json() };
}

function qs(o: Record<string, string | number | string[]>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) for (const x of Array.isArray(v) ? v : [String(v)]) params.append(k, x);
  return params.toString();
}

describe("engine HTTP API", () => {
  test("401 without or with a wrong token; 403 with an Origin header", async () => {
    expect((await call("/health", { token: null })).status).toBe(401);
    expect((await call("/health", { token: "wrong" })).status).toBe(401);
    expect((await call("/health", { headers: { origin: "http://evil.example" } })).status).toBe(403);
    const ok = await call("/health");
    expect(ok.status).toBe(200);
    expect(Health.parse(ok.json).ok).toBe(true);
  });

  test("every read route answers with its schema", async () => {
    const p = proj.root;
    const tc = await call("/task_context", {
      method: "POST",
      body: {
        project_id: p,
        task_description: "JWT exp bug in auth",
        active_file_paths: ["src/auth/jwt.ts"],
        context_budget_tokens: 300,
      },
    });
    expect(tc.status).toBe(200);
    expect(TaskContext.parse(tc.json).selected_memories[0]!.key).toBe("exp");
    const search = await call(
      `/search_memory?${qs({ project_id: p, query: "jwt", top_k: 3, "types[]": ["pitfall", "project_fact"] })}`,
    );
    expect(SearchResponse.parse(search.json).results.map((r) => r.key)).toEqual(["exp"]);
    expect(
      UserStyleView.parse((await call(`/views/user_style?${qs({ project_id: p, mode: "full" })}`)).json).items,
    ).toHaveLength(1);
    expect(
      ProjectBriefView.parse(
        (await call(`/views/project_brief?${qs({ project_id: p, context_budget_tokens: 100 })}`)).json,
      ).key_facts,
    ).toEqual(["Framework: Hono."]);
    expect(
      PitfallsView.parse(
        (await call(`/views/pitfalls?${qs({ project_id: p, scope_paths: "src/auth/jwt.ts,src/x.ts" })}`)).json,
      ).items,
    ).toHaveLength(1);
    expect(Timeline.parse((await call(`/timeline?${qs({ project_id: p, limit: 5 })}`)).json).episodes).toHaveLength(1);
    expect(
      EpisodeRecall.parse((await call(`/recall?${qs({ project_id: p, episode_id: "ep_1" })}`)).json).events,
    ).toHaveLength(1);
  });

  test("a path inside the project resolves to the project", async () => {
    const r = await call(`/views/pitfalls?${qs({ project_id: join(proj.root, "src", "auth") })}`);
    expect(r.status).toBe(200);
    expect(r.json.project_id).toBe(proj.root);
  });

  test("400 names the bad field", async () => {
    const noTask = await call("/task_context", { method: "POST", body: { project_id: proj.root } });
    expect(noTask.status).toBe(400);
    expect(ApiError.parse(noTask.json).error).toContain("task_description");
    const badBudget = await call(
      `/search_memory?${qs({ project_id: proj.root, query: "x", context_budget_tokens: "lots" })}`,
    );
    expect(badBudget.status).toBe(400);
    expect(badBudget.json.error).toContain("context_budget_tokens");
    const badType = await call(`/search_memory?${qs({ project_id: proj.root, query: "x", types: "bogus" })}`);
    expect(badType.json.error).toContain("types");
    const badMode = await call(`/views/user_style?${qs({ project_id: proj.root, mode: "huge" })}`);
    expect(badMode.status).toBe(400);
    expect(badMode.json.error).toContain("mode");
    const notJson = await call("/task_context", { method: "POST", body: "{nope" });
    expect(notJson.status).toBe(400);
    const badEvents = await call("/process_events", {
      method: "POST",
      body: { project_id: proj.root, user_id: "alice", events: [{ id: "x" }] },
    });
    expect(badEvents.status).toBe(400);
    expect(badEvents.json.error).toContain("events.0");
  });

  test("404 names an unknown project and an unknown episode", async () => {
    for (const r of [
      await call("/task_context", { method: "POST", body: { project_id: "/nowhere/repo", task_description: "x" } }),
      await call(`/timeline?${qs({ project_id: "/nowhere/repo" })}`),
      await call("/process_events", {
        method: "POST",
        body: { project_id: "/nowhere/repo", user_id: "alice", events: [] },
      }),
    ]) {
      expect(r.status).toBe(404);
      expect(r.json.error).toContain("/nowhere/repo");
    }
    const ep = await call(`/recall?${qs({ project_id: proj.root, episode_id: "ep_missing" })}`);
    expect(ep.status).toBe(404);
    expect(ep.json.error).toContain("ep_missing");
    expect((await call("/nope")).status).toBe(404);
    expect((await call("/task_context")).status).toBe(405);
  });

  test("POST /process_events runs the engine's processing for a registered project", async () => {
    const r = await call("/process_events", {
      method: "POST",
      body: { project_id: proj.root, user_id: "alice", events: [] },
    });
    expect(r.status).toBe(200);
    expect(ProcessEventsResponse.parse(r.json)).toEqual({ episode_ids: [], memory_item_ids: [] });
  });
});
