/**
 * Queries of the `tool_calls` trace table of a project's data.db (`sqrl log`).
 */
import type { Database } from "bun:sqlite";
import { redactDeep, redactText } from "../shared/privacy/redact.ts";

/** One traced MCP tool call (the `tool_calls` table of a project's data.db). */
export interface ToolCallRow {
  id: number;
  ts: string;
  tool: string;
  args: Record<string, unknown>;
  memory_ids: string[];
  token_estimate: number | null;
  latency_ms: number;
  error: string | null;
}

export type NewToolCall = Omit<ToolCallRow, "id">;

interface RawRow {
  id: number;
  ts: string;
  tool: string;
  args_json: string;
  memory_ids: string;
  token_estimate: number | null;
  latency_ms: number;
  error: string | null;
}

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function fromRaw(row: RawRow): ToolCallRow {
  return {
    id: row.id,
    ts: row.ts,
    tool: row.tool,
    args: parseJson<Record<string, unknown>>(row.args_json, {}),
    memory_ids: parseJson<string[]>(row.memory_ids, []),
    token_estimate: row.token_estimate,
    latency_ms: row.latency_ms,
    error: row.error,
  };
}

/** Append one call; returns its row id. Arguments and error text are redacted first (a task may quote a secret). */
export function insertToolCall(db: Database, call: NewToolCall): number {
  const res = db
    .query(
      `INSERT INTO tool_calls (ts, tool, args_json, memory_ids, token_estimate, latency_ms, error)
       VALUES ($ts, $tool, $args_json, $memory_ids, $token_estimate, $latency_ms, $error)`,
    )
    .run({
      ts: call.ts,
      tool: call.tool,
      args_json: JSON.stringify(redactDeep(call.args)),
      memory_ids: JSON.stringify(call.memory_ids),
      token_estimate: call.token_estimate,
      latency_ms: call.latency_ms,
      error: call.error === null ? null : redactText(call.error),
    });
  return Number(res.lastInsertRowid);
}

export interface ListToolCallsOptions {
  tool?: string;
  limit?: number;
}

/** Newest calls first, optionally of one tool. */
export function listToolCalls(db: Database, opts: ListToolCallsOptions = {}): ToolCallRow[] {
  const limit = Math.max(1, Math.min(opts.limit ?? 20, 10_000));
  const rows =
    opts.tool === undefined
      ? (db.query(`SELECT * FROM tool_calls ORDER BY ts DESC, id DESC LIMIT ?`).all(limit) as RawRow[])
      : (db
          .query(`SELECT * FROM tool_calls WHERE tool = ? ORDER BY ts DESC, id DESC LIMIT ?`)
          .all(opts.tool, limit) as RawRow[]);
  return rows.map(fromRaw);
}

export function countToolCalls(db: Database): number {
  return (db.query(`SELECT COUNT(*) AS n FROM tool_calls`).get() as { n: number }).n;
}
