/**
 * The client of sqrl's local APIs (daemon and engine), derived from the route table
 * (src/shared/api.ts `ROUTES`): the route gives the method (GET with a query string, POST with a
 * JSON body) and the schema every answer is checked against. Errors that reach a model or a
 * terminal are short and never carry the request or the API's address.
 */
import { FetchError, ofetch } from "ofetch";
import { ApiError, type Route } from "./api.ts";
import { DaemonUnreachableError, publicMessage, SqrlError } from "./errors.ts";
import { readRuntimeInfo, type RuntimeInfo, type RuntimeKind } from "./runtime-files.ts";

export interface CallOptions {
  method?: "GET" | "POST";
  query?: Record<string, unknown>;
  body?: unknown;
  timeoutMs?: number;
}

/**
 * Call the local daemon or engine API: token from its runtime file, no retries (ofetch retries
 * GET on 5xx by default), a timeout on every call. A refused connection or a missing runtime file
 * becomes DaemonUnreachableError; an `{error, code}` answer becomes an SqrlError with that code.
 */
export async function callApi<T>(
  kind: RuntimeKind,
  path: string,
  opts: CallOptions = {},
  info?: RuntimeInfo,
): Promise<T> {
  const target = info ?? readRuntimeInfo(kind);
  if (!target)
    throw new DaemonUnreachableError(
      `no ${kind === "daemon" ? "daemon.json" : "memory-service.json"}: it is not running`,
    );
  try {
    return await ofetch<T>(`http://127.0.0.1:${target.port}${path}`, {
      method: opts.method ?? "GET",
      query: opts.query as Record<string, string> | undefined,
      body: opts.body as Record<string, unknown> | undefined,
      headers: { authorization: `Bearer ${target.token}` },
      retry: 0,
      timeout: opts.timeoutMs ?? 10_000,
    });
  } catch (err) {
    throw toSqrlError(err, kind);
  }
}

/** How a route's input travels: a JSON body for POST routes, a query string for GET ones. */
export function routeCall(r: Route, input: unknown, timeoutMs?: number): CallOptions {
  const base =
    r.method === "POST"
      ? { method: "POST" as const, body: input }
      : { method: "GET" as const, query: input as Record<string, unknown> };
  return timeoutMs === undefined ? base : { ...base, timeoutMs };
}

/** The answer checked against the route's response schema; a mismatch says what to do, briefly. */
export function checkAnswer<R extends Route>(
  r: R,
  kind: RuntimeKind,
  raw: unknown,
): ReturnType<R["response"]["parse"]> {
  const parsed = r.response.safeParse(raw);
  if (parsed.success) return parsed.data as ReturnType<R["response"]["parse"]>;
  const field = parsed.error.issues[0]?.path.join(".") || "body";
  throw new SqrlError(
    "bad_response",
    `The ${kind} answered ${r.path} with an unexpected shape (field \`${field}\`). sqrl and the ${kind} may be different versions: run \`sqrl daemon stop\` and retry.`,
  );
}

/** One call of a route of the table, its answer validated. */
export async function callRoute<R extends Route>(
  kind: RuntimeKind,
  r: R,
  input: unknown,
  opts: { timeoutMs?: number; info?: RuntimeInfo } = {},
): Promise<ReturnType<R["response"]["parse"]>> {
  const raw = await callApi<unknown>(kind, r.path, routeCall(r, input, opts.timeoutMs), opts.info);
  return checkAnswer(r, kind, raw);
}

function toSqrlError(err: unknown, kind: RuntimeKind): Error {
  if (err instanceof FetchError) {
    const body = ApiError.safeParse(err.data);
    if (body.success && err.statusCode) {
      return new SqrlError(body.data.code, publicMessage(body.data.error), {
        status: err.statusCode,
        exitCode: err.statusCode === 400 ? 2 : 1,
      });
    }
    if (!err.statusCode) {
      const what =
        err.name === "AbortError" || /timeout|aborted/i.test(err.message) ? "timed out" : "connection refused";
      return new DaemonUnreachableError(`${kind}: ${what}`, err);
    }
    return new SqrlError("api_error", `The ${kind} answered HTTP ${err.statusCode}. \`sqrl daemon logs\` shows why.`, {
      status: err.statusCode,
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}
