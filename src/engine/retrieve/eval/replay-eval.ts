/**
 * `sqrl eval`: replay a project's own sessions and measure what memory would have served. For each
 * session k after the first, the memory is rebuilt as it stood when k started (memory-at.ts), the
 * real task-context code is asked what it would have served for k's opening request and the files
 * k first opened or edited, and that is compared with what k needed (needed.ts). Baselines for the
 * benchmark: plain BM25 over the same items in the same budget, and serving nothing. Read only.
 */
import type { Database } from "bun:sqlite";
import { EvalReport, type EvalItem, type EvalRanker, type EvalSession } from "../../../shared/eval-report.ts";
import { TaskContextRequest } from "../../../shared/api.ts";
import { defaultCounter, type TokenCounter } from "../../../shared/tokens.ts";
import { rankLexical } from "../../../ranker/lexical.ts";
import { listEpisodes } from "../../../sql/episodes.ts";
import { isoToMs } from "../../../shared/time.ts";
import { packBlocks } from "../render/budget.ts";
import { memoryLine } from "../render/markdown.ts";
import { groupOf, SERVED_HEADINGS } from "../render/origin.ts";
import { lessonsOf } from "../rank/restatements.ts";
import { DEFAULT_BUDGETS, retrievalContext } from "../retrieval-context.ts";
import {
  isRelevant,
  MAX_SELECTED,
  rankTaskCandidates,
  ruleSubjectMatch,
  TASK_CONTEXT_HEADER,
  taskContext,
} from "../task-context.ts";
import { clipQuery } from "../query-text.ts";
import { analyzeQuery } from "../../../ranker/query.ts";
import { pinnedIds } from "../../../sql/memory-marks.ts";
import { allVersions, MemoryAt } from "./memory-at.ts";
import { anchorsOf, NeedIndex } from "./needed.ts";
import { projectSessions, type ReplaySession } from "./sessions.ts";
import { getMemoryItem, type MemoryItem } from "../../../sql/memory-items.ts";

export { EVAL_RANKERS, EvalItem, EvalReport, EvalSession } from "../../../shared/eval-report.ts";
export type { EvalRanker } from "../../../shared/eval-report.ts";

export interface EvalOptions {
  /** Only the last N evaluable sessions (default: all). */
  sessions?: number;
  budget?: number;
  ranker?: EvalRanker;
  counter?: TokenCounter;
  userId?: string;
  /** Called after each evaluated session. */
  progress?: (done: number, total: number, session: ReplaySession) => void;
}

/**
 * Lessons a session needed and how many it was served: needed items that restate one another count
 * once, and a served item that restates a needed one serves its lesson. A lesson often stands in two
 * wordings under two keys until the next consolidation pass merges them; which of them the task
 * context serves is the ranker's pick, and the session got the lesson either way (bench eval, issue 26
 * session 9: a replayed session needed one wording of the rtk lesson and was served the other).
 */
export function lessonCounts(
  db: Database,
  needed: readonly MemoryItem[],
  served: readonly MemoryItem[],
): { needed: number; served: number } {
  const neededIds = new Set(needed.map((i) => i.id));
  const servedIds = new Set(served.map((i) => i.id));
  const all = [...needed, ...served.filter((i) => !neededIds.has(i.id))];
  const lessons = lessonsOf(db, all).filter((l) => l.some((id) => neededIds.has(id)));
  return { needed: lessons.length, served: lessons.filter((l) => l.some((id) => servedIds.has(id))).length };
}

