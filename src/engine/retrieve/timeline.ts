/**
 * `GET /timeline`: the compressed layer of the two-layer history — episodes in time order with their
 * summary, time, files and outcome. The newest episodes win the budget; the text reads oldest first.
 * `recall` expands one episode back to its raw events.
 */
import type { Database } from "bun:sqlite";
import { Timeline, type TimelineEpisode, type TimelineQuery } from "../../shared/api.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { scrubLocalPaths } from "../../shared/privacy/local-paths.ts";
import { redactText } from "../../shared/privacy/redact.ts";
import { parseSince } from "../../shared/since.ts";
import { nowIso, relativeTime } from "../../shared/time.ts";
import { packBlocks, type Block } from "./render/budget.ts";
import { listItem, oneLine, shortPaths, statesOutcome } from "./render/markdown.ts";
import type { RetrievalContext } from "./retrieval-context.ts";

export type { TimelineEpisode };

interface EpisodeRow {
  id: string;
  session_id: string | null;
  start_ts: string;
  end_ts: string;
  event_count: number;
  summary: string;
  importance: number;
  files: string | null;
  outcome: string | null;
}

const SELECT_EPISODES = `SELECT e.id, e.session_id, e.start_ts, e.end_ts, e.event_count, e.summary, e.importance,
  s.file_paths AS files, s.outcome AS outcome FROM episodes e LEFT JOIN episode_state s ON s.episode_id = e.id`;

/** An episode as the read path shows it: paths repo-relative, home folders as `~` (they reach models). */
function toEpisode(r: EpisodeRow, root: string): TimelineEpisode {
  let files: string[] = [];
  try {
    files = r.files ? (JSON.parse(r.files) as string[]).map((f) => scrubLocalPaths(f, root)) : [];
  } catch {}
  return {
    episode_id: r.id,
    session_id: r.session_id,
    start_ts: r.start_ts,
    end_ts: r.end_ts,
    event_count: r.event_count,
    summary: scrubLocalPaths(r.summary, root),
    importance: r.importance,
    file_paths: files,
    outcome: scrubLocalPaths(r.outcome ?? "", root),
  };
}

export function getEpisode(db: Database, projectId: string, episodeId: string): TimelineEpisode {
  const row = db
    .query(`${SELECT_EPISODES} WHERE e.project_id = ? AND e.id = ?`)
    .get(projectId, episodeId) as EpisodeRow | null;
  if (!row)
    throw new NotFoundError(
      `Episode ${episodeId} is not in ${projectId}. List episodes with \`sqrl timeline\`.`,
      "episode_not_found",
    );
  return toEpisode(row, projectId);
}

/** `- 3 days ago · 42 events · ep_x: summary. Files: a, b. Outcome: tests green.` */
export function episodeLine(e: TimelineEpisode, nowMs: number): string {
  const summary = oneLine(e.summary) || "(not summarized yet)";
  const files = e.file_paths.length > 0 ? ` Files: ${shortPaths(e.file_paths, 3)}.` : "";
  const outcome = e.outcome && !statesOutcome(summary, oneLine(e.outcome)) ? ` Outcome: ${oneLine(e.outcome)}.` : "";
  return listItem(
    `${relativeTime(e.start_ts, nowMs)} · ${e.event_count} event${e.event_count === 1 ? "" : "s"} · ${e.episode_id}: ${summary.replace(/\.?$/, ".")}${files}${outcome}`,
  );
}

export async function timeline(ctx: RetrievalContext, q: TimelineQuery): Promise<Timeline> {
  const budget = q.context_budget_tokens ?? ctx.budgets.search;
  // "yesterday", "2 days ago", ISO…: parsed here, refused with the forms that work, never misread.
  const sinceIso = q.since ? parseSince(q.since, ctx.nowMs) : undefined;
  const since = sinceIso ? "AND e.start_ts >= ?" : "";
  const params: Array<string | number> = [ctx.projectId, ...(sinceIso ? [sinceIso] : []), q.limit];
  const newestFirst = (
    ctx.db
      .query(`${SELECT_EPISODES} WHERE e.project_id = ? ${since} ORDER BY e.start_ts DESC, e.id DESC LIMIT ?`)
      .all(...params) as EpisodeRow[]
  ).map((r) => toEpisode(r, ctx.projectId));
  const n = newestFirst.length;
  const blocks: Block[] = newestFirst.map((e, i) => ({
    id: e.episode_id,
    text: episodeLine(e, ctx.nowMs),
    order: n - i,
  }));
  const packed = packBlocks({
    header: "## Project timeline (oldest first)",
    blocks,
    budget,
    counter: ctx.counter,
    noun: "episodes",
    emptyText: sinceIso
      ? `No episodes since ${sinceIso} ("${redactText(q.since ?? "")}").`
      : "No episodes recorded yet.",
  });
  const byId = new Map(newestFirst.map((e) => [e.episode_id, e]));
  const shown = packed.shown
    .map((b) => byId.get(b.id)!)
    .sort((a, b) => a.start_ts.localeCompare(b.start_ts) || a.episode_id.localeCompare(b.episode_id));
  return Timeline.parse({
    type: "timeline",
    project_id: ctx.projectId,
    generated_at: nowIso(ctx.nowMs),
    token_estimate: packed.tokens,
    episodes: shown,
    markdown: packed.markdown,
  });
}
