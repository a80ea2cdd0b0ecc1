/**
 * A read-only snapshot of a project's memory state for `sqrl status` (no daemon needed, nothing written).
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { homePaths } from "../shared/paths.ts";
import { isViewStale } from "../engine/retrieve/views/view-staleness.ts";
import { countEvents } from "../sql/events.ts";
import { countItemsByType, currentItems } from "../sql/memory-items.ts";
import { verifyItems } from "../engine/retrieve/verify/verify.ts";
import { openDatabase, openProjectDb } from "../sql/open.ts";
import { llmWaitSummary, type LlmWaitSummary } from "../sql/llm-waits.ts";
import { llmUsageReport, type LlmUsageReport } from "../engine/llm/usage-report.ts";
import type { ConfigValues } from "../shared/config-keys.ts";
import { listProjects } from "../shared/projects.ts";

export interface ProjectStatus {
  project_id: string;
  events: { total: number; unprocessed: number };
  episodes: { total: number; open: number };
  memory_items: { total: number; by_type: Record<string, number> };
  user_style_items: number;
  views: Array<{ name: string; generated_at: string; stale: boolean; events_since: number }>;
  /** The configured LLM (provider, model, tokens today of the cap, tokens per session) and the episodes waiting for it. */
  llm: LlmUsageReport & { waiting: LlmWaitSummary };
  /** Memories checked against today's code (as many as fit in CHECK_BUDGET_MS), and how many decayed for disuse. */
  checks: {
    checked: number;
    of: number;
    verified: number;
    moved: number;
    stale: number;
    unverifiable: number;
    decayed: number;
  };
}

/** Status stays quick on large stores: what is not checked in this time is left to `sqrl doctor`. */
const CHECK_BUDGET_MS = 1500;

function memoryChecks(db: Database, root: string): ProjectStatus["checks"] {
  const items = currentItems(db, root);
  const out = { checked: 0, of: items.length, verified: 0, moved: 0, stale: 0, unverifiable: 0, decayed: 0 };
  out.decayed = (
    db
      .query(
        `SELECT COUNT(*) AS n FROM memory_outcomes o JOIN memory_items m ON m.id = o.memory_id WHERE m.project_id = ? AND m.deleted = 0 AND o.decay_steps > 0`,
      )
      .get(root) as { n: number }
  ).n;
  const started = performance.now();
  for (let i = 0; i < items.length && performance.now() - started < CHECK_BUDGET_MS; i += 250) {
    const chunk = items.slice(i, i + 250);
    for (const v of verifyItems(root, db, chunk).values()) out[v.status]++;
    out.checked += chunk.length;
  }
  return out;
}

function withDb<T>(open: () => Database, fn: (db: Database) => T, fallback: T): T {
  let db: Database | undefined;
  try {
    db = open();
    return fn(db);
  } catch {
    return fallback;
  } finally {
    db?.close();
  }
}

const NO_WAITS: LlmWaitSummary = {
  count: 0,
  by_reason: {},
  next_try_at: null,
  oldest_since: null,
  last_detail: null,
};

/** Episodes waiting for the model (none on a file an older sqrl wrote and nothing has migrated yet). */
function waitsOf(db: Database): LlmWaitSummary {
  try {
    return llmWaitSummary(db);
  } catch {
    return NO_WAITS;
  }
}

/** Read-only snapshot of a project's memory state (no daemon needed, nothing written). */
export function readProjectStatus(root: string, cfg: ConfigValues, nowMs = Date.now()): ProjectStatus {
  const db = openProjectDb(root, { readonly: true });
  try {
    const events = countEvents(db);
    const ep = db
      .query(
        `SELECT COUNT(*) AS total, COALESCE(SUM(s.status = 'open'), 0) AS open FROM episodes e LEFT JOIN episode_state s ON s.episode_id = e.id`,
      )
      .get() as { total: number; open: number };
    const byType = countItemsByType(db, root);
    const views = (
      db.query(`SELECT * FROM view_meta ORDER BY view_name`).all() as Array<{
        view_name: string;
        last_generated: string;
        events_count_at_gen: number;
        ttl_seconds: number;
      }>
    ).map((v) => {
      const eventsSince = events.total - v.events_count_at_gen;
      return {
        name: v.view_name,
        generated_at: v.last_generated,
        stale: isViewStale(v, events.total, nowMs),
        events_since: eventsSince,
      };
    });
    const userStyle = existsSync(homePaths.userDb())
      ? withDb(
          () => openDatabase(homePaths.userDb(), "user", { readonly: true }),
          (u) => (u.query("SELECT COUNT(*) AS n FROM user_style_items").get() as { n: number }).n,
          0,
        )
      : 0;
    return {
      project_id: root,
      events,
      episodes: ep,
      memory_items: { total: Object.values(byType).reduce((a, b) => a + b, 0), by_type: byType },
      user_style_items: userStyle,
      views,
      llm: { ...llmUsageReport(cfg, { nowMs, projects: listProjects() }), waiting: waitsOf(db) },
      checks: memoryChecks(db, root),
    };
  } finally {
    db.close();
  }
}
