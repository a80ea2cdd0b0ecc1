/**
 * Guard for sqrl's local HTTP APIs (daemon and engine): refuse browsers (any `Origin` header),
 * foreign `Host` headers (DNS rebinding) and requests without the bearer token (constant-time compare).
 * Returns an error Response, or undefined when the request may pass.
 */
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { type ErrorCode, publicMessage, SqrlError } from "./errors.ts";

export function guardRequest(req: Request, token: string): Response | undefined {
  if (req.headers.has("origin"))
    return errorResponse(403, "forbidden_origin", "Requests from browsers (with an Origin header) are refused.");
  const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
  if (host !== "127.0.0.1" && host !== "localhost")
    return errorResponse(403, "forbidden_host", `Host ${host || "(none)"} is refused; use 127.0.0.1.`);
  const auth = req.headers.get("authorization") ?? "";
  const given = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  if (!tokensEqual(given, token))
    return errorResponse(
      401,
      "unauthorized",
      "Missing or wrong token; read it from the runtime file (daemon.json / memory-service.json).",
    );
  return undefined;
}

export function tokensEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(bb, bb); // same work either way
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

export function errorResponse(status: number, code: ErrorCode, error: string): Response {
  return jsonResponse({ error, code }, status);
}

/** Map any thrown value to the `{error, code}` JSON answer with the right status. */
/** The request's URL, or undefined when its Host and path do not make one (e.g. `Host: 127.0.0.1 evil`). */
export function requestUrl(req: Request): URL | undefined {
  try {
    return new URL(req.url);
  } catch {
    return undefined;
  }
}

/** The answer to a request whose address does not parse: the client's mistake, so 400. */
export function badAddress(): Response {
  return errorResponse(400, "bad_request", "The request's Host or path is malformed.");
}

/** Is this failure one the servers expect (a refusal with its own status), rather than a bug to log? */
export function isExpectedFailure(err: unknown): boolean {
  return err instanceof z.ZodError || (err instanceof SqrlError && err.status < 500);
}

export function errorToResponse(err: unknown): Response {
  if (err instanceof z.ZodError) return errorResponse(400, "bad_request", describeZodError(err));
  if (err instanceof SqrlError) return errorResponse(err.status, err.code, publicMessage(err.message));
  // The detail of an unexpected failure stays in the log (the servers log it); the answer says where to look.
  return errorResponse(
    500,
    "internal",
    "Internal error in the memory service; `sqrl daemon logs --service engine` shows it.",
  );
}

/** "field `a.b`: expected number" — names the field, for 400 answers and MCP errors. */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .map((i) => `${i.path.length > 0 ? `field \`${i.path.join(".")}\`` : "body"}: ${i.message}`)
    .join("; ");
}

/**
 * Turn URL search params into a plain object for zod: repeated keys and `key[]` become arrays,
 * comma-separated values of array fields are split, numeric strings become numbers for `numeric`.
 */
export function queryToObject(
  url: URL,
  arrays: readonly string[] = [],
  numeric: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of url.searchParams) {
    const key = rawKey.endsWith("[]") ? rawKey.slice(0, -2) : rawKey;
    if (arrays.includes(key)) {
      const parts = value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      out[key] = [...((out[key] as string[] | undefined) ?? []), ...parts];
    } else if (numeric.includes(key)) {
      const n = Number(value);
      out[key] = value.trim() !== "" && Number.isFinite(n) ? n : value;
    } else out[key] = value;
  }
  return out;
}
