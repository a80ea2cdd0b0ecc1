/**
 * The daemon's local API on 127.0.0.1 (random port): `/health`, `/status`, `/ui_login_code` (a
 * one-time code for `sqrl ui`), and the engine's routes of the shared table (src/shared/api.ts
 * `ROUTES`) forwarded unchanged; the `sqrl ui` page under /ui/ (src/daemon/ui/routes.ts).
 */
import { bodyTooLarge, DAEMON_MAX_BODY_BYTES, hardLimit } from "../shared/body-limit.ts";
import type { Server } from "bun";
import {
  type AnyRoute,
  DaemonStatus,
  forwardedRoutes,
  type Health,
  methodsOf,
  ROUTES,
  routeAt,
} from "../shared/api.ts";
import {
  badAddress,
  errorResponse,
  errorToResponse,
  guardRequest,
  isExpectedFailure,
  jsonResponse,
  requestUrl,
} from "../shared/http-guard.ts";
import { newToken } from "../shared/ids.ts";
import { log as rootLog } from "../shared/log.ts";
import { sqrlHome } from "../shared/paths.ts";
import type { RuntimeInfo } from "../shared/runtime-files.ts";
import { LOGIN_CODE_TTL_MS, UiAuth } from "./ui/auth.ts";
import { LoginFiles } from "./ui/login-file.ts";
import type { AgentView } from "./ui/routes.ts";
import { VERSION } from "../version.ts";

const log = rootLog.child({ service: "api" });

export interface DaemonServerOptions {
  /** Fixed token (tests); default: a fresh random one. */
  token?: string;
  port?: number;
  startedAt: number;
  status: () => DaemonStatus;
  /** The engine to forward to, waiting up to `timeoutMs` while it (re)starts. */
  engine: (timeoutMs: number) => Promise<RuntimeInfo | undefined>;
  /** The MCP tools' answers for the page's "What the agent sees" (given by the entry point). */
  agentView?: AgentView;
}

export interface DaemonServer {
  port: number;
  token: string;
  stop(): Promise<void>;
}

/** How long a forwarded request waits for an engine that is (re)starting before answering 503. */
const ENGINE_WAIT_MS = 10_000;
/** Forwarded requests may run an LLM pass (task_context with Chain-of-Note). */
const FORWARD_TIMEOUT_MS = 15_000;

type Handle = (req: Request) => Promise<Response>;

/** Bun.serve routes: the daemon's own (/health, /status, /ui_login_code) and every forwarded route of the table. */
function daemonRoutes(
  opts: DaemonServerOptions,
  token: string,
  ui: { auth: UiAuth; loginFiles: LoginFiles; port: () => number },
): Record<string, Partial<Record<"GET" | "POST", Handle>>> {
  const guarded =
    (fn: Handle): Handle =>
    async (req) => {
      const refused = guardRequest(req, token) ?? bodyTooLarge(req, DAEMON_MAX_BODY_BYTES);
      if (refused) return refused;
      try {
        return await fn(req);
      } catch (err) {
        logFailure(`daemon API ${req.method} ${requestUrl(req)?.pathname}`, err);
        return errorToResponse(err);
      }
    };
  const out: Record<string, Partial<Record<"GET" | "POST", Handle>>> = {
    [ROUTES.health.path]: {
      GET: guarded(async () => {
        const body: Health = {
          ok: true,
          pid: process.pid,
          version: VERSION,
          uptime_s: uptime(opts.startedAt),
          home: sqrlHome(),
        };
        return jsonResponse(body);
      }),
    },
    [ROUTES.status.path]: { GET: guarded(async () => jsonResponse(DaemonStatus.parse(opts.status()))) },
    [ROUTES.ui_login_code.path]: {
      POST: guarded(async (req) => {
        const text = await req.text();
        let body: unknown;
        try {
          body = text.trim() === "" ? {} : JSON.parse(text);
        } catch {
          body = undefined;
        }
        const input = ROUTES.ui_login_code.request.safeParse(body);
        if (!input.success) return errorResponse(400, "bad_request", "field `project`: a project folder, or nothing.");
        const file = ui.loginFiles.issue(ui.port(), input.data.project);
        return jsonResponse({ file, port: ui.port(), expires_in_s: LOGIN_CODE_TTL_MS / 1000 });
      }),
    },
  };
  for (const r of forwardedRoutes()) {
    out[r.path] = Object.fromEntries(
      methodsOf(r).map((m) => [m, guarded(async (req) => forward(req, await opts.engine(ENGINE_WAIT_MS)))]),
    );
  }
  return out;
}

