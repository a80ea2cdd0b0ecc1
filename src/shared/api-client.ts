import { FetchError, ofetch } from "ofetch";
import { ApiError } from "./api.ts";
import { DaemonUnreachableError, SqrlError } from "./errors.ts";
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
export async function callApi<T>(kind: RuntimeKind, path: string, opts: CallOptions = {}, info?: RuntimeInfo): Promise<T> {
  const target = info ?? readRuntimeInfo(kind);
  if (!target) throw new DaemonUnreachableError(`no ${kind === "daemon" ? "daemon.json" : "memory-service.json"}: it is not running`);
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
    throw toSqrlError(err, kind, target);
  }
}

function toSqrlError(err: unknown, kind: RuntimeKind, target: RuntimeInfo): Error {
  if (err instanceof FetchError) {
    const body = ApiError.safeParse(err.data);
    if (body.success && err.statusCode) {
      return new SqrlError(body.data.code, body.data.error, { status: err.statusCode, exitCode: err.statusCode === 400 ? 2 : 1 });
    }
    if (!err.statusCode) {
      const what = err.name === "AbortError" || /timeout|aborted/i.test(err.message) ? "timed out" : "connection refused";
      return new DaemonUnreachableError(`${kind} on 127.0.0.1:${target.port} ${what}`, err);
    }
    return new SqrlError("api_error", `${kind} answered ${err.statusCode}: ${err.message}`, { status: err.statusCode });
  }
  return err instanceof Error ? err : new Error(String(err));
}
