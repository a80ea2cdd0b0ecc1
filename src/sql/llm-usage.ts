/**
 * Queries of state.db `llm_usage`: LLM tokens spent per UTC day, provider and model.
 */
import type { Database } from "bun:sqlite";

/** `llm_usage` in state.db: LLM tokens spent per UTC day, provider and model (the daily cap, `sqrl status`). */
export interface UsageRow {
  day: string;
  provider: string;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  failures: number;
}

/** Input + output tokens spent on a day across providers. */
export function tokensOnDay(db: Database, day: string): number {
  const r = db
    .query(`SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS n FROM llm_usage WHERE day = ?`)
    .get(day) as { n: number };
  return r.n;
}

/** Add one call's tokens (and whether it failed) to the day's row. */
export function recordUsage(
  db: Database,
  row: { day: string; provider: string; model: string; input_tokens: number; output_tokens: number; failed: boolean },
): void {
  db.query(
    `INSERT INTO llm_usage (day, provider, model, calls, input_tokens, output_tokens, failures) VALUES (?, ?, ?, 1, ?, ?, ?)
     ON CONFLICT(day, provider, model) DO UPDATE SET calls = calls + 1, input_tokens = input_tokens + excluded.input_tokens,
       output_tokens = output_tokens + excluded.output_tokens, failures = failures + excluded.failures`,
  ).run(row.day, row.provider, row.model, row.input_tokens, row.output_tokens, row.failed ? 1 : 0);
}

export function usageOnDay(db: Database, day: string): UsageRow[] {
  return db.query(`SELECT * FROM llm_usage WHERE day = ? ORDER BY provider, model`).all(day) as UsageRow[];
}
