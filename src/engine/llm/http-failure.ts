/**
 * What an HTTP model API's failure means for the episode that met it (issue 25): the status (or no
 * answer at all) says whether the model is away for now — down or overloaded, the key refused, a rate
 * limit, a timeout — so the episode waits, or the request itself was refused. Shared by the HTTP adapters.
 */
import type { LlmFailureKind } from "./types.ts";

/** Why a call failed, from its HTTP status; undefined status: no answer (`timedOut` tells which). */
export function httpFailureKind(status: number | undefined, timedOut: boolean): LlmFailureKind {
  if (status === undefined) return timedOut ? "timeout" : "unavailable";
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "signed_out";
  if (status === 408 || status === 504) return "timeout";
  if (status === 500 || status === 502 || status === 503 || status === 529) return "unavailable";
  return "failed";
}

/** Retry-After in ms: seconds, or an HTTP date. */
export function retryAfterMs(header: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** What each kind means, for the error the user reads. */
export const FAILURE_WHY: Record<LlmFailureKind, string> = {
  unavailable: "is not reachable or overloaded",
  signed_out: "refused the API key",
  rate_limited: "is rate-limiting",
  timeout: "did not answer in time (llm.timeout_ms)",
  invalid_answer: "answered in an unexpected shape",
  failed: "refused the request",
};
