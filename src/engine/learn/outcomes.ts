/**
 * Outcome grading and decay (issue 15 item 3), run after episodes are extracted:
 * - a recipe whose commands failed in two or more later episodes, with no success after them, is
 *   demoted (importance halved) and flagged `recipe_failing`;
 * - a pitfall whose error comes back in a later episode after its recorded fix is flagged
 *   `fix_insufficient` (the lesson still matters: it keeps its importance);
 * - a pitfall served by an MCP call and then run into again gains importance (+0.1, once per episode);
 * - a memory neither served (no MCP call delivered it) nor seen again (no episode refreshed it) for
 *   `memory.decay_days` days since sqrl learned it (`learned_at`: its evidence may be much older, as
 *   in imported history) loses a fifth of its importance, once per such period — never below 0.05,
 *   never deleted.
 * A pinned memory's importance is the person's: none of these change it.
 * A decision or rule a later user statement contradicts is already superseded by the update step
 * (DELETE_AND_ADD with lineage). What this pass changed is kept in `memory_outcomes`.
 */
import type { Database } from "bun:sqlite";
import { isoToMs, nowIso } from "../../shared/time.ts";
import { currentItems, updateMemoryItem, type MemoryItem } from "../../sql/memory-items.ts";
import { commandRuns, mainStep } from "../events/commands.ts";
import { toEngineEvent } from "../events/event-view.ts";
import type { EventDTO } from "../../shared/event.ts";
import { failureKey } from "./extract/pitfalls.ts";
import { observationsOf, recordObservation } from "../../sql/observations.ts";
import { pinnedIds } from "../../sql/memory-marks.ts";

const DAY = 86_400_000;
export const DECAY_FACTOR = 0.8;
export const DECAY_FLOOR = 0.05;
/** Failing episodes (after the last success) that flag a recipe. */
export const RECIPE_FAILURES = 2;

export interface OutcomeResult {
  flagged: string[];
  decayed: string[];
  /** Pitfalls served and then run into again: importance raised. */
  promoted: string[];
}

interface OutcomeRow {
  memory_id: string;
  flag: string | null;
  flagged_at: string | null;
  decay_steps: number;
  decayed_at: string | null;
}

