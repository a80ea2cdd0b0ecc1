/**
 * A read-only snapshot of a project's memory state for `sqrl status` (no daemon needed, nothing written).
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { homePaths } from "../shared/paths.ts";
import { utcDay } from "../shared/time.ts";
import { isViewStale } from "../engine/retrieve/views/view-staleness.ts";
import { countEvents } from "../sql/events.ts";
import { countItemsByType } from "../sql/memory-items.ts";
import { openDatabase, openProjectDb } from "../sql/open.ts";

export interface ProjectStatus {
  project_id: string;
  events: { total: number; unprocessed: number };
  episodes: { total: number; open: number };
  memory_items: { total: number; by_type: Record<string, number> };
  user_style_items: number;
  views: Array<{ name: string; generated_at: string; stale: boolean; events_since: number }>;
  llm: { tokens_today: number };
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

/** Read-only snapshot of a project's memory state (no daemon needed, nothing written). */
export function readProjectStatus(root: string, nowMs = Date.now()): ProjectStatus {
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
    const tokensToday = existsSync(homePaths.stateDb())
      ? withDb(
          () => openDatabase(homePaths.stateDb(), "state", { readonly: true }),
          (s) =>
            (
              s
                .query("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS n FROM llm_usage WHERE day = ?")
                .get(utcDay(nowMs)) as { n: number }
            ).n,
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
      llm: { tokens_today: tokensToday },
    };
  } finally {
    db.close();
  }
}