/**
 * The daemon's local API on 127.0.0.1 (random port). Every request passes `guardRequest` (token, no
 * Origin, local Host) — except the `sqrl ui` page under /ui/, which has its own session-cookie and
 * Origin checks (src/daemon/ui/routes.ts).
 */
export function startDaemonServer(opts: DaemonServerOptions): DaemonServer {
  const token = opts.token ?? newToken();
  const auth = new UiAuth();
  const loginFiles = new LoginFiles(auth);
  loginFiles.sweep();
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    maxRequestBodySize: hardLimit(DAEMON_MAX_BODY_BYTES),
    routes: daemonRoutes(opts, token, { auth, loginFiles, port: () => server.port! }),
    fetch: async (req) => {
      const url = requestUrl(req);
      if (!url) {
        log.warn(`refused ${req.method} with a malformed Host or path (400)`);
        return badAddress();
      }
      const path = url.pathname;
      // The sqrl ui page: a browser, so a session cookie and Origin checks instead of the bearer token.
      if (path === "/ui" || path.startsWith("/ui/")) {
        try {
          const tooLarge = bodyTooLarge(req, DAEMON_MAX_BODY_BYTES);
          if (tooLarge) return tooLarge;
          const { handleUi } = await import("./ui/routes.ts");
          return await handleUi(req, {
            auth,
            loginFiles,
            port: () => server.port!,
            startedAt: opts.startedAt,
            status: opts.status,
            engine: opts.engine,
            agentView: opts.agentView,
          });
        } catch (err) {
          logFailure(`ui ${req.method} ${path}`, err);
          return errorToResponse(err);
        }
      }
      return guardRequest(req, token) ?? bodyTooLarge(req, DAEMON_MAX_BODY_BYTES) ?? unrouted(req);
    },
    error: (err) => {
      logFailure("daemon API request", err);
      return errorToResponse(err);
    },
  });
  return {
    port: server.port!,
    token,
    stop: async () => {
      loginFiles.close();
      await server.stop(true);
    },
  };
}

/** A request that failed: a bug (500) is logged as an error with its detail; a refusal only at debug. */
function logFailure(what: string, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (isExpectedFailure(err)) log.debug(`${what} refused: ${message}`);
  else log.error(`${what} failed: ${err instanceof Error ? (err.stack ?? message) : message}`);
}

/** Known path with another method → 405; anything else → 404. */
function unrouted(req: Request): Response {
  const path = new URL(req.url).pathname;
  const r: AnyRoute | undefined = routeAt(path);
  if (r && (r.server !== "engine" || forwardedRoutes().includes(r)))
    return methodNotAllowed(req, methodsOf(r).join(" or "));
  return errorResponse(404, "not_found", `No route ${req.method} ${path}.`);
}

function methodNotAllowed(req: Request, allowed: string): Response {
  return errorResponse(
    405,
    "method_not_allowed",
    `${req.method} is not allowed on ${new URL(req.url).pathname}; use ${allowed}.`,
  );
}

export function uptime(startedAt: number): number {
  return Math.round((Date.now() - startedAt) / 100) / 10;
}

/** Pass the request to the engine (same path, query and body) and its answer back unchanged. */
async function forward(req: Request, engine: RuntimeInfo | undefined): Promise<Response> {
  const url = new URL(req.url);
  if (!engine) {
    return errorResponse(
      503,
      "engine_unavailable",
      "The memory engine is not running right now (starting or restarting). Retry in a few seconds; `sqrl daemon status` shows its state.",
    );
  }
  const headers: Record<string, string> = { authorization: `Bearer ${engine.token}` };
  const contentType = req.headers.get("content-type");
  if (contentType) headers["content-type"] = contentType;
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${engine.port}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === "GET" ? undefined : await req.arrayBuffer(),
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
  } catch (err) {
    log.debug(`forwarding ${url.pathname} to the engine failed: ${(err as Error).message}`);
    return errorResponse(
      503,
      "engine_unavailable",
      "The memory engine did not answer. Retry in a few seconds; `sqrl daemon status` shows its state.",
    );
  }
  const body = await res.arrayBuffer();
  return new Response(body, {
    status: res.status,
    headers: { "content-type": res.headers.get("content-type") ?? "application/json" },
  });
}