function outcomeOf(db: Database, id: string): OutcomeRow | null {
  return db
    .query(`SELECT memory_id, flag, flagged_at, decay_steps, decayed_at FROM memory_outcomes WHERE memory_id = ?`)
    .get(id) as OutcomeRow | null;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The commands a recipe runs: its backticked spans that look like a command line. */
export function recipeCommands(content: string): string[] {
  return [...content.matchAll(/`([^`\n]{3,160})`/g)]
    .map((m) => m[1]!.trim())
    .filter((c) => /\s/.test(c) || /^[\w.-]+$/.test(c));
}

type CommandRow = EventDTO & { episode_id: string; end_ts: string };

/**
 * Command events after `sinceIso`, with their episode and its end: of the given episodes only when
 * `episodes` is set (the engine's pass over what it just extracted, read through episode_events' key),
 * else all of them (a full pass).
 */
function commandEvents(db: Database, projectId: string, sinceIso: string, episodes?: readonly string[]): CommandRow[] {
  if (!episodes)
    return db
      .query(
        `SELECT e.*, ee.episode_id AS episode_id, ep.end_ts AS end_ts FROM events e JOIN episode_events ee ON ee.event_id = e.id JOIN episodes ep ON ep.id = ee.episode_id
         WHERE e.project_id = ? AND e.event_type IN ('command_run', 'test_run') AND e.timestamp > ? ORDER BY e.timestamp`,
      )
      .all(projectId, sinceIso) as CommandRow[];
  if (episodes.length === 0) return [];
  return db
    .query(
      `SELECT e.*, ee.episode_id AS episode_id, ep.end_ts AS end_ts FROM episode_events ee CROSS JOIN events e ON e.id = ee.event_id JOIN episodes ep ON ep.id = ee.episode_id
       WHERE ee.episode_id IN (SELECT value FROM json_each(?)) AND e.project_id = ? AND e.event_type IN ('command_run', 'test_run') AND e.timestamp > ? ORDER BY e.timestamp`,
    )
    .all(JSON.stringify(episodes), projectId, sinceIso) as CommandRow[];
}

/** Per episode after `sinceIso`, whether a recipe command passed or failed there (its last run wins). */
function commandHistory(
  db: Database,
  projectId: string,
  commands: readonly string[],
  sinceIso: string,
  episodes?: readonly string[],
): Array<{ episode: string; end: string; pass: boolean }> {
  const rows = commandEvents(db, projectId, sinceIso, episodes);
  const byEpisode = new Map<string, { end: string; pass: boolean }>();
  for (const r of rows) {
    const run = commandRuns([toEngineEvent(r)])[0];
    if (!run || (run.outcome !== "pass" && run.outcome !== "fail")) continue;
    const step = mainStep(run);
    const text = step?.base ?? step?.text ?? "";
    if (!commands.some((c) => text === c || text.startsWith(`${c} `) || c.startsWith(`${text} `) || c === step?.text))
      continue;
    byEpisode.set(r.episode_id, { end: r.end_ts, pass: run.outcome === "pass" });
  }
  return [...byEpisode].map(([episode, v]) => ({ episode, ...v })).sort((a, b) => (a.end < b.end ? -1 : 1));
}

/**
 * A recipe's history: from all events (a full pass), or — in the engine's pass over the episodes it
 * just extracted — from what earlier passes recorded plus those episodes (observations `recipe_run`),
 * so a pass reads its own batch, not the project's whole history.
 */
function recipeHistory(
  db: Database,
  projectId: string,
  item: MemoryItem,
  commands: readonly string[],
  episodes?: readonly string[],
): Array<{ episode: string; end: string; pass: boolean }> {
  if (!episodes) return commandHistory(db, projectId, commands, item.created_at);
  for (const h of commandHistory(db, projectId, commands, item.created_at, episodes))
    recordObservation(db, projectId, "recipe_run", item.id, h.episode, h.end, JSON.stringify({ pass: h.pass }));
  return observationsOf(db, projectId, "recipe_run", item.id).map((o) => ({
    episode: o.episode_id,
    end: o.observed_at,
    pass: (JSON.parse(o.candidate_json) as { pass: boolean }).pass,
  }));
}

function gradeRecipe(
  db: Database,
  projectId: string,
  item: MemoryItem,
  at: string,
  episodes?: readonly string[],
): boolean {
  const commands = recipeCommands(item.content);
  if (commands.length === 0) return false;
  const history = recipeHistory(db, projectId, item, commands, episodes).filter(
    (h) => h.episode !== item.source_episode_id,
  );
  const lastPass = history.map((h) => h.pass).lastIndexOf(true);
  const failing = history.slice(lastPass + 1).filter((h) => !h.pass);
  if (failing.length < RECIPE_FAILURES) return false;
  const reason = `its commands failed in ${failing.length} later episodes without a success since (last ${failing.at(-1)!.end})`;
  db.query(
    `INSERT INTO memory_outcomes (memory_id, flag, flag_reason, flagged_at) VALUES (?, 'recipe_failing', ?, ?)
     ON CONFLICT (memory_id) DO UPDATE SET flag = excluded.flag, flag_reason = excluded.flag_reason, flagged_at = excluded.flagged_at`,
  ).run(item.id, reason, at);
  updateMemoryItem(db, item.id, {
    importance: round2(Math.max(DECAY_FLOOR, item.importance / 2)),
    updated_at: item.updated_at,
  });
  return true;
}

/**
 * Later failures (episode, its end, the time of the failure) per pitfall key, after `sinceIso`: from
 * all events (a full pass), or — over the episodes just extracted — recorded as observations
 * (`failure_seen`, keyed by the failure's key) and read back for the keys asked.
 */
function failuresByKey(
  db: Database,
  projectId: string,
  sinceIso: string,
  keys: readonly string[],
  episodes?: readonly string[],
): Map<string, Array<{ episode: string; end: string; at: string }>> {
  const out = new Map<string, Array<{ episode: string; end: string; at: string }>>();
  for (const r of commandEvents(db, projectId, sinceIso, episodes)) {
    const run = commandRuns([toEngineEvent(r)])[0];
    const key = run ? failureKey(run) : null;
    if (!key) continue;
    if (episodes)
      recordObservation(
        db,
        projectId,
        "failure_seen",
        key,
        r.episode_id,
        r.timestamp,
        JSON.stringify({ end: r.end_ts }),
      );
    const list = out.get(key) ?? [];
    if (!list.some((f) => f.episode === r.episode_id))
      list.push({ episode: r.episode_id, end: r.end_ts, at: r.timestamp });
    out.set(key, list);
  }
  if (!episodes) return out;
  const seen = new Map<string, Array<{ episode: string; end: string; at: string }>>();
  for (const key of new Set(keys)) {
    const list: Array<{ episode: string; end: string; at: string }> = [];
    for (const o of observationsOf(db, projectId, "failure_seen", key))
      if (o.observed_at > sinceIso && !list.some((f) => f.episode === o.episode_id))
        list.push({
          episode: o.episode_id,
          end: (JSON.parse(o.candidate_json) as { end: string }).end,
          at: o.observed_at,
        });
    if (list.length > 0) seen.set(key, list);
  }
  return seen;
}

/** When each memory was last delivered by an MCP call (the trace in tool_calls). */
function lastServed(db: Database): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of db
    .query(`SELECT ts, memory_ids FROM tool_calls WHERE memory_ids != '[]' ORDER BY ts`)
    .all() as Array<{ ts: string; memory_ids: string }>) {
    try {
      for (const id of JSON.parse(r.memory_ids) as string[]) out.set(id, r.ts);
    } catch {
      // A damaged trace row says nothing about what was served.
    }
  }
  return out;
}

function gradePitfalls(
  db: Database,
  projectId: string,
  items: readonly MemoryItem[],
  at: string,
  result: OutcomeResult,
  episodes?: readonly string[],
): void {
  const pitfalls = items.filter((i) => i.type === "pitfall");
  if (pitfalls.length === 0) return;
  const oldest = pitfalls.reduce((m, i) => (i.created_at < m ? i.created_at : m), pitfalls[0]!.created_at);
  const failures = failuresByKey(
    db,
    projectId,
    oldest,
    pitfalls.map((i) => i.key),
    episodes,
  );
  if (failures.size === 0) return;
  const served = lastServed(db);
  for (const item of pitfalls) {
    const known = new Set([item.source_episode_id, ...item.evidence_episode_ids]);
    const again = (failures.get(item.key) ?? []).filter((f) => f.at > item.created_at && !known.has(f.episode));
    if (again.length === 0) continue;
    const o = outcomeOf(db, item.id);
    if (o?.flag !== "fix_insufficient") {
      db.query(
        `INSERT INTO memory_outcomes (memory_id, flag, flag_reason, flagged_at) VALUES (?, 'fix_insufficient', ?, ?)
         ON CONFLICT (memory_id) DO UPDATE SET flag = excluded.flag, flag_reason = excluded.flag_reason, flagged_at = excluded.flagged_at`,
      ).run(
        item.id,
        `the error came back after the recorded fix (episode ${again[0]!.episode}, ${again[0]!.end}): the fix was not sufficient`,
        at,
      );
      result.flagged.push(item.id);
    }
    // Served, then run into anyway: the warning matters more than its importance said.
    const servedAt = served.get(item.id);
    const afterServe = servedAt ? again.filter((f) => f.at > servedAt && f.at > (o?.flagged_at ?? "")) : [];
    if (afterServe.length > 0) {
      updateMemoryItem(db, item.id, {
        importance: round2(Math.min(1, item.importance + 0.1)),
        updated_at: item.updated_at,
      });
      // Counted up to now: the same failures never raise it twice.
      db.query(`UPDATE memory_outcomes SET flagged_at = ? WHERE memory_id = ?`).run(at, item.id);
      result.promoted.push(item.id);
    }
  }
}

/** Ids delivered by any MCP call since `sinceIso` (the trace in tool_calls). */
function servedSince(db: Database, sinceIso: string): Set<string> {
  const served = new Set<string>();
  for (const r of db
    .query(`SELECT memory_ids FROM tool_calls WHERE ts > ? AND memory_ids != '[]'`)
    .all(sinceIso) as Array<{ memory_ids: string }>) {
    try {
      for (const id of JSON.parse(r.memory_ids) as string[]) served.add(id);
    } catch {
      // A damaged trace row says nothing about what was served.
    }
  }
  return served;
}

/**
 * Grade the project's current memories against what happened since they were stored (one
 * transaction). With `episodes` (the engine, after extracting them) only those episodes are read and
 * what they showed is kept as observations for later passes — reading the whole history on every
 * batch made processing quadratic (100,000 events: 639 events/s, against 3,376 at 10,000). Without
 * it, the whole history is read (a full pass).
 */
export function gradeOutcomes(
  db: Database,
  projectId: string,
  nowMs: number,
  decayDays = 90,
  episodes?: readonly string[],
): OutcomeResult {
  const at = nowIso(nowMs);
  const cutoff = nowIso(nowMs - decayDays * DAY);
  const result: OutcomeResult = { flagged: [], decayed: [], promoted: [] };
  db.transaction(() => {
    const pinned = pinnedIds(db);
    const items = currentItems(db, projectId).filter((i) => !pinned.has(i.id));
    for (const item of items) {
      if (item.type !== "recipe" || outcomeOf(db, item.id)?.flag === "recipe_failing") continue;
      if (gradeRecipe(db, projectId, item, at, episodes)) result.flagged.push(item.id);
    }
    gradePitfalls(
      db,
      projectId,
      currentItems(db, projectId, ["pitfall"]).filter((i) => !pinned.has(i.id)),
      at,
      result,
      episodes,
    );
    const served = servedSince(db, cutoff);
    for (const item of currentItems(db, projectId)) {
      if (pinned.has(item.id) || served.has(item.id) || item.importance <= DECAY_FLOOR) continue;
      // Unused since it was last seen, and since sqrl learned it: imported history is not born decayed.
      if (item.updated_at > cutoff || item.learned_at > cutoff) continue;
      const o = outcomeOf(db, item.id);
      if (o?.decayed_at && isoToMs(o.decayed_at) > nowMs - decayDays * DAY) continue;
      db.query(
        `INSERT INTO memory_outcomes (memory_id, decay_steps, decayed_at) VALUES (?, 1, ?)
         ON CONFLICT (memory_id) DO UPDATE SET decay_steps = decay_steps + 1, decayed_at = excluded.decayed_at`,
      ).run(item.id, at);
      updateMemoryItem(db, item.id, {
        importance: round2(Math.max(DECAY_FLOOR, item.importance * DECAY_FACTOR)),
        updated_at: item.updated_at,
      });
      result.decayed.push(item.id);
    }
  }).immediate();
  return result;
}
