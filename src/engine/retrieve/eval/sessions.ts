/**
 * The sessions of a project as `sqrl eval` replays them: episodes grouped by session, in time order,
 * each with what its agent was asked first (the opening request), the files it first opened or
 * edited, and what its failures and fixes touched (files, identifiers, scripts). Read only.
 */
import type { Database } from "bun:sqlite";
import { citedIdentifiers, citedScripts } from "../../anchors/cite.ts";
import {
  appliedChanges,
  isPlanMessage,
  toEngineEvent,
  userMessages,
  type EngineEvent,
} from "../../events/event-view.ts";
import { episodeEvents, listEpisodes, type Episode } from "../../../sql/episodes.ts";
import { isoToMs } from "../../../shared/time.ts";

/** Files an agent names first: the task's "active files" (get_task_context reads at most 20). */
export const FIRST_FILES = 5;

export interface ReplaySession {
  sessionId: string;
  /** When its first episode started. */
  startTs: string;
  startMs: number;
  episodeIds: string[];
  /** The user's first message (cleaned), or "" when the session has none. */
  request: string;
  /** Repo-relative files the session first read or edited, in order. */
  files: string[];
  /** What its failures and the fixes after them touched. */
  touched: { files: Set<string>; identifiers: Set<string>; scripts: Set<string> };
}

/** Sessions of the project (git commits and events with no session are left out), oldest first. */
export function projectSessions(db: Database, projectId: string, limit = 100_000): ReplaySession[] {
  const bySession = new Map<string, Episode[]>();
  for (const ep of listEpisodes(db, projectId, limit)) {
    if (!ep.session_id) continue;
    const list = bySession.get(ep.session_id) ?? [];
    list.push(ep);
    bySession.set(ep.session_id, list);
  }
  const out: ReplaySession[] = [];
  for (const [sessionId, eps] of bySession) {
    const events = eps.flatMap((ep) => episodeEvents(db, ep.id).map(toEngineEvent)).sort((a, b) => a.ms - b.ms);
    const startTs = eps.reduce((m, e) => (e.start_ts < m ? e.start_ts : m), eps[0]!.start_ts);
    out.push({
      sessionId,
      startTs,
      startMs: isoToMs(startTs),
      episodeIds: eps.map((e) => e.id),
      request: openingRequest(events),
      files: firstFiles(events),
      touched: failuresAndFixes(events),
    });
  }
  return out.sort((a, b) => a.startMs - b.startMs || a.sessionId.localeCompare(b.sessionId));
}

function openingRequest(events: readonly EngineEvent[]): string {
  return userMessages(events).find((m) => !isPlanMessage(m.text))?.text ?? "";
}

function firstFiles(events: readonly EngineEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.type !== "tool_call" && e.type !== "code_change") continue;
    for (const p of e.filePaths) {
      if (p === "." || p.startsWith("/") || p.startsWith("../") || out.includes(p)) continue;
      out.push(p);
      if (out.length >= FIRST_FILES) return out;
    }
  }
  return out;
}

function isFailure(e: EngineEvent): boolean {
  if (e.rejected) return false;
  if (e.type === "error") return true;
  if (e.type === "command_run" || e.type === "test_run") return (e.exitCode !== null && e.exitCode !== 0) || e.isError;
  return e.type === "tool_result" && e.isError;
}

/**
 * What the session's failures touched (their files, the identifiers and scripts their commands and
 * output name) and what the edits applied after the first failure (the fixes) touched.
 */
function failuresAndFixes(events: readonly EngineEvent[]): ReplaySession["touched"] {
  const touched = { files: new Set<string>(), identifiers: new Set<string>(), scripts: new Set<string>() };
  const failures = events.filter(isFailure);
  if (failures.length === 0) return touched;
  const firstMs = failures[0]!.ms;
  const words = (text: string) => {
    for (const id of citedIdentifiers(text.slice(0, 4000))) touched.identifiers.add(id.name);
    for (const s of citedScripts(text.slice(0, 2000))) touched.scripts.add(s);
  };
  for (const f of failures) {
    for (const p of f.filePaths) touched.files.add(p);
    words(`${f.command}\n${f.text}\n${f.output}`);
  }
  for (const fix of appliedChanges(events)) {
    if (fix.ms < firstMs) continue;
    for (const p of fix.filePaths) touched.files.add(p);
  }
  return touched;
}
