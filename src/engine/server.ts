import type { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ZodError, type z } from "zod";
import {
  CallLogQuery,
  EditRequest,
  ForgetRequest,
  Health,
  MemoryDetailQuery,
  MemoryListQuery,
  PinRequest,
  ProcessEventsRequest,
  ProjectQuery,
  WrongRequest,
  RecallQuery,
  SearchQuery,
  TaskContextRequest,
  TimelineQuery,
  ViewQuery,
  type ViewName,
} from "../shared/api.ts";
import { callLog, listMemories, memoryDetail, projectFiles, projectOverview } from "./retrieve/browse.ts";
import { loadConfig } from "../shared/config.ts";
import type { ConfigValues } from "../shared/config-keys.ts";
import { ProjectNotRegisteredError, SqrlError } from "../shared/errors.ts";
import { errorResponse, errorToResponse, guardRequest, jsonResponse, queryToObject } from "../shared/http-guard.ts";
import { newToken } from "../shared/ids.ts";
import { log } from "../shared/log.ts";
import { homePaths, projectPaths } from "../shared/paths.ts";
import { gitDirs } from "../shared/git.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { openProjectDb, openUserDb } from "../sql/open.ts";
import { VERSION } from "../version.ts";
import { embedderFromConfig } from "./llm/embeddings.ts";
import { llmNoteTaker } from "./retrieve/chain-of-note.ts";
import { recall } from "./retrieve/recall.ts";
import { retrievalContext, type RetrievalContext } from "./retrieve/retrieval-context.ts";
import { searchMemory } from "./retrieve/search.ts";
import { taskContext } from "./retrieve/task-context.ts";
import { bodyTooLarge, ENGINE_MAX_BODY_BYTES, hardLimit } from "../shared/body-limit.ts";
import { timeline } from "./retrieve/timeline.ts";
import { loadTokenCounter } from "../shared/tokens.ts";
import { pitfallsView } from "./retrieve/views/pitfalls.ts";
import { projectBriefView } from "./retrieve/views/project-brief.ts";
import { userStyleView } from "./retrieve/views/user-style.ts";

/**
 * The memory engine's HTTP API (`sqrl engine`), on 127.0.0.1 behind the shared guard (token, no
 * Origin, local Host). Every query/body is parsed with the zod schemas of src/shared/api.ts (a bad
 * one → 400 naming the field); an unknown project → 404 naming the path.
 */
export interface EngineServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Fixed token (tests); default a fresh random one. */
  token?: string;
}

export interface EngineServer {
  port: number;
  token: string;
  stop(): Promise<void>;
}

const VIEW_ARRAYS = ["scope_paths", "exclude_memory_ids"] as const;
const SEARCH_ARRAYS = ["types", "scope_paths", "exclude_memory_ids"] as const;

/** Per-server state: open project databases, config (re-read when the file changes). */
class EngineState {
  private readonly dbs = new Map<string, Database>();
  private userDb: Database | undefined;
  private cfg: { mtimeMs: number; values: ConfigValues } | undefined;
  readonly started = Date.now();

  config(): ConfigValues {
    const path = homePaths.config();
    const mtimeMs = existsSync(path) ? statSync(path).mtimeMs : 0;
    if (!this.cfg || this.cfg.mtimeMs !== mtimeMs) this.cfg = { mtimeMs, values: loadConfig(path) };
    return this.cfg.values;
  }

