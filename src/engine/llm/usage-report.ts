/**
 * What the configured LLM costs, for `sqrl status`, `sqrl doctor` and the `sqrl ui` overview: the
 * provider and model, tokens today against the daily cap, and tokens per session over the last seven
 * days (every LLM token of those days over the sessions whose episodes the LLM distilled, in every
 * registered project). Read-only: state.db and each data.db are opened readonly, nothing is written.
 */
import { existsSync } from "node:fs";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { homePaths, projectPaths } from "../../shared/paths.ts";
import { utcDay } from "../../shared/time.ts";
import { openDatabase, openProjectDb } from "../../sql/open.ts";

export const REPORT_DAYS = 7;

export interface LlmUsageReport {
  provider: ConfigValues["llm.provider"];
  model: string;
  billing: ConfigValues["llm.billing"];
  tokens_today: number;
  daily_cap: number;
  /** Sessions with an episode the LLM distilled in the last REPORT_DAYS days, across projects. */
  sessions: number;
  /** LLM tokens of those days over those sessions; null before the first one. */
  tokens_per_session: number | null;
}

/** The model a provider really sends: `codex` with a Claude name left from the default picks its own. */
export function effectiveModel(cfg: Pick<ConfigValues, "llm.provider" | "llm.model">): string {
  if (cfg["llm.provider"] === "none") return "";
  if (cfg["llm.provider"] === "codex" && /^claude/i.test(cfg["llm.model"])) return "the CLI's fast model";
  return cfg["llm.model"];
}

function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** The report, from config, state.db and the registered projects' databases. */
export function llmUsageReport(
  cfg: Pick<ConfigValues, "llm.provider" | "llm.model" | "llm.billing" | "llm.daily_token_cap">,
  opts: { nowMs: number; projects: readonly string[] },
): LlmUsageReport {
  const today = utcDay(opts.nowMs);
  const since = utcDay(opts.nowMs - (REPORT_DAYS - 1) * 86_400_000);
  const tokens = existsSync(homePaths.stateDb())
    ? safely(() => {
        const s = openDatabase(homePaths.stateDb(), "state", { readonly: true });
        try {
          const q = (from: string) =>
            (
              s
                .query("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS n FROM llm_usage WHERE day >= ?")
                .get(from) as { n: number }
            ).n;
          return { today: q(today), window: q(since) };
        } finally {
          s.close();
        }
      }, null)
    : null;
  let sessions = 0;
  for (const root of opts.projects) {
    if (!existsSync(projectPaths.db(root))) continue;
    sessions += safely(() => {
      const db = openProjectDb(root, { readonly: true });
      try {
        return (
          db
            .query(
              `SELECT COUNT(DISTINCT COALESCE(e.session_id, e.id)) AS n FROM episodes e JOIN episode_state s ON s.episode_id = e.id
               WHERE s.extractor = 'llm' AND s.extracted_at >= ?`,
            )
            .get(since) as { n: number }
        ).n;
      } finally {
        db.close();
      }
    }, 0);
  }
  return {
    provider: cfg["llm.provider"],
    model: effectiveModel(cfg),
    billing: cfg["llm.billing"],
    tokens_today: tokens?.today ?? 0,
    daily_cap: cfg["llm.daily_token_cap"],
    sessions,
    tokens_per_session: sessions > 0 && tokens ? Math.round(tokens.window / sessions) : null,
  };
}

/** One line for a terminal: provider (model), tokens today of the cap, tokens per session. */
export function describeUsage(r: LlmUsageReport): string {
  if (r.provider === "none")
    return `offline (llm.provider = none); ${r.tokens_today} tokens used today. \`sqrl init --llm claude_code|codex\` turns a signed-in CLI on`;
  const perSession =
    r.tokens_per_session === null
      ? "no session distilled by it in the last 7 days"
      : `~${r.tokens_per_session} tokens per session (${r.sessions} sessions, last 7 days)`;
  return `${r.provider} (${r.model}), ${r.tokens_today} of ${r.daily_cap} tokens today, ${perSession}`;
}
