/**
 * Everything under /ui: the page (one HTML shell for every screen, its assets) and the page's own
 * JSON API under /ui/api/, which maps each call to one engine call (reads and writes alike, so the
 * engine stays the only writer). Checks, in order: a local Host; the login (a POST of the one-time
 * code from the login file, answered with the page, its session cookie and its page key); the session
 * cookie (401 page or JSON without it); for the API also the page key header (the cookie reaches any
 * 127.0.0.1 port, the key does not); no foreign Origin anywhere, and for every change an Origin that
 * is this page's own.
 */
import type { DaemonStatus } from "../../shared/api.ts";
import { userHome } from "../../shared/paths.ts";
import { listProjects } from "../../shared/projects.ts";
import type { RuntimeInfo } from "../../shared/runtime-files.ts";
import { VERSION } from "../../version.ts";
import { ASSET_PREFIX, pageBundle } from "./assets.ts";
import { ownOrigins, type UiAuth } from "./auth.ts";
import type { LoginFiles } from "./login-file.ts";
import { messagePage } from "./message-page.ts";

/**
 * The MCP tools' answers for the "What the agent sees" screen, from the MCP face's own code
 * (src/mcp/agent-view.ts), which the entry point passes in: the daemon never imports src/mcp.
 */
export type AgentView = (
  engine: RuntimeInfo,
  project: string,
  ask: { task: string; files: string[]; budget?: number },
) => Promise<{ task_context: unknown; views: unknown; session_start: unknown }>;

export interface UiDeps {
  auth: UiAuth;
  loginFiles: LoginFiles;
  port: () => number;
  startedAt: number;
  status: () => DaemonStatus;
  engine: (timeoutMs: number) => Promise<RuntimeInfo | undefined>;
  agentView?: AgentView;
}

const ENGINE_WAIT_MS = 10_000;
const ENGINE_TIMEOUT_MS = 60_000;

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "application/json" },
  });
}

function jsonError(status: number, code: string, error: string): Response {
  return json({ error, code }, status);
}

/** The script-less message pages style themselves inline. */
const MESSAGE_CSP = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
};

function html(body: string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/html;charset=utf-8", ...extra },
  });
}

/** Screens of the page; any other /ui path gets the shell with status 404 (the page shows its 404 screen). */
const SCREENS = [
  /^\/ui\/?$/,
  /^\/ui\/memories\/?$/,
  /^\/ui\/memories\/[^/]+$/,
  /^\/ui\/agent\/?$/,
  /^\/ui\/calls\/?$/,
  /^\/ui\/episodes\/[^/]+$/,
];

export async function handleUi(req: Request, deps: UiDeps): Promise<Response> {
  const url = new URL(req.url);
  const path = url.pathname;
  const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
  if (host !== "127.0.0.1" && host !== "localhost")
    return jsonError(403, "forbidden_host", "This Host is refused; open the page at 127.0.0.1.");
  const origin = req.headers.get("origin");
  const own = ownOrigins(deps.port());
  const isPage = !path.startsWith("/ui/api/") && !path.startsWith(ASSET_PREFIX);
  // The login file is a local file: its form posts with `Origin: null`.
  const login = req.method === "POST" && isPage;
  if (origin !== null && !own.includes(origin) && !(login && origin === "null"))
    return jsonError(
      403,
      "forbidden_origin",
      "Requests from another origin are refused: only the sqrl page may call this API.",
    );
  const changes = req.method !== "GET" && req.method !== "HEAD";
  if (changes && origin === null)
    return jsonError(403, "forbidden_origin", "A change needs the page's own Origin header; use the sqrl ui page.");

  if (login) {
    const code = await loginCode(req);
    const granted = code ? deps.auth.redeem(code) : undefined;
    if (!code || !granted)
      return html(
        messagePage(
          "This login link has expired or was already used",
          "Each login from <code>sqrl ui</code> works once, for 10 minutes. Run <code>sqrl ui</code> again for a fresh one.",
        ),
        401,
        MESSAGE_CSP,
      );
    deps.loginFiles.spent(code);
    // The page comes back at once with the cookie and, inside it, the page key (its script moves the key
    // into this origin's session storage and turns this POST into a plain address with history.replaceState).
    const bundle = await pageBundle();
    return html(withPageKey(bundle.html, granted.pageKey), SCREENS.some((r) => r.test(path)) ? 200 : 404, {
      "set-cookie": deps.auth.sessionCookie(granted.session),
    });
  }

  if (path.startsWith("/ui/api/") ? !deps.auth.hasPageKey(req) : !deps.auth.hasSession(req)) {
    if (path.startsWith("/ui/api/"))
      return jsonError(401, "unauthorized", "No sqrl ui session: open the page with `sqrl ui`.");
    return html(
      messagePage(
        "Open this page with sqrl ui",
        "The sqrl page needs a login: run <code>sqrl ui</code> in a terminal and it opens one (or prints the file to open).",
      ),
      401,
      MESSAGE_CSP,
    );
  }

  if (path.startsWith(ASSET_PREFIX)) {
    const asset = (await pageBundle()).assets.get(path.slice(ASSET_PREFIX.length));
    if (!asset) return jsonError(404, "not_found", `No asset ${path}.`);
    return new Response(asset.body, {
      headers: {
        ...SECURITY_HEADERS,
        "content-type": asset.type,
        etag: asset.etag,
        "cache-control": "private, max-age=31536000, immutable",
      },
    });
  }
  if (path.startsWith("/ui/api/")) return api(req, url, deps);
  if (req.method !== "GET") return jsonError(405, "method_not_allowed", `${req.method} is not allowed on ${path}.`);
  const bundle = await pageBundle();
  return html(bundle.html, SCREENS.some((r) => r.test(path)) ? 200 : 404);
}

