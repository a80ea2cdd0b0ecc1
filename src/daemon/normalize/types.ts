/** The shapes every agent's normalizer shares: the line normalizer contract and the tool-call bookkeeping between a call and its result. */
import type { NormalizedEvent } from "../../shared/event.ts";

/** What a tool_use was, remembered until its result arrives. */
export interface ToolUseInfo {
  tool: string;
  input: unknown;
}

/**
 * Finds a stored tool_call/code_change for a tool_use_id when the normalizer's in-memory map lost it
 * (the daemon restarted between a tool_use line and its result).
 */
export type ToolUseLookup = (
  cwd: string | null,
  sessionId: string | null,
  toolUseId: string,
) => ToolUseInfo | undefined;

export interface NormalizerOptions {
  lookupToolUse?: ToolUseLookup;
  /** Path of the source file (session id fallback, subagent detection). */
  filePath?: string;
  /** For formats without a cwd in their records (Gemini): the project folder from the file's metadata. */
  resolveCwd?: (meta: Record<string, unknown>) => string | null;
}

/**
 * A per-file, stateful normalizer of line-oriented records. `push` takes one parsed line and returns
 * the events that are complete; some are held back (an assistant response whose later lines may
 * still come, records that wait for a cwd) until `flush`.
 */
export interface LineNormalizer {
  push(record: unknown, lineStart: number): NormalizedEvent[];
  /** Events that became ready once a whole batch of lines was pushed (document-style formats). */
  afterBatch?(): NormalizedEvent[];
  /**
   * Release held-back events. `idle`: only a quiet moment in a live file (more may still come):
   * records still waiting for their session's cwd stay held, since they cannot be stored without it.
   */
  flush(opts?: { idle?: boolean }): NormalizedEvent[];
  /** Byte offset of the first line whose events are still held back, or null. */
  heldFrom(): number | null;
}

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A valid ISO timestamp from a record field, else the fallback. */
const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export function isoOr(v: unknown, fallback: string): string {
  if (typeof v === "string") {
    if (v.length === 24 && CANONICAL_ISO.test(v)) return v; // already what toISOString would give
    const ms = Date.parse(v);
    if (Number.isFinite(ms)) return new Date(ms).toISOString();
  }
  if (typeof v === "number" && Number.isFinite(v)) return new Date(v > 1e12 ? v : v * 1000).toISOString();
  return fallback;
}
