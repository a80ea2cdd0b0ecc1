/**
 * Episode segmentation (reference §3.2): per (project, user, session), events in time order; a gap
 * longer than `gapMs` starts a new episode; an episode of fewer than `minEvents` events is never cut
 * off on its own — a short head keeps growing into what follows, a short tail is merged into the
 * episode before it. An episode stays open while its session is active and is closed when the gap
 * has passed (against newer events or the clock), or when it reaches `maxEvents`.
 */
import type { Database } from "bun:sqlite";
import type { EventDTO } from "../../shared/event.ts";
import { newId } from "../../shared/ids.ts";
import { isoToMs, nowIso } from "../../shared/time.ts";
import {
  addEpisodeEvents,
  assignedEvents,
  insertEpisode,
  latestEventTs,
  mergeEpisodeInto,
  openEpisodes,
  saveEpisode,
  sessionEpisodes,
  unextractedNear,
  type Episode,
} from "../../sql/episodes.ts";

export interface EpisodeConfig {
  gapMs: number;
  minEvents: number;
  maxEvents: number;
}

export const DEFAULT_EPISODE_CONFIG: EpisodeConfig = { gapMs: 20 * 60_000, minEvents: 3, maxEvents: 250 };

export interface SegmentResult {
  /** Episodes that gained events, were merged into, or were closed in this call. */
  touched: Set<string>;
  /** Episode of every event of the batch (including events assigned by an earlier call). */
  eventEpisode: Map<string, string>;
}

interface Working {
  ep: Episode;
  startMs: number;
  endMs: number;
}