/** The code of a login post (`code=…`, form-encoded); undefined when there is none. */
async function loginCode(req: Request): Promise<string | undefined> {
  const type = req.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return undefined;
  const code = new URLSearchParams(await req.text()).get("code");
  return code && code.length <= 200 ? code : undefined;
}

/** The page key goes into the page itself (never a cookie or a URL), where only this origin's script reads it. */
function withPageKey(page: string, key: string): string {
  return page.replace("<head>", `<head><meta name="sqrl-page-key" content="${key}">`);
}

// ---- the page's API ------------------------------------------------------------------------------

interface EngineCall {
  method?: "GET" | "POST";
  query?: Record<string, string | number | string[] | undefined>;
  body?: unknown;
}

/** One call to the engine; its answer (or error) is passed back with its status. */
async function engine(deps: UiDeps, path: string, call: EngineCall = {}): Promise<Response> {
  const info = await deps.engine(ENGINE_WAIT_MS);
  if (!info)
    return jsonError(
      503,
      "engine_unavailable",
      "The memory engine is not running right now (starting or restarting). Retry in a few seconds.",
    );
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(call.query ?? {})) {
    if (v === undefined || v === "") continue;
    if (Array.isArray(v)) for (const x of v) search.append(k, x);
    else search.set(k, String(v));
  }
  try {
    const res = await fetch(`http://127.0.0.1:${info.port}${path}${search.size > 0 ? `?${search}` : ""}`, {
      method: call.method ?? "GET",
      headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
    });
    return new Response(await res.arrayBuffer(), {
      status: res.status,
      headers: { ...SECURITY_HEADERS, "content-type": "application/json" },
    });
  } catch (err) {
    return jsonError(
      503,
      "engine_unavailable",
      `The memory engine did not answer (${(err as Error).message}). Retry in a few seconds.`,
    );
  }
}

async function engineJson<T>(
  deps: UiDeps,
  path: string,
  call: EngineCall = {},
): Promise<{ ok: true; value: T } | { ok: false; res: Response }> {
  const res = await engine(deps, path, call);
  if (!res.ok) return { ok: false, res };
  return { ok: true, value: (await res.json()) as T };
}

async function readBody(req: Request): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (text.trim() === "") return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const ACTIONS = new Set(["forget", "edit", "pin", "wrong"]);