/** Replay the project's sessions against the memory standing before each (see the module comment). */
export async function evaluateProject(db: Database, projectId: string, opts: EvalOptions = {}): Promise<EvalReport> {
  const budget = opts.budget ?? DEFAULT_BUDGETS.task_context;
  const ranker = opts.ranker ?? "sqrl";
  const counter = opts.counter ?? defaultCounter;
  const sessions = projectSessions(db, projectId);
  const evaluable = sessions.filter((s, i) => i > 0 && s.request.length > 0);
  const chosen =
    opts.sessions !== undefined ? evaluable.slice(Math.max(0, evaluable.length - opts.sessions)) : evaluable;
  const episodes = listEpisodes(db, projectId, 1_000_000);
  const versions = allVersions(db, projectId, new Map(episodes.map((e) => [e.id, isoToMs(e.end_ts)])));
  const episodeStart = new Map(episodes.map((e) => [e.id, isoToMs(e.start_ts)]));
  const pins = new Map(
    (
      db.query(`SELECT memory_id, at FROM memory_marks WHERE kind = 'pin'`).all() as Array<{
        memory_id: string;
        at: string;
      }>
    ).map((r) => [r.memory_id, isoToMs(r.at)]),
  );
  const needIndex = new NeedIndex(versions, anchorsOf(db, versions));
  const mem = new MemoryAt(projectId, versions, episodeStart, pins, episodes);
  const out: EvalSession[] = [];
  const byReason = { met_by_extraction: 0, anchor_touched: 0 };
  const missed = { not_candidate: 0, below_gate: 0, cut: 0 };
  const items = new Map<string, EvalItem>();
  const itemOf = new Map(versions.map((v) => [v.item.id, v.item]));
  const tally = (id: string): EvalItem => {
    let t = items.get(id);
    if (!t) {
      const it = itemOf.get(id)!;
      t = {
        memory_id: id,
        type: it.type,
        key: it.key,
        content: it.content,
        served: 0,
        needed: 0,
        served_needed: 0,
        served_unused: 0,
      };
      items.set(id, t);
    }
    return t;
  };
  try {
    for (const s of chosen) {
      mem.advance(s.startMs);
      const standing = mem.ids();
      const needed = needIndex.needed(s, standing);
      const served = await serve(ranker, mem.db, projectId, s, { budget, counter, userId: opts.userId ?? "user" });
      if (ranker === "sqrl") {
        const lost = [...needed.keys()].filter((id) => !served.includes(id));
        if (lost.length > 0)
          for (const cause of (await whyMissed(mem.db, projectId, s, lost, opts.userId ?? "user")).values())
            missed[cause]++;
      }
      let neededServed = 0;
      let servedTokens = 0;
      let wasted = 0;
      for (const [id, why] of needed) {
        tally(id).needed++;
        byReason[why]++;
      }
      for (const id of served) {
        const t = tally(id);
        const tokens = counter.count(memoryLine(itemOf.get(id)!, s.startMs));
        t.served++;
        servedTokens += tokens;
        if (needed.has(id)) {
          t.served_needed++;
          neededServed++;
        } else {
          t.served_unused++;
          wasted += tokens;
        }
      }
      const lessons = lessonCounts(
        mem.db,
        [...needed.keys()].map((id) => itemOf.get(id)!),
        served.map((id) => itemOf.get(id)!),
      );
      out.push({
        session_id: s.sessionId,
        started_at: s.startTs,
        request: clipText(s.request, 160),
        files: s.files,
        standing: standing.size,
        needed: [...needed.keys()],
        served,
        needed_served: neededServed,
        needed_lessons: lessons.needed,
        lessons_served: lessons.served,
        served_tokens: servedTokens,
        wasted_tokens: wasted,
        abstained: served.length === 0,
      });
      opts.progress?.(out.length, chosen.length, s);
    }
  } finally {
    mem.close();
  }
  const neededTotal = out.reduce((n, s) => n + s.needed.length, 0);
  const neededServed = out.reduce((n, s) => n + s.needed_served, 0);
  const lessonsTotal = out.reduce((n, s) => n + s.needed_lessons, 0);
  const lessonsServed = out.reduce((n, s) => n + s.lessons_served, 0);
  const nothing = out.filter((s) => s.needed.length === 0);
  const abstained = nothing.filter((s) => s.abstained).length;
  return EvalReport.parse({
    project: projectId,
    ranker,
    budget,
    sessions_total: sessions.length,
    sessions_evaluated: out.length,
    served_recall: neededTotal > 0 ? neededServed / neededTotal : null,
    needed_total: neededTotal,
    needed_served: neededServed,
    lesson_recall: lessonsTotal > 0 ? lessonsServed / lessonsTotal : null,
    lessons_total: lessonsTotal,
    lessons_served: lessonsServed,
    needed_by_reason: byReason,
    missed_by_cause: ranker === "sqrl" ? missed : null,
    served_tokens: out.reduce((n, s) => n + s.served_tokens, 0),
    wasted_tokens: out.reduce((n, s) => n + s.wasted_tokens, 0),
    abstention: {
      sessions_nothing_needed: nothing.length,
      abstained,
      rate: nothing.length > 0 ? abstained / nothing.length : null,
    },
    sessions: out,
    items: [...items.values()].sort(
      (a, b) => b.served_needed - a.served_needed || b.served_unused - a.served_unused || b.needed - a.needed,
    ),
  });
}

