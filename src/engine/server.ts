/**
 * The memory engine's HTTP API (`sqrl engine`), on 127.0.0.1 behind the shared guard (token, no
 * Origin, local Host). Every query/body is parsed with the zod schemas of src/shared/api.ts (a bad
 * one → 400 naming the field); an unknown project → 404 naming the path.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ZodError, type z } from "zod";
import { methodsOf, type Route, type RouteName, ROUTES, routeAt } from "../shared/api.ts";
import { callLog, listMemories, memoryDetail, projectFiles, projectOverview } from "./retrieve/browse.ts";
import { type ConfigSource, processConfig } from "../shared/config.ts";
import type { ConfigValues } from "../shared/config-keys.ts";
import { ProjectNotRegisteredError, SqrlError } from "../shared/errors.ts";
import { errorResponse, errorToResponse, guardRequest, jsonResponse, queryToObject } from "../shared/http-guard.ts";
import { newToken } from "../shared/ids.ts";
import { log as rootLog } from "../shared/log.ts";
import { homePaths, projectPaths } from "../shared/paths.ts";
import { gitDirs } from "../shared/git.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { openProjectDb, openUserDb } from "../sql/open.ts";
import { VERSION } from "../version.ts";
import { EvalRuns, evalStatus } from "./eval-runs.ts";
import { embedderFromConfig } from "./llm/embeddings.ts";
import { llmNoteTaker } from "./retrieve/chain-of-note.ts";
import { llmUsageReport } from "./llm/usage-report.ts";
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

const log = rootLog.child({ service: "engine" });

export interface EngineServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Fixed token (tests); default a fresh random one. */
  token?: string;
  /** The process's config accessor (default: `processConfig()`). */
  config?: ConfigSource;
}

export interface EngineServer {
  port: number;
  token: string;
  stop(): Promise<void>;
}

function openOnce(pool: Map<string, Database>, root: string): Database {
  let db = pool.get(root);
  if (!db) pool.set(root, (db = openProjectDb(root)));
  return db;
}

/** Per-server state: open project databases, config (re-read when the file changes). */
class EngineState {
  private readonly dbs = new Map<string, Database>();
  /** Second connection per project for the tool-call trace: its writes leave the read connection's caches alone. */
  private readonly writers = new Map<string, Database>();
  private userDb: Database | undefined;
  readonly started = Date.now();
  /** `sqrl eval` runs started from the page. */
  readonly evals = new EvalRuns();

  constructor(private readonly source: ConfigSource) {}

  /** The process's configuration (re-read by the accessor when config.toml changes). */
  config(): ConfigValues {
    return this.source.get();
  }

  /** The registered project containing `projectId` (its root), or a 404 that names the path. */
  projectRoot(projectId: string): string {
    const abs = resolve(projectId);
    const root = projectForPath(abs, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(projectId);
    return root;
  }

  /** The project's read connection (its caches live as long as it does). */
  db(root: string): Database {
    return openOnce(this.dbs, root);
  }

  /** The project's connection for the trace. */
  writer(root: string): Database {
    return openOnce(this.writers, root);
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
    for (const db of [...this.dbs.values(), ...this.writers.values()]) db.close();
    this.dbs.clear();
    this.writers.clear();
    this.userDb?.close();
    this.userDb = undefined;
  }
}

/** Is `tree` a linked worktree of the repository at `root` (same git common directory)? Anything else is ignored. */
function isWorkTreeOf(tree: string, root: string): boolean {
  const dirs = gitDirs(tree);
  const own = gitDirs(root);
  return dirs !== null && own !== null && dirs.commonDir === own.commonDir;
}

/** The read handlers, by route name: each gets the parsed request and the project's context. */
const READS = {
  task_context: taskContext,
  search_memory: searchMemory,
  user_style: userStyleView,
  project_brief: projectBriefView,
  pitfalls: pitfallsView,
  timeline,
  recall,
} satisfies Partial<Record<RouteName, (ctx: RetrievalContext, q: never) => Promise<unknown>>>;

type Handler<R extends Route> = (input: z.infer<R["request"]>, state: EngineState) => Promise<z.infer<R["response"]>>;

function readHandler<N extends keyof typeof READS>(name: N): Handler<(typeof ROUTES)[N]> {
  const run = READS[name] as (ctx: RetrievalContext, q: unknown) => Promise<unknown>;
  return async (input, state) => {
    const q = input as { project_id: string; work_tree?: string };
    return run(await state.context(q.project_id, q.work_tree), input) as never;
  };
}

/** What the engine answers, per route of the shared table (`server` engine or both). */
const HANDLERS: { [N in RouteName]?: Handler<(typeof ROUTES)[N]> } = {
  health: async (_input, state) => ({
    ok: true,
    pid: process.pid,
    version: VERSION,
    uptime_s: Math.round((Date.now() - state.started) / 100) / 10,
  }),
  process_events: async (input, state) => {
    state.projectRoot(input.project_id);
    const { processEvents } = await import("./learn/process-events.ts");
    return processEvents(input, { config: state.config() });
  },
  task_context: readHandler("task_context"),
  search_memory: readHandler("search_memory"),
  user_style: readHandler("user_style"),
  project_brief: readHandler("project_brief"),
  pitfalls: readHandler("pitfalls"),
  timeline: readHandler("timeline"),
  recall: readHandler("recall"),
  // sqrl ui: browsing (reads) and corrections (writes, one transaction each)
  memories: async (input, state) => listMemories(await state.context(input.project_id), input),
  memory: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    return memoryDetail(state.db(root), root, input.memory_id, state.user());
  },
  overview: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const userDb = state.user();
    const nowMs = Date.now();
    return projectOverview(state.db(root), root, {
      nowMs,
      llm: llmUsageReport(state.config(), { nowMs, projects: listProjects() }),
      userId: state.config().user_id,
      ...(userDb ? { userDb } : {}),
    });
  },
  files: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    return projectFiles(state.db(root), root);
  },
  calls: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    return callLog(state.db(root), root, { limit: input.limit, days: input.days, nowMs: Date.now() });
  },
  memories_forget: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const { forgetProjectMemory } = await import("./learn/curate.ts");
    return forgetProjectMemory(state.db(root), root, input.memory_id, Date.now(), state.user());
  },
  memories_edit: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const { editMemory } = await import("./learn/curate.ts");
    return editMemory(state.db(root), { ...input, project_id: root }, Date.now(), state.user());
  },
  memories_pin: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const { pinMemory } = await import("./learn/curate.ts");
    return pinMemory(state.db(root), { ...input, project_id: root }, Date.now(), state.user());
  },
  memories_wrong: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const { markWrong } = await import("./learn/curate.ts");
    return markWrong(state.db(root), { ...input, project_id: root }, Date.now(), state.user());
  },
  eval: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    return evalStatus(state.db(root), root, state.evals);
  },
  eval_run: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const cfg = state.config();
    state.evals.start(state.db(root), root, {
      budget: input.budget ?? cfg["budgets.task_context"],
      counter: await loadTokenCounter(cfg["tokens.counter"]),
      userId: cfg.user_id,
      ...(input.sessions !== undefined ? { sessions: input.sessions } : {}),
    });
    return evalStatus(state.db(root), root, state.evals);
  },
  eval_forget_unused: async (input, state) => {
    const root = state.projectRoot(input.project_id);
    const { readLastEval } = await import("../shared/last-eval.ts");
    const stored = readLastEval(root);
    if (!stored)
      throw new SqrlError(
        "not_found",
        "No eval has run for this project: run `sqrl eval` (or the page's button) first.",
        {
          status: 404,
          exitCode: 1,
        },
      );
    const { forgetNeverNeeded } = await import("./learn/eval-forget.ts");
    return forgetNeverNeeded(state.db(root), root, stored, input.memory_ids, Date.now());
  },
  tool_calls: async (input, state) => {
    const { insertToolCall } = await import("../sql/tool-calls.ts");
    const { project_id, ...call } = input;
    insertToolCall(state.writer(state.projectRoot(project_id)), call);
    return { ok: true as const };
  },
};

