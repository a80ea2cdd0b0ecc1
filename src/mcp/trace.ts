/**
 * The trace of MCP tool calls (`sqrl log` shows it), sent through the daemon API (`POST
 * /tool_calls`, which the engine stores in the project's data.db): the MCP face never opens SQLite.
 * Fire and forget: a tool's answer never waits for its trace, and a failed send is logged to stderr
 * and dropped.
 */
import { ROUTES, type ToolCallTrace } from "../shared/api.ts";
import { log as rootLog } from "../shared/log.ts";
import type { DaemonBridge } from "./daemon-bridge.ts";

const log = rootLog.child({ service: "mcp" });

/** What one tool call leaves in the trace. */
export interface TraceEntry {
  tool: string;
  args: Record<string, unknown>;
  memoryIds: string[];
  tokenEstimate: number | null;
  latencyMs: number;
  error: string | null;
}

/** Longest string argument kept in the trace (a pasted file stays out of data.db). */
export const MAX_TRACED_ARG_CHARS = 2_000;
/** A trace send gives up after this long (ms). */
const TRACE_TIMEOUT_MS = 5_000;
/** `close()` waits at most this long for sends still in flight (ms). */
const CLOSE_WAIT_MS = 2_000;

function clipArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] =
      typeof v === "string" && v.length > MAX_TRACED_ARG_CHARS
        ? `${v.slice(0, MAX_TRACED_ARG_CHARS)}… (${v.length} characters)`
        : v;
  }
  return out;
}

export class Tracer {
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly bridge: DaemonBridge) {}

  /** Queue a record for `projectRoot`; the promise settles once it is sent (callers need not await). */
  record(projectRoot: string, entry: TraceEntry, ts: string = new Date().toISOString()): Promise<void> {
    const body: ToolCallTrace = {
      project_id: projectRoot,
      ts,
      tool: entry.tool,
      args: clipArgs(entry.args),
      memory_ids: entry.memoryIds,
      token_estimate: entry.tokenEstimate,
      latency_ms: Math.round(entry.latencyMs * 100) / 100,
      error: entry.error,
    };
    this.pending = this.pending
      .then(async () => {
        await this.bridge.call(ROUTES.tool_calls, body, TRACE_TIMEOUT_MS);
      })
      .catch((err: unknown) => {
        log.warn(`sqrl mcp: could not trace ${entry.tool}: ${(err as Error).message}`);
      });
    return this.pending;
  }

  /** Wait for queued records. */
  flush(): Promise<void> {
    return this.pending;
  }

  /** Wait briefly for sends in flight (the process is about to end). */
  async close(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.pending, new Promise<void>((done) => (timer = setTimeout(done, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }
}