  /** The registered project containing `projectId` (its root), or a 404 that names the path. */
  projectRoot(projectId: string): string {
    const abs = resolve(projectId);
    const root = projectForPath(abs, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(projectId);
    return root;
  }

  db(root: string): Database {
    let db = this.dbs.get(root);
    if (!db) {
      db = openProjectDb(root);
      this.dbs.set(root, db);
    }
    return db;
  }

  user(): Database | undefined {
    if (!this.userDb && existsSync(homePaths.userDb())) this.userDb = openUserDb();
    return this.userDb;
  }

  async context(projectId: string, workTree?: string): Promise<RetrievalContext> {
    const cfg = this.config();
    const root = this.projectRoot(projectId);
    const tree = workTree && isWorkTreeOf(workTree, root) ? workTree : undefined;
    const embedder = embedderFromConfig(cfg);
    const noteTaker = await llmNoteTaker(cfg);
    const userDb = this.user();
    return retrievalContext(this.db(root), root, {
      userId: cfg.user_id,
      counter: await loadTokenCounter(cfg["tokens.counter"]),
      nowMs: Date.now(),
      budgets: { task_context: cfg["budgets.task_context"], view: cfg["budgets.view"], search: cfg["budgets.search"] },
      ...(userDb ? { userDb } : {}),
      ...(embedder ? { embedder } : {}),
      ...(noteTaker ? { noteTaker } : {}),
      ...(tree ? { workTree: tree } : {}),
    });
  }

  close(): void {
    for (const db of this.dbs.values()) db.close();
    this.dbs.clear();
    this.userDb?.close();
    this.userDb = undefined;
  }
}

async function jsonBody(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new SqrlError("bad_request", "body: not valid JSON", { status: 400, exitCode: 2 });
  }
}

function parseQuery<T extends z.ZodType>(schema: T, url: URL, arrays: readonly string[], numeric: readonly string[]): z.infer<T> {
  return schema.parse(queryToObject(url, arrays, numeric));
}

const VIEWS: Record<ViewName, (ctx: RetrievalContext, q: ViewQuery) => Promise<unknown>> = {
  user_style: userStyleView,
  project_brief: projectBriefView,
  pitfalls: pitfallsView,
};

type Handler = (req: Request, url: URL, state: EngineState) => Promise<unknown>;

/** Is `tree` a linked worktree of the repository at `root` (same git common directory)? Anything else is ignored. */
function isWorkTreeOf(tree: string, root: string): boolean {
  const dirs = gitDirs(tree);
  const own = gitDirs(root);
  return dirs !== null && own !== null && dirs.commonDir === own.commonDir;
}

