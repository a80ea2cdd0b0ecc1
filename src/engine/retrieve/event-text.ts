/**
 * A memory's evidence for people: one line per stored event, and the episodes and events an item
 * cites (`sqrl show`, the `sqrl ui` memory page).
 */
import type { Database } from "bun:sqlite";
import type { EventDTO } from "../../shared/event.ts";
import { getEpisode } from "../../sql/episodes.ts";
import { eventsByIds } from "../../sql/events.ts";
import type { MemoryItem } from "../../sql/memory-items.ts";

/** One line of an event for people (evidence quotes in `sqrl ui`): the text, the command and exit code, or the diff summary. */
export function eventText(e: Pick<EventDTO, "event_type" | "content_json">, max = 240): string {
  let c: Record<string, unknown> = {};
  try {
    c = JSON.parse(e.content_json) as Record<string, unknown>;
  } catch {
    c = {};
  }
  const pick = (k: string) => (typeof c[k] === "string" ? (c[k] as string) : "");
  const raw =
    (e.event_type === "command_run" || e.event_type === "test_run") && pick("command")
      ? `$ ${pick("command")} (exit ${String(c.exit_code ?? "?")})`
      : pick("text") || pick("diff_summary") || pick("command") || pick("tool") || pick("output");
  const one = raw.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export interface EvidenceEpisode {
  id: string;
  start_ts: string;
  end_ts: string;
  summary: string;
  outcome: string;
}

export interface EvidenceEvent {
  id: string;
  timestamp: string;
  event_type: string;
  text: string;
}

/** The episodes (source and every one that confirmed it) and the events an item cites, as people read them. */
export function memoryEvidence(
  db: Database,
  item: Pick<MemoryItem, "source_episode_id" | "evidence_episode_ids" | "source_event_ids">,
  max = 240,
): { episodes: EvidenceEpisode[]; events: EvidenceEvent[] } {
  const ids = [
    ...new Set(
      [item.source_episode_id, ...item.evidence_episode_ids].filter((x): x is string => typeof x === "string"),
    ),
  ];
  const episodes = ids
    .map((eid) => getEpisode(db, eid))
    .filter((e) => e !== undefined)
    .map((e) => ({ id: e.id, start_ts: e.start_ts, end_ts: e.end_ts, summary: e.summary, outcome: e.outcome }));
  const events = eventsByIds(db, item.source_event_ids).map((e) => ({
    id: e.id,
    timestamp: e.timestamp,
    event_type: e.event_type,
    text: eventText(e, max),
  }));
  return { episodes, events };
}