async function jsonBody(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new SqrlError("bad_request", "body: not valid JSON", { status: 400, exitCode: 2 });
  }
}

/** One route's handler for one method: guard, parse (body or query string), answer, or map the error. */
function endpoint(r: Route, method: "GET" | "POST", handle: Handler<Route>, token: string, state: EngineState) {
  return async (req: Request): Promise<Response> => {
    const denied = guardRequest(req, token) ?? bodyTooLarge(req, ENGINE_MAX_BODY_BYTES);
    if (denied) return denied;
    const started = performance.now();
    try {
      const raw =
        method === "POST"
          ? await jsonBody(req)
          : queryToObject(new URL(req.url), r.query?.arrays ?? [], r.query?.numeric ?? []);
      const out = r.response.parse(await handle(r.request.parse(raw), state));
      log.debug(`${method} ${r.path} ${(performance.now() - started).toFixed(1)} ms`);
      return jsonResponse(out);
    } catch (err) {
      const clientError = err instanceof ZodError || (err instanceof SqrlError && err.status < 500);
      if (!clientError) log.error(`${method} ${r.path}: ${err instanceof Error ? err.message : String(err)}`);
      return errorToResponse(err);
    }
  };
}

/** `Bun.serve` routes for every engine route of the table; other paths and methods fall to `fallback`. */
function engineRoutes(
  token: string,
  state: EngineState,
): Record<string, Partial<Record<"GET" | "POST", (req: Request) => Promise<Response>>>> {
  const out: Record<string, Partial<Record<"GET" | "POST", (req: Request) => Promise<Response>>>> = {};
  for (const [name, r] of Object.entries(ROUTES) as Array<[RouteName, Route]>) {
    const handle = HANDLERS[name] as Handler<Route> | undefined;
    if (!handle) continue;
    out[r.path] = Object.fromEntries(methodsOf(r).map((m) => [m, endpoint(r, m, handle, token, state)]));
  }
  return out;
}

/** Unknown path → 404, known path with another method → 405 (after the guard, like every answer). */
function fallback(req: Request, token: string): Response {
  const denied = guardRequest(req, token);
  if (denied) return denied;
  const path = new URL(req.url).pathname;
  const r = routeAt(path);
  if (r && HANDLERS[(Object.keys(ROUTES) as RouteName[]).find((n) => ROUTES[n] === r)!]) {
    return errorResponse(405, "method_not_allowed", `${path} takes ${methodsOf(r).join(" or ")}.`);
  }
  return errorResponse(404, "not_found", `No route ${path}.`);
}

/** Start the engine API on 127.0.0.1. */
export async function startEngineServer(opts: EngineServerOptions = {}): Promise<EngineServer> {
  const token = opts.token ?? newToken();
  const state = new EngineState(opts.config ?? processConfig());
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    maxRequestBodySize: hardLimit(ENGINE_MAX_BODY_BYTES),
    routes: engineRoutes(token, state),
    fetch: (req) => fallback(req, token),
    error: (err) => errorToResponse(err),
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