async function api(req: Request, url: URL, deps: UiDeps): Promise<Response> {
  let parts: string[];
  try {
    parts = url.pathname.slice("/ui/api/".length).split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return jsonError(400, "bad_request", "The address has a broken %-escape.");
  }
  const p = url.searchParams;
  const project = p.get("project") ?? undefined;
  const get = req.method === "GET";
  const needProject = () =>
    jsonError(400, "bad_request", "field `project`: the project folder is required (pick one on the Overview).");
  const [head, id, action] = parts;

  if (head === "health" && get) return json({ ok: true, pid: process.pid, version: VERSION });
  if (head === "projects" && get) {
    const status = deps.status();
    return json({
      version: VERSION,
      home: userHome(),
      daemon: { pid: status.pid, uptime_s: status.uptime_s, last_error: status.last_error },
      engine: status.engine,
      sources: status.sources,
      projects: listProjects().map((root) => ({
        project_id: root,
        ...status.projects.find((s) => s.project_id === root),
      })),
    });
  }
  if (!project) return needProject();
  if (head === "overview" && get) return engine(deps, "/overview", { query: { project_id: project } });
  if (head === "memories" && get && id === undefined) {
    return engine(deps, "/memories", {
      query: {
        project_id: project,
        types: p.getAll("type"),
        scope: p.get("scope") ?? undefined,
        status: p.get("status") ?? undefined,
        q: p.get("q") ?? undefined,
        offset: p.get("offset") ?? undefined,
        limit: p.get("limit") ?? undefined,
      },
    });
  }
  if (head === "memories" && get && id !== undefined && action === undefined)
    return engine(deps, "/memory", { query: { project_id: project, memory_id: id } });
  if (head === "memories" && req.method === "POST" && id !== undefined && action !== undefined && ACTIONS.has(action)) {
    const body = await readBody(req);
    return engine(deps, `/memories/${action}`, {
      method: "POST",
      body: { ...body, project_id: project, memory_id: id },
    });
  }
  if (head === "files" && get) return engine(deps, "/files", { query: { project_id: project } });
  if (head === "calls" && get)
    return engine(deps, "/calls", {
      query: { project_id: project, limit: p.get("limit") ?? undefined, days: p.get("days") ?? undefined },
    });
  if (head === "timeline" && get)
    return engine(deps, "/timeline", {
      query: { project_id: project, limit: p.get("limit") ?? "50", context_budget_tokens: 100_000 },
    });
  if (head === "episodes" && get && id !== undefined)
    return engine(deps, "/recall", { query: { project_id: project, episode_id: id, context_budget_tokens: 100_000 } });
  if (head === "agent" && req.method === "POST") return agentView(deps, project, await readBody(req));
  // The last `sqrl eval` (read), a run of it, and forgetting what it found never needed (writes, in the engine).
  if (head === "eval" && get && id === undefined) return engine(deps, "/eval", { query: { project_id: project } });
  if (head === "eval" && req.method === "POST" && (id === "run" || id === "forget_unused") && action === undefined)
    return engine(deps, `/eval/${id}`, { method: "POST", body: { ...(await readBody(req)), project_id: project } });
  return jsonError(404, "not_found", `No page API ${req.method} ${url.pathname}.`);
}

/**
 * "What the agent sees": the MCP tools' own answers (get_task_context for a task, files and budget,
 * the three views, the SessionStart hook's text), computed by the MCP face's code that the entry point
 * hands in as `deps.agentView` (so the page shows exactly what a host forwards to the model, and the
 * daemon imports nothing of src/mcp), plus the engine's selection behind the task context (ids and
 * reasons, for links).
 */
async function agentView(deps: UiDeps, project: string, body: Record<string, unknown>): Promise<Response> {
  const task = typeof body.task === "string" ? body.task.trim() : "";
  const files = Array.isArray(body.files)
    ? body.files.filter((f): f is string => typeof f === "string" && f.trim() !== "").map((f) => f.trim())
    : [];
  const budget = typeof body.budget === "number" && Number.isInteger(body.budget) ? body.budget : undefined;
  if (!deps.agentView)
    return jsonError(
      503,
      "not_supported",
      "This daemon was started without the MCP tools' code: restart it with `sqrl daemon restart`.",
    );
  const info = await deps.engine(ENGINE_WAIT_MS);
  if (!info)
    return jsonError(
      503,
      "engine_unavailable",
      "The memory engine is not running right now (starting or restarting). Retry in a few seconds.",
    );
  const answers = await deps.agentView(info, project, { task, files, ...(budget ? { budget } : {}) });
  let selected: unknown = null;
  if (task) {
    const engineAnswer = await engineJson<{ selected_memories: unknown }>(deps, "/task_context", {
      method: "POST",
      body: {
        project_id: project,
        task_description: task,
        active_file_paths: files,
        ...(budget ? { context_budget_tokens: budget } : {}),
      },
    });
    if (engineAnswer.ok) selected = engineAnswer.value.selected_memories;
  }
  return json({
    task_context: answers.task_context,
    selected_memories: selected,
    views: answers.views,
    session_start: answers.session_start,
  });
}
