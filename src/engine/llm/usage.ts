/**
 * The daily LLM budget (`llm.daily_token_cap`), kept in state.db `llm_usage` so every process and
 * `sqrl status` see the same count. Once a call would cross the cap, LLM work stops for the day and
 * the offline extractor takes over.
 */
import type { Database } from "bun:sqlite";
import { log as rootLog } from "../../shared/log.ts";
import { utcDay } from "../../shared/time.ts";
import { recordUsage, tokensOnDay } from "../../sql/llm-usage.ts";
import { openStateDb } from "../../sql/open.ts";

const log = rootLog.child({ service: "llm" });

export interface UsageLedger {
  /** Tokens left today (never negative). */
  remaining(): number;
  /** Would a call of about `estimate` tokens fit under today's cap? */
  canSpend(estimate: number): boolean;
  record(provider: string, model: string, inputTokens: number, outputTokens: number, failed: boolean): void;
}

export class StateDbLedger implements UsageLedger {
  private warned = "";
  constructor(
    private readonly cap: number,
    private readonly now: () => number = Date.now,
    private readonly open: () => Database = () => openStateDb(),
  ) {}

  private spent(): number {
    const db = this.open();
    try {
      return tokensOnDay(db, utcDay(this.now()));
    } finally {
      db.close();
    }
  }

  remaining(): number {
    return Math.max(0, this.cap - this.spent());
  }

  canSpend(estimate: number): boolean {
    const ok = this.cap > 0 && this.spent() + estimate <= this.cap;
    const day = utcDay(this.now());
    if (!ok && this.warned !== day) {
      this.warned = day;
      log.info(`LLM daily token cap (${this.cap}) reached for ${day}: extraction continues offline.`);
    }
    return ok;
  }

  record(provider: string, model: string, inputTokens: number, outputTokens: number, failed: boolean): void {
    const db = this.open();
    try {
      recordUsage(db, {
        day: utcDay(this.now()),
        provider,
        model,
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        failed,
      });
    } finally {
      db.close();
    }
  }
}