const ROUTES: Record<string, { method: "GET" | "POST"; handle: Handler }> = {
  "/health": {
    method: "GET",
    handle: async (_req, _url, state) => Health.parse({ ok: true, pid: process.pid, version: VERSION, uptime_s: Math.round((Date.now() - state.started) / 100) / 10 }),
  },
  "/process_events": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = ProcessEventsRequest.parse(await jsonBody(req));
      state.projectRoot(body.project_id);
      const { processEvents } = await import("./learn/process-events.ts");
      return processEvents(body);
    },
  },
  "/task_context": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = TaskContextRequest.parse(await jsonBody(req));
      return taskContext(await state.context(body.project_id, body.work_tree), body);
    },
  },
  "/search_memory": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(SearchQuery, url, SEARCH_ARRAYS, ["top_k", "context_budget_tokens"]);
      return searchMemory(await state.context(q.project_id, q.work_tree), q);
    },
  },
  "/timeline": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(TimelineQuery, url, [], ["limit", "context_budget_tokens"]);
      return timeline(await state.context(q.project_id), q);
    },
  },
  "/recall": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(RecallQuery, url, [], ["context_budget_tokens"]);
      return recall(await state.context(q.project_id), q);
    },
  },
  // ---- sqrl ui: browsing (reads) and corrections (writes, one transaction each) ----
  "/memories": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(MemoryListQuery, url, ["types"], ["offset", "limit"]);
      return listMemories(await state.context(q.project_id), q);
    },
  },
  "/memory": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(MemoryDetailQuery, url, [], []);
      const root = state.projectRoot(q.project_id);
      return memoryDetail(state.db(root), root, q.memory_id, state.user());
    },
  },
  "/overview": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(ProjectQuery, url, [], []);
      const root = state.projectRoot(q.project_id);
      const userDb = state.user();
      return projectOverview(state.db(root), root, { nowMs: Date.now(), dailyCap: state.config()["llm.daily_token_cap"], userId: state.config().user_id, ...(userDb ? { userDb } : {}) });
    },
  },
  "/files": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(ProjectQuery, url, [], []);
      const root = state.projectRoot(q.project_id);
      return projectFiles(state.db(root), root);
    },
  },
  "/calls": {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(CallLogQuery, url, [], ["limit", "days"]);
      const root = state.projectRoot(q.project_id);
      return callLog(state.db(root), root, { limit: q.limit, days: q.days, nowMs: Date.now() });
    },
  },
  "/memories/forget": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = ForgetRequest.parse(await jsonBody(req));
      const root = state.projectRoot(body.project_id);
      const { forgetProjectMemory } = await import("./learn/curate.ts");
      return forgetProjectMemory(state.db(root), root, body.memory_id, Date.now(), state.user());
    },
  },
  "/memories/edit": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = EditRequest.parse(await jsonBody(req));
      const root = state.projectRoot(body.project_id);
      const { editMemory } = await import("./learn/curate.ts");
      return editMemory(state.db(root), { ...body, project_id: root }, Date.now(), state.user());
    },
  },
  "/memories/pin": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = PinRequest.parse(await jsonBody(req));
      const root = state.projectRoot(body.project_id);
      const { pinMemory } = await import("./learn/curate.ts");
      return pinMemory(state.db(root), { ...body, project_id: root }, Date.now(), state.user());
    },
  },
  "/memories/wrong": {
    method: "POST",
    handle: async (req, _url, state) => {
      const body = WrongRequest.parse(await jsonBody(req));
      const root = state.projectRoot(body.project_id);
      const { markWrong } = await import("./learn/curate.ts");
      return markWrong(state.db(root), { ...body, project_id: root }, Date.now(), state.user());
    },
  },
};
for (const name of Object.keys(VIEWS) as ViewName[]) {
  ROUTES[`/views/${name}`] = {
    method: "GET",
    handle: async (_req, url, state) => {
      const q = parseQuery(ViewQuery, url, VIEW_ARRAYS, ["context_budget_tokens"]);
      return VIEWS[name](await state.context(q.project_id, q.work_tree), q);
    },
  };
}

async function handle(req: Request, token: string, state: EngineState): Promise<Response> {
  const denied = guardRequest(req, token);
  if (denied) return denied;
  const url = new URL(req.url);
  const route = ROUTES[url.pathname];
  if (!route) return errorResponse(404, "not_found", `No route ${url.pathname}. Routes: ${Object.keys(ROUTES).join(", ")}.`);
  if (req.method !== route.method) return errorResponse(405, "method_not_allowed", `${url.pathname} takes ${route.method}.`);
  const started = performance.now();
  try {
    const out = await route.handle(req, url, state);
    log.debug(`${req.method} ${url.pathname} ${(performance.now() - started).toFixed(1)} ms`);
    return jsonResponse(out);
  } catch (err) {
    const clientError = err instanceof ZodError || (err instanceof SqrlError && err.status < 500);
    if (!clientError) log.error(`${req.method} ${url.pathname}: ${err instanceof Error ? err.message : String(err)}`);
    return errorToResponse(err);
  }
}

/** Start the engine API on 127.0.0.1. */
export async function startEngineServer(opts: EngineServerOptions = {}): Promise<EngineServer> {
  const token = opts.token ?? newToken();
  const state = new EngineState();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    maxRequestBodySize: hardLimit(ENGINE_MAX_BODY_BYTES),
    fetch: (req) => bodyTooLarge(req, ENGINE_MAX_BODY_BYTES) ?? handle(req, token, state),
  });
  return {
    port: server.port ?? 0,
    token,
    async stop() {
      await server.stop(true);
      state.close();
    },
  };
}
