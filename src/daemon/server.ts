import { bodyTooLarge, DAEMON_MAX_BODY_BYTES, hardLimit } from "../shared/body-limit.ts";
import type { Server } from "bun";
import { DaemonStatus, type Health } from "../shared/api.ts";
import { errorResponse, errorToResponse, guardRequest, jsonResponse } from "../shared/http-guard.ts";
import { newToken } from "../shared/ids.ts";
import { log } from "../shared/log.ts";
import type { RuntimeInfo } from "../shared/runtime-files.ts";
import { UiAuth } from "./ui/auth.ts";
import { VERSION } from "../version.ts";

/** Paths served by the engine; the daemon forwards them unchanged. */
export const FORWARDED_ROUTES: ReadonlyArray<{ method: "GET" | "POST"; path: string }> = [
  { method: "GET", path: "/views/user_style" },
  { method: "GET", path: "/views/project_brief" },
  { method: "GET", path: "/views/pitfalls" },
  { method: "POST", path: "/task_context" },
  { method: "GET", path: "/search_memory" },
  { method: "GET", path: "/timeline" },
  { method: "GET", path: "/recall" },
  // sqrl ui: browsing, and the corrections it makes (writes go through the engine like every other).
  { method: "GET", path: "/memories" },
  { method: "GET", path: "/memory" },
  { method: "GET", path: "/overview" },
  { method: "GET", path: "/calls" },
  { method: "GET", path: "/files" },
  { method: "POST", path: "/memories/forget" },
  { method: "POST", path: "/memories/edit" },
  { method: "POST", path: "/memories/pin" },
  { method: "POST", path: "/memories/wrong" },
];

export interface DaemonServerOptions {
  /** Fixed token (tests); default: a fresh random one. */
  token?: string;
  port?: number;
  startedAt: number;
  status: () => DaemonStatus;
  /** The engine to forward to, waiting up to `timeoutMs` while it (re)starts. */
  engine: (timeoutMs: number) => Promise<RuntimeInfo | undefined>;
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

/**
 * The daemon's local API on 127.0.0.1 (random port): `/health`, `/status`, `/ui_login_code` (a
 * one-time code for `sqrl ui`), and the engine's paths forwarded unchanged. Every request passes
 * `guardRequest` (token, no Origin, local Host) — except the page under /ui/, which has its own
 * session-cookie and Origin checks (src/daemon/ui/routes.ts).
 */
export function startDaemonServer(opts: DaemonServerOptions): DaemonServer {
  const token = opts.token ?? newToken();
  const auth = new UiAuth();
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    maxRequestBodySize: hardLimit(DAEMON_MAX_BODY_BYTES),
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      // The sqrl ui page: a browser, so a session cookie and Origin checks instead of the bearer token.
      if (path === "/ui" || path.startsWith("/ui/")) {
        try {
          const tooLarge = bodyTooLarge(req, DAEMON_MAX_BODY_BYTES);
          if (tooLarge) return tooLarge;
          const { handleUi } = await import("./ui/routes.ts");
          return await handleUi(req, { auth, port: () => server.port!, startedAt: opts.startedAt, status: opts.status, engine: opts.engine });
        } catch (err) {
          log.debug(`ui ${req.method} ${path} failed: ${(err as Error).message}`);
          return errorToResponse(err);
        }
      }
      const refused = guardRequest(req, token) ?? bodyTooLarge(req, DAEMON_MAX_BODY_BYTES);
      if (refused) return refused;
      try {
        if (path === "/ui_login_code") {
          if (req.method !== "POST") return methodNotAllowed(req, "POST");
          return jsonResponse({ code: auth.newLoginCode(), port: server.port });
        }
        return await route(req, opts);
      } catch (err) {
        log.debug(`daemon API ${req.method} ${new URL(req.url).pathname} failed: ${(err as Error).message}`);
        return errorToResponse(err);
      }
    },
    error: (err) => errorToResponse(err),
  });
  return {
    port: server.port!,
    token,
    stop: async () => {
      await server.stop(true);
    },
  };
}

async function route(req: Request, opts: DaemonServerOptions): Promise<Response> {
  const url = new URL(req.url);
  const path = url.pathname;
  if (path === "/health") {
    if (req.method !== "GET") return methodNotAllowed(req, "GET");
    const body: Health = { ok: true, pid: process.pid, version: VERSION, uptime_s: uptime(opts.startedAt) };
    return jsonResponse(body);
  }
  if (path === "/status") {
    if (req.method !== "GET") return methodNotAllowed(req, "GET");
    return jsonResponse(DaemonStatus.parse(opts.status()));
  }
  const fwd = FORWARDED_ROUTES.find((r) => r.path === path);
  if (!fwd) return errorResponse(404, "not_found", `No route ${req.method} ${path}. Routes: /health, /status, ${FORWARDED_ROUTES.map((r) => `${r.method} ${r.path}`).join(", ")}.`);
  if (req.method !== fwd.method) return methodNotAllowed(req, fwd.method);
  return forward(req, url, await opts.engine(ENGINE_WAIT_MS));
}

function methodNotAllowed(req: Request, allowed: string): Response {
  return errorResponse(405, "method_not_allowed", `${req.method} is not allowed on ${new URL(req.url).pathname}; use ${allowed}.`);
}

export function uptime(startedAt: number): number {
  return Math.round((Date.now() - startedAt) / 100) / 10;
}

/** Pass the request to the engine (same path, query and body) and its answer back unchanged. */
async function forward(req: Request, url: URL, engine: RuntimeInfo | undefined): Promise<Response> {
  if (!engine) {
    return errorResponse(503, "engine_unavailable", "The memory engine is not running right now (starting or restarting). Retry in a few seconds; `sqrl daemon status` shows its state.");
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
    return errorResponse(503, "engine_unavailable", `The memory engine did not answer (${(err as Error).message}). Retry in a few seconds; \`sqrl daemon status\` shows its state.`);
  }
  const body = await res.arrayBuffer();
  return new Response(body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
}
