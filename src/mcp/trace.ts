import type { Database } from "bun:sqlite";
import { log } from "../shared/log.ts";

/** What one tool call leaves in the trace (`sqrl log` shows it). */
export interface TraceEntry {
  tool: string;
  args: Record<string, unknown>;
  memoryIds: string[];
  tokenEstimate: number | null;
  latencyMs: number;
  error: string | null;
}

/**
 * Records every MCP tool call in the project's data.db `tool_calls` table. SQLite is loaded lazily
 * (the first record), so `sqrl mcp` starts without it; one handle per project stays open until
 * `close()`. Tracing never fails a tool call: a write error is logged to stderr and dropped.
 */
export class Tracer {
  private readonly dbs = new Map<string, Database>();
  private pending: Promise<void> = Promise.resolve();

  /** Queue a record for `projectRoot`; returns once it is written (callers need not await). */
  record(projectRoot: string, entry: TraceEntry, ts: string = new Date().toISOString()): Promise<void> {
    this.pending = this.pending.then(() => this.write(projectRoot, entry, ts)).catch((err: unknown) => {
      log.warn(`sqrl mcp: could not trace ${entry.tool} in ${projectRoot}: ${(err as Error).message}`);
    });
    return this.pending;
  }

  /** Wait for queued records. */
  flush(): Promise<void> {
    return this.pending;
  }

  async close(): Promise<void> {
    await this.flush();
    for (const db of this.dbs.values()) db.close();
    this.dbs.clear();
  }

  private async write(projectRoot: string, entry: TraceEntry, ts: string): Promise<void> {
    const db = await this.open(projectRoot);
    const { insertToolCall } = await import("../sql/tool-calls.ts");
    insertToolCall(db, {
      ts,
      tool: entry.tool,
      args: entry.args,
      memory_ids: entry.memoryIds,
      token_estimate: entry.tokenEstimate,
      latency_ms: Math.round(entry.latencyMs * 100) / 100,
      error: entry.error,
    });
  }

  private async open(projectRoot: string): Promise<Database> {
    const open = this.dbs.get(projectRoot);
    if (open) return open;
    const { openProjectDb } = await import("../sql/open.ts");
    const db = openProjectDb(projectRoot);
    this.dbs.set(projectRoot, db);
    return db;
  }
}