function sortEvents(events: readonly EventDTO[]): EventDTO[] {
  return [...events].sort(
    (a, b) => isoToMs(a.timestamp) - isoToMs(b.timestamp) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

function newEpisode(projectId: string, userId: string, sessionId: string | null, ev: EventDTO, now: string): Working {
  const ms = isoToMs(ev.timestamp);
  const ep: Episode = {
    id: newId("ep", ms),
    project_id: projectId,
    user_id: userId,
    session_id: sessionId,
    start_ts: ev.timestamp,
    end_ts: ev.timestamp,
    event_count: 0,
    summary: "",
    importance: 0,
    created_at: now,
    status: "open",
    closed_at: null,
    extracted_at: null,
    extractor: null,
    summary_source: "none",
    outcome: "",
    file_paths: [],
  };
  return { ep, startMs: ms, endMs: ms };
}

function attach(w: Working, ev: EventDTO): void {
  const ms = isoToMs(ev.timestamp);
  if (ms < w.startMs) {
    w.startMs = ms;
    w.ep.start_ts = ev.timestamp;
  }
  if (ms > w.endMs) {
    w.endMs = ms;
    w.ep.end_ts = ev.timestamp;
  }
  w.ep.event_count++;
}

function close(w: Working, now: string): void {
  w.ep.status = "closed";
  w.ep.closed_at = now;
}

/** Assign the batch's unassigned events to episodes (call inside a write transaction). */
export function segmentEvents(
  db: Database,
  projectId: string,
  events: readonly EventDTO[],
  cfg: EpisodeConfig,
  nowMs: number,
): SegmentResult {
  const now = nowIso(nowMs);
  const already = assignedEvents(
    db,
    events.map((e) => e.id),
  );
  const result: SegmentResult = { touched: new Set(), eventEpisode: new Map(already) };
  const fresh = sortEvents(events.filter((e) => !already.has(e.id)));
  const groups = new Map<string, EventDTO[]>();
  for (const e of fresh) {
    const k = JSON.stringify([e.user_id, e.session_id]);
    const g = groups.get(k);
    if (g) g.push(e);
    else groups.set(k, [e]);
  }
  const working = new Map<string, Working>();
  const isNew = new Set<string>();
  for (const [k, group] of groups) {
    const [userId, sessionId] = JSON.parse(k) as [string, string | null];
    const existing = sessionEpisodes(db, projectId, userId, sessionId).map((ep) => ({
      ep,
      startMs: isoToMs(ep.start_ts),
      endMs: isoToMs(ep.end_ts),
    }));
    const pending = new Map<string, string[]>();
    const track = (w: Working, id: string) => {
      working.set(w.ep.id, w);
      const list = pending.get(w.ep.id);
      if (list) list.push(id);
      else pending.set(w.ep.id, [id]);
      result.eventEpisode.set(id, w.ep.id);
      result.touched.add(w.ep.id);
    };
    let cur: Working | null =
      existing.length > 0 && existing[existing.length - 1]!.ep.status === "open"
        ? existing[existing.length - 1]!
        : null;
    for (const ev of group) {
      const ms = isoToMs(ev.timestamp);
      if (cur && ms < cur.startMs - cfg.gapMs) {
        // A late event from before the open episode: join the session episode it falls in (or next to).
        const home = existing.find((w) => ms >= w.startMs - cfg.gapMs && ms <= w.endMs + cfg.gapMs);
        if (home) {
          attach(home, ev);
          track(home, ev.id);
          continue;
        }
      }
      const continues =
        cur !== null &&
        cur.ep.event_count < cfg.maxEvents &&
        (ms - cur.endMs <= cfg.gapMs || cur.ep.event_count < cfg.minEvents);
      if (!continues) {
        if (cur) {
          close(cur, now);
          working.set(cur.ep.id, cur);
          result.touched.add(cur.ep.id);
        }
        cur = newEpisode(projectId, userId, sessionId, ev, now);
        isNew.add(cur.ep.id);
        existing.push(cur);
      }
      attach(cur!, ev);
      track(cur!, ev.id);
    }
    for (const w of existing) if (isNew.has(w.ep.id)) insertEpisode(db, w.ep);
    for (const [epId, ids] of pending) addEpisodeEvents(db, epId, ids);
  }
  for (const w of working.values()) if (!isNew.has(w.ep.id)) saveEpisode(db, w.ep);
  closeQuietEpisodes(db, projectId, cfg, nowMs, result.touched);
  return result;
}

/** Earliest unassigned event of a session at or after `fromTs` (events the daemon stored but has not sent yet). */
function nextPendingMs(db: Database, ep: Episode): number | null {
  const r = db
    .query(
      // Without statistics the planner walks idx_events_project_time over every later event; a session's own events are far fewer.
      `SELECT MIN(ev.timestamp) AS ts FROM events ev INDEXED BY idx_events_session WHERE ev.project_id = ? AND ev.session_id IS ? AND ev.user_id = ? AND ev.timestamp >= ?
       AND NOT EXISTS (SELECT 1 FROM episode_events ee WHERE ee.event_id = ev.id)`,
    )
    .get(ep.project_id, ep.session_id, ep.user_id, ep.end_ts) as { ts: string | null };
  return r.ts === null ? null : isoToMs(r.ts);
}

/**
 * Close open episodes whose session has gone quiet for longer than the gap — measured against the
 * clock and against the newest event of the project — unless the session still has stored events
 * waiting within the gap (a backfill in progress). A short tail is merged into the episode before it.
 */
export function closeQuietEpisodes(
  db: Database,
  projectId: string,
  cfg: EpisodeConfig,
  nowMs: number,
  touched: Set<string>,
): void {
  const now = nowIso(nowMs);
  const latest = latestEventTs(db, projectId);
  const horizon = Math.max(nowMs, latest ? isoToMs(latest) : 0);
  for (const ep of openEpisodes(db, projectId)) {
    const endMs = isoToMs(ep.end_ts);
    if (horizon - endMs <= cfg.gapMs) continue;
    const pending = nextPendingMs(db, ep);
    if (pending !== null && pending - endMs <= cfg.gapMs) continue;
    ep.status = "closed";
    ep.closed_at = now;
    if (ep.event_count < cfg.minEvents && mergeShortTail(db, ep, cfg, touched)) continue;
    saveEpisode(db, ep);
    touched.add(ep.id);
  }
}

/** The episode a short one should join: the previous one of its session, else (a lone fragment) the nearest one of the user. */
function neighbourFor(db: Database, ep: Episode, cfg: EpisodeConfig): Episode | undefined {
  const siblings = sessionEpisodes(db, ep.project_id, ep.user_id, ep.session_id);
  const idx = siblings.findIndex((s) => s.id === ep.id);
  const prev = idx > 0 ? siblings[idx - 1]! : undefined;
  if (prev) return prev.extracted_at === null ? prev : undefined;
  if (siblings.length > 1) return undefined;
  const from = nowIso(isoToMs(ep.start_ts) - cfg.gapMs);
  const to = nowIso(isoToMs(ep.end_ts) + cfg.gapMs);
  const mid = (isoToMs(ep.start_ts) + isoToMs(ep.end_ts)) / 2;
  const dist = (o: Episode) => Math.max(0, isoToMs(o.start_ts) - mid, mid - isoToMs(o.end_ts));
  return unextractedNear(db, ep.project_id, ep.user_id, from, to)
    .filter((o) => o.id !== ep.id)
    .sort((a, b) => dist(a) - dist(b))[0];
}

/** Merge a closed short episode into a neighbour that has not been extracted yet. */
function mergeShortTail(db: Database, ep: Episode, cfg: EpisodeConfig, touched: Set<string>): boolean {
  const prev = neighbourFor(db, ep, cfg);
  if (!prev) return false;
  mergeEpisodeInto(db, ep.id, prev.id);
  prev.event_count += ep.event_count;
  if (isoToMs(ep.end_ts) > isoToMs(prev.end_ts)) prev.end_ts = ep.end_ts;
  if (isoToMs(ep.start_ts) < isoToMs(prev.start_ts)) prev.start_ts = ep.start_ts;
  saveEpisode(db, prev);
  touched.delete(ep.id);
  touched.add(prev.id);
  return true;
}

/**
 * Closed episodes ready for extraction: not extracted yet, and not waiting for a short successor
 * that may still be merged into them.
 */
export function extractableEpisodes(
  db: Database,
  projectId: string,
  cfg: EpisodeConfig,
  candidates: readonly Episode[],
): Episode[] {
  const out: Episode[] = [];
  for (const ep of candidates) {
    if (ep.status !== "closed" || ep.extracted_at !== null) continue;
    const siblings = sessionEpisodes(db, projectId, ep.user_id, ep.session_id);
    const idx = siblings.findIndex((s) => s.id === ep.id);
    const next = idx >= 0 ? siblings[idx + 1] : undefined;
    if (next && next.status === "open" && next.event_count < cfg.minEvents) continue;
    out.push(ep);
  }
  return out;
}
