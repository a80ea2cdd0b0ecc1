/**
 * Size caps of API request bodies. `bodyTooLarge` answers a request that declares a bigger body
 * with a JSON 413 that says what to do; Bun's `maxRequestBodySize` (set to `hardLimit`, a little
 * above, since Bun refuses a declared length before the handler runs, with a bare 413) stops any
 * body, chunked ones included, from growing without end.
 *
 * The daemon's API takes reads from sqrl mcp and the CLI (a task, a query: small); the engine's
 * also takes the daemon's event batches (up to `daemon.batch_max_events` events of bounded size).
 */
import { errorResponse } from "./http-guard.ts";

/** Daemon API: a task description or query of 1 MiB is already far past any useful size. */
export const DAEMON_MAX_BODY_BYTES = 1024 * 1024;
/** Engine API: event batches (each event's content is bounded at capture) and the reads above. */
export const ENGINE_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A 413 answer when the request declares a body bigger than `max`; undefined otherwise. */
export function bodyTooLarge(req: Request, max: number): Response | undefined {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (!Number.isFinite(declared) || declared <= max) return undefined;
  return errorResponse(
    413,
    "payload_too_large",
    `The request body is ${declared} bytes; at most ${max} are accepted. Shorten the task or query text.`,
  );
}

/**
 * Bun's own limit for a server whose cap is `max`: well above it (Bun's default, 128 MiB, or twice
 * the cap), so any declared length gets the clear answer; it only bounds chunked bodies.
 */
export function hardLimit(max: number): number {
  return Math.max(max * 2, 128 * 1024 * 1024);
}
