/**
 * Episodes wait for the model (issue 25). When the LLM call of an episode fails for a passing reason
 * (`LlmCallError.retryable`: provider down or missing, signed out, rate-limited, timed out), the
 * episode is not handed to the offline rules: it waits in `llm_waits` and is tried again with backoff
 * (the provider's retry-after when it gave one). The offline rules take it only once it has waited
 * `llm.wait_max_hours`, when no model is configured any more, or when the user says so
 * (`sqrl reprocess --offline-pending`). Once one call of a run met a passing failure, the run's other
 * episodes wait with it without calling the model again.
 */
import type { Database } from "bun:sqlite";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { isoToMs, nowIso } from "../../shared/time.ts";
import { getLlmWait, recordLlmWait } from "../../sql/llm-waits.ts";
import { LlmCallError } from "../llm/types.ts";

const MAX_DELAY_MS = 3_600_000;

export interface WaitPolicy {
  /** How long an episode may wait before the offline rules take it (0: never wait). */
  maxMs: number;
  /** First retry delay; doubles with each failed try, at most an hour. */
  retryBaseMs: number;
}

export function waitPolicy(config: ConfigValues): WaitPolicy {
  return {
    maxMs: config["llm.wait_max_hours"] * 3_600_000,
    retryBaseMs: config["llm.wait_retry_seconds"] * 1000,
  };
}

/** The passing failure met in this run, if any: the run's later episodes wait without a call. */
export interface ModelAway {
  failure: LlmCallError | null;
  nextTryMs: number;
}

export function modelPresent(): ModelAway {
  return { failure: null, nextTryMs: 0 };
}

/** A call failure the episode should wait out (rather than go to the offline rules). */
export function isPassing(err: unknown, policy: WaitPolicy): err is LlmCallError {
  return policy.maxMs > 0 && err instanceof LlmCallError && err.retryable;
}

/** Delay before try number `attempts + 1`: the provider's retry-after, else exponential backoff. */
export function retryDelayMs(attempts: number, policy: WaitPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return retryAfterMs;
  return Math.min(MAX_DELAY_MS, policy.retryBaseMs * 2 ** Math.max(0, attempts - 1));
}

/** How an episode is extracted now: by the model, by the rules, or not yet (it waits). */
export type Route = "llm" | "offline" | "wait";

export function routeEpisode(
  db: Database,
  episodeId: string,
  hasModel: boolean,
  policy: WaitPolicy,
  away: ModelAway,
  nowMs: number,
): Route {
  if (!hasModel) return "offline";
  const w = getLlmWait(db, episodeId);
  if (w && nowMs - isoToMs(w.first_failed_at) >= policy.maxMs) return "offline"; // waited long enough
  if (away.failure) return "wait";
  if (w && isoToMs(w.next_try_at) > nowMs) return "wait";
  return "llm";
}

/** Keep the episode waiting after `err` (a call that failed now, or the run's earlier failure). */
export function keepWaiting(
  db: Database,
  episodeId: string,
  err: LlmCallError,
  policy: WaitPolicy,
  away: ModelAway,
  nowMs: number,
): void {
  const attempts = (getLlmWait(db, episodeId)?.attempts ?? 0) + 1;
  const nextMs =
    away.failure && away.nextTryMs > nowMs ? away.nextTryMs : nowMs + retryDelayMs(attempts, policy, err.retryAfterMs);
  if (!away.failure) {
    away.failure = err;
    away.nextTryMs = nextMs;
  }
  db.transaction(() =>
    recordLlmWait(db, {
      episode_id: episodeId,
      reason: err.kind,
      detail: err.message.slice(0, 300),
      at: nowIso(nowMs),
      next_try_at: nowIso(nextMs),
    }),
  ).immediate();
}
