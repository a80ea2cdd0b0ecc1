/**
 * When a cached view is stale (reference §5.2–§5.4): TTL and new-event thresholds per view.
 */
import type { ViewName } from "../../../shared/api.ts";
import { isoToMs } from "../../../shared/time.ts";

/** Staleness rules of reference §5.2–§5.4: a view is regenerated after its TTL or after this many new events. */
export const VIEW_STALENESS: Record<ViewName, { ttl_seconds: number; event_delta: number }> = {
  user_style: { ttl_seconds: 3600, event_delta: 200 },
  project_brief: { ttl_seconds: 600, event_delta: 100 },
  pitfalls: { ttl_seconds: 600, event_delta: 50 },
};

export interface ViewMetaRow {
  view_name: string;
  last_generated: string;
  events_count_at_gen: number;
  ttl_seconds: number;
}

/** Is a cached view stale, given the project's current event count? */
export function isViewStale(meta: ViewMetaRow, eventsNow: number, nowMs = Date.now()): boolean {
  const rule = VIEW_STALENESS[meta.view_name as ViewName];
  const delta = rule?.event_delta ?? 1;
  const expired = nowMs - isoToMs(meta.last_generated) >= meta.ttl_seconds * 1000;
  return expired || eventsNow - meta.events_count_at_gen >= delta;
}