interface ServeOptions {
  budget: number;
  counter: TokenCounter;
  userId: string;
}

/** Ids a ranker serves for the session's opening, best first, inside the budget. */
async function serve(
  ranker: EvalRanker,
  memDb: Database,
  projectId: string,
  s: ReplaySession,
  o: ServeOptions,
): Promise<string[]> {
  if (ranker === "none") return [];
  if (ranker === "bm25") return plainBm25(memDb, s, o);
  // The real get_task_context code on the memory as it stood, at that moment. Today's code is not the
  // code the session met, so the check against it is off; no LLM pass, no embeddings (offline).
  const ctx = retrievalContext(memDb, projectId, {
    nowMs: s.startMs,
    counter: o.counter,
    userId: o.userId,
    verify: false,
    budgets: { ...DEFAULT_BUDGETS, task_context: o.budget },
  });
  const req = TaskContextRequest.parse({
    project_id: projectId,
    task_description: s.request,
    active_file_paths: s.files,
    context_budget_tokens: o.budget,
  });
  return (await taskContext(ctx, req)).memory_ids;
}

type MissCause = "not_candidate" | "below_gate" | "cut";

/** Why task context did not serve each of `ids`, read from the same candidate ranking it uses. */
async function whyMissed(
  memDb: Database,
  projectId: string,
  s: ReplaySession,
  ids: readonly string[],
  userId: string,
): Promise<Map<string, MissCause>> {
  const ctx = retrievalContext(memDb, projectId, { nowMs: s.startMs, userId, verify: false });
  const text = clipQuery(s.request).text;
  const scored = new Map(
    (await rankTaskCandidates(ctx, { task_description: text, active_file_paths: s.files })).map((x) => [x.item.id, x]),
  );
  const taskStems = new Set(analyzeQuery(text).map((t) => t.stem));
  const pinned = pinnedIds(memDb);
  const out = new Map<string, MissCause>();
  for (const id of ids) {
    const x = scored.get(id);
    if (!x) out.set(id, "not_candidate");
    else if (isRelevant(x) || pinned.has(id) || ruleSubjectMatch(x.item, taskStems)) out.set(id, "cut");
    else out.set(id, "below_gate");
  }
  return out;
}

/** Plain BM25 over the same items: the opening request and file names as the query, best first, packed the same way. */
function plainBm25(memDb: Database, s: ReplaySession, o: ServeOptions): string[] {
  const query = [s.request, ...s.files].join(" ");
  const hits = rankLexical(memDb, query, { table: "memory_fts", idColumn: "memory_id", limit: MAX_SELECTED });
  if (hits.length === 0) return [];
  const blocks = hits.flatMap((h) => {
    const item = getMemoryItem(memDb, h.id);
    return item ? [{ id: item.id, group: groupOf(item), text: memoryLine(item, s.startMs) }] : [];
  });
  const packed = packBlocks({
    header: TASK_CONTEXT_HEADER,
    groups: SERVED_HEADINGS,
    blocks,
    budget: o.budget,
    counter: o.counter,
    emptyText: "",
  });
  return packed.shown.map((b) => b.id);
}

function clipText(s: string, max: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
