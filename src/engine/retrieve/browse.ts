/**
 * What `sqrl ui` shows of a project's memory: the paginated list (filters, and search through the
 * same ranker as search_memory), one memory with its whole lineage and evidence, the project
 * overview and the MCP call log. Reads only.
 */
import type { Database } from "bun:sqlite";
import {
  CallLog,
  MemoryDetail,
  MemoryList,
  ProjectFiles,
  ProjectOverview,
  type MemoryListQuery,
  type MemoryRow,
  type MemoryType,
} from "../../shared/api.ts";
import { utcDay } from "../../shared/time.ts";
import { eventsByIds } from "../../sql/events.ts";
import { getMemoryItem, predecessors, rowToItem, type MemoryItem } from "../../sql/memory-items.ts";
import { marksOf } from "../../sql/memory-marks.ts";
import { countToolCalls, listToolCalls } from "../../sql/tool-calls.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { styleDetail, styleRows } from "./browse-user.ts";
import { captureTimes } from "./capture-times.ts";
import { eventText, memoryEvidence } from "./event-text.ts";
import { memoryOutcome, outcomeNotes } from "./memory-outcome.ts";
import { originLabel, originOf } from "./render/origin.ts";
import type { RetrievalContext } from "./retrieval-context.ts";
import { searchMemory } from "./search.ts";
import { isViewStale, type ViewMetaRow } from "./views/view-staleness.ts";
import type { LlmUsageReport } from "../llm/usage-report.ts";

type Status = MemoryRow["status"];

const SELECT = `SELECT m.*, mm.confidence, mm.file_paths, mm.evidence_episode_ids, mm.valid_from, mm.valid_to,
  mm.superseded_by, mm.superseded_by_episode, mm.decision, mm.extractor, mm.learned_at
  FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id`;

const STATUS_SQL: Record<MemoryListQuery["status"], string> = {
  active: "m.deleted = 0",
  superseded: "m.deleted = 1 AND mm.superseded_by IS NOT NULL",
  forgotten: "m.deleted = 1 AND mm.superseded_by IS NULL",
  all: "1",
};

export function statusOf(item: Pick<MemoryItem, "deleted" | "superseded_by">): Status {
  return !item.deleted ? "active" : item.superseded_by ? "superseded" : "forgotten";
}

function marksByIds(db: Database, ids: readonly string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (ids.length === 0) return out;
  const rows = db
    .query(`SELECT memory_id, kind FROM memory_marks WHERE memory_id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as Array<{ memory_id: string; kind: string }>;
  for (const r of rows) {
    const set = out.get(r.memory_id) ?? new Set<string>();
    set.add(r.kind);
    out.set(r.memory_id, set);
  }
  return out;
}

/** First evidence line of each item: one query for the page's events. */
function quotes(db: Database, items: readonly MemoryItem[]): Map<string, string> {
  const firstIds = items.map((i) => i.source_event_ids[0]).filter((x): x is string => typeof x === "string");
  const byEvent = new Map(eventsByIds(db, firstIds).map((e) => [e.id, eventText(e, 200)]));
  return new Map(items.map((i) => [i.id, byEvent.get(i.source_event_ids[0] ?? "") ?? ""]));
}

function lineageDepth(db: Database, id: string): number {
  const row = db
    .query(
      `WITH RECURSIVE back(id, n) AS (SELECT ?, 0 UNION ALL SELECT mm.memory_id, back.n + 1 FROM memory_meta mm JOIN back ON mm.superseded_by = back.id WHERE back.n < 1000)
       SELECT MAX(n) AS n FROM back`,
    )
    .get(id) as { n: number | null };
  return row.n ?? 0;
}

function toRows(
  db: Database,
  items: readonly MemoryItem[],
  ranked?: Map<string, { score: number; reason: string }>,
): MemoryRow[] {
  const marks = marksByIds(
    db,
    items.map((i) => i.id),
  );
  const quote = quotes(db, items);
  return items.map((i) => {
    const episodes = new Set(
      [i.source_episode_id, ...i.evidence_episode_ids].filter((x): x is string => typeof x === "string"),
    );
    const r = ranked?.get(i.id);
    return {
      memory_id: i.id,
      type: i.type,
      scope: i.scope,
      key: i.key,
      content: i.content,
      tags: i.tags,
      importance: i.importance,
      confidence: i.confidence,
      created_at: i.created_at,
      updated_at: i.updated_at,
      status: statusOf(i),
      pinned: marks.get(i.id)?.has("pin") ?? false,
      wrong: marks.get(i.id)?.has("wrong") ?? false,
      decision: i.decision,
      extractor: i.extractor,
      origin: originLabel(originOf(i)),
      evidence: {
        quote: quote.get(i.id) ?? "",
        episode_id: i.source_episode_id ?? i.evidence_episode_ids[0] ?? null,
        episode_count: episodes.size,
        event_count: i.source_event_ids.length,
      },
      replaced: lineageDepth(db, i.id),
      superseded_by: i.superseded_by,
      ...(r ? { score: r.score, reason: r.reason } : {}),
    };
  });
}

function where(q: MemoryListQuery): { sql: string; params: Array<string | number> } {
  const parts = ["m.project_id = ?", STATUS_SQL[q.status]];
  const params: Array<string | number> = [q.project_id];
  if (q.types.length > 0) {
    parts.push("m.type IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(q.types));
  }
  if (q.scope) {
    parts.push("m.scope = ?");
    params.push(q.scope);
  }
  return { sql: parts.join(" AND "), params };
}

/** Search results the list can hold: the ranker's top hits (it scores; the list pages through them). */
const SEARCH_DEPTH = 100;

/**
 * The memory list. Without search text: newest first, paged in SQL (an index on (project_id,
 * updated_at)). With text and status `active`: the search_memory ranker's order with its score and
 * reason. With text and another status (those rows are out of the search index): a text match.
 */
export async function listMemories(ctx: RetrievalContext, q: MemoryListQuery): Promise<MemoryList> {
  const db = ctx.db;
  const text = q.q?.trim() ?? "";
  let items: MemoryItem[] = [];
  let total = 0;
  let ranked: Map<string, { score: number; reason: string }> | undefined;
  if (text && q.status === "active") {
    const res = await searchMemory(ctx, {
      project_id: q.project_id,
      query: text,
      top_k: SEARCH_DEPTH,
      types: q.types,
      scope_paths: [],
      context_budget_tokens: 100_000,
      exclude_memory_ids: [],
    });
    const hits = res.results;
    const all = hits
      .map((h) => getMemoryItem(db, h.memory_id))
      .filter((i): i is MemoryItem => i !== undefined && (!q.scope || i.scope === q.scope));
    total = all.length;
    ranked = new Map(hits.map((h) => [h.memory_id, { score: h.score, reason: h.reason }]));
    items = all.slice(q.offset, q.offset + q.limit);
  } else {
    const w = where(q);
    const like = text ? " AND (m.content LIKE ? ESCAPE '\\' OR m.key LIKE ? ESCAPE '\\')" : "";
    const likeParams = text
      ? [`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]
      : [];
    // Active and all need no meta row: counting and paging then walk the (project_id, updated_at)
    // index alone (rowid breaks ties, so no sort), and only the page's rows are joined and read.
    const from = `FROM memory_items m${q.status === "superseded" || q.status === "forgotten" ? " JOIN memory_meta mm ON mm.memory_id = m.id" : ""}`;
    const projectTotal = (
      db.query(`SELECT COUNT(*) AS n ${from} WHERE ${w.sql}${like}`).get(...w.params, ...likeParams) as { n: number }
    ).n;
    const page = (offset: number, limit: number) =>
      limit <= 0
        ? []
        : (
            db
              .query(
                `${SELECT} WHERE m.rowid IN (SELECT m.rowid ${from} WHERE ${w.sql}${like} ORDER BY m.updated_at DESC, m.rowid DESC LIMIT ? OFFSET ?) ORDER BY m.updated_at DESC, m.rowid DESC`,
              )
              .all(...w.params, ...likeParams, limit, offset) as Array<Record<string, unknown>>
          ).map(rowToItem);
    // Global style (user.db) joins the list unless the filters leave it out.
    const withStyle =
      ctx.userDb !== undefined && q.scope !== "project" && (q.types.length === 0 || q.types.includes("user_style"));
    const style = withStyle ? styleRows(ctx.userDb!, ctx.userId, q) : [];
    if (style.length === 0) {
      return MemoryList.parse({
        type: "memory_list",
        project_id: q.project_id,
        total: projectTotal,
        offset: q.offset,
        limit: q.limit,
        items: toRows(db, page(q.offset, q.limit)),
      });
    }
    // Merge newest first without reading the project's rows before the page: a style row's place is
    // its own index plus the project rows at least as new (a tie goes to the project row); project
    // rows fill the other places in order.
    const newer = db.prepare(`SELECT COUNT(*) AS n ${from} WHERE ${w.sql}${like} AND m.updated_at >= ?`);
    const placed = style.map((r, j) => ({
      row: r,
      pos: j + (newer.get(...w.params, ...likeParams, r.updated_at) as { n: number }).n,
    }));
    const end = q.offset + q.limit;
    const inPage = placed.filter((p) => p.pos >= q.offset && p.pos < end);
    const before = placed.filter((p) => p.pos < q.offset).length;
    const total = projectTotal + style.length;
    const projectRows = toRows(db, page(q.offset - before, Math.min(end, total) - q.offset - inPage.length));
    const out: MemoryRow[] = [];
    for (let pos = q.offset, pi = 0; pos < Math.min(end, total); pos++) {
      const s = inPage.find((p) => p.pos === pos);
      if (s) out.push(s.row);
      else if (pi < projectRows.length) out.push(projectRows[pi++]!);
    }
    return MemoryList.parse({
      type: "memory_list",
      project_id: q.project_id,
      total,
      offset: q.offset,
      limit: q.limit,
      items: out,
    });
  }
  return MemoryList.parse({
    type: "memory_list",
    project_id: q.project_id,
    total,
    offset: q.offset,
    limit: q.limit,
    items: toRows(db, items, ranked),
  });
}

/** One memory: every version of its lineage (oldest first), its marks, evidence episodes and events. */
export function memoryDetail(db: Database, projectId: string, id: string, userDb?: Database): MemoryDetail {
  const item = getMemoryItem(db, id);
  if (!item && userDb) {
    const style = styleDetail(userDb, db, projectId, id);
    if (style) return MemoryDetail.parse(style);
  }
  if (!item || item.project_id !== projectId)
    throw new NotFoundError(
      `No memory ${id} in ${projectId}. Ids are listed on the Memories page and by \`sqrl search\`.`,
      "memory_not_found",
    );
  const older = predecessors(db, id).reverse();
  const newer: MemoryItem[] = [];
  for (let next = item.superseded_by, i = 0; next && i < 1000; i++) {
    const s = getMemoryItem(db, next);
    if (!s) break;
    newer.push(s);
    next = s.superseded_by;
  }
  const version = (m: MemoryItem) => ({
    memory_id: m.id,
    content: m.content,
    decision: m.decision,
    extractor: m.extractor,
    valid_from: m.valid_from,
    valid_to: m.valid_to,
    status: statusOf(m),
    superseded_by_episode: m.superseded_by_episode,
  });
  const evidence = memoryEvidence(db, item, 400);
  const episodes = evidence.episodes.map(({ id, ...e }) => ({ episode_id: id, ...e }));
  const events = evidence.events.map(({ id, ...e }) => ({ event_id: id, ...e }));
  return MemoryDetail.parse({
    type: "memory_detail",
    project_id: projectId,
    item: toRows(db, [item])[0],
    tags: item.tags,
    file_paths: item.file_paths,
    lineage: [...older, item, ...newer].map(version),
    marks: marksOf(db, id).map((m) => ({ kind: m.kind, at: m.at, reason: m.reason, importance: m.importance })),
    notes: outcomeNotes(memoryOutcome(db, id)),
    episodes,
    events,
  });
}

/** Counts of a project for the overview screen. */
export function projectOverview(
  db: Database,
  projectId: string,
  opts: { nowMs: number; llm: LlmUsageReport; userDb?: Database; userId?: string },
): ProjectOverview {
  const events = db
    .query(
      `SELECT COUNT(*) AS total, COALESCE(SUM(processed_at IS NULL), 0) AS unprocessed, MAX(timestamp) AS last_at FROM events`,
    )
    .get() as { total: number; unprocessed: number; last_at: string | null };
  const episodes = db
    .query(
      `SELECT COUNT(*) AS total, COALESCE(SUM(s.status = 'open'), 0) AS open FROM episodes e LEFT JOIN episode_state s ON s.episode_id = e.id`,
    )
    .get() as { total: number; open: number };
  const memories: Record<string, { active: number; superseded: number; forgotten: number }> = {};
  const rows = db
    .query(
      `SELECT m.type AS type, SUM(m.deleted = 0) AS active, SUM(m.deleted = 1 AND mm.superseded_by IS NOT NULL) AS superseded, SUM(m.deleted = 1 AND mm.superseded_by IS NULL) AS forgotten
       FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id WHERE m.project_id = ? GROUP BY m.type`,
    )
    .all(projectId) as Array<{ type: MemoryType; active: number; superseded: number; forgotten: number }>;
  for (const r of rows) memories[r.type] = { active: r.active, superseded: r.superseded, forgotten: r.forgotten };
  const marks = db
    .query(
      `SELECT COALESCE(SUM(kind = 'pin'), 0) AS pinned, COALESCE(SUM(kind = 'wrong'), 0) AS wrong FROM memory_marks`,
    )
    .get() as { pinned: number; wrong: number };
  const views = (db.query(`SELECT * FROM view_meta ORDER BY view_name`).all() as ViewMetaRow[]).map((v) => ({
    name: v.view_name,
    generated_at: v.last_generated,
    stale: isViewStale(v, events.total, opts.nowMs),
    events_since: Math.max(0, events.total - v.events_count_at_gen),
  }));
  const sources = db
    .query(
      `SELECT source_tool, COUNT(*) AS events, MAX(timestamp) AS last_at FROM events GROUP BY source_tool ORDER BY last_at DESC`,
    )
    .all() as Array<{ source_tool: string; events: number; last_at: string }>;
  const captured = captureTimes(db, projectId);
  const sourcesCaptured = sources.map((src) => ({ ...src, captured_at: captured.get(src.source_tool) ?? null }));
  return ProjectOverview.parse({
    type: "project_overview",
    project_id: projectId,
    events,
    episodes,
    memories,
    pinned: marks.pinned,
    wrong: marks.wrong,
    global_style:
      opts.userDb && opts.userId
        ? (
            opts.userDb.query(`SELECT COUNT(*) AS n FROM user_style_items WHERE user_id = ?`).get(opts.userId) as {
              n: number;
            }
          ).n
        : 0,
    views,
    sources: sourcesCaptured,
    llm: opts.llm,
  });
}

/** The MCP tool-call log (newest first) and tokens served per day over the last `days` days. */
export function callLog(
  db: Database,
  projectId: string,
  opts: { limit: number; days: number; nowMs: number },
): CallLog {
  const calls = listToolCalls(db, { limit: opts.limit });
  const since = utcDay(opts.nowMs - (opts.days - 1) * 86_400_000);
  const rows = db
    .query(
      `SELECT substr(ts, 1, 10) AS day, COALESCE(SUM(token_estimate), 0) AS tokens, COUNT(*) AS calls FROM tool_calls WHERE ts >= ? GROUP BY day`,
    )
    .all(since) as Array<{ day: string; tokens: number; calls: number }>;
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const perDay = [];
  for (let i = opts.days - 1; i >= 0; i--) {
    const day = utcDay(opts.nowMs - i * 86_400_000);
    const r = byDay.get(day);
    perDay.push({ day, tokens: r?.tokens ?? 0, calls: r?.calls ?? 0 });
  }
  return CallLog.parse({
    type: "call_log",
    project_id: projectId,
    total: countToolCalls(db),
    calls: calls.map((c) => ({
      ...c,
      token_estimate: c.token_estimate === null ? null : Math.round(c.token_estimate),
    })),
    per_day: perDay,
  });
}

/** Paths the project's active memory mentions, most mentioned first (at most 300). */
export function projectFiles(db: Database, projectId: string): ProjectFiles {
  const rows = db
    .query(
      `SELECT f.value AS path, COUNT(*) AS n FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id, json_each(mm.file_paths) f
       WHERE m.project_id = ? AND m.deleted = 0 GROUP BY f.value ORDER BY n DESC, f.value LIMIT 300`,
    )
    .all(projectId) as Array<{ path: string }>;
  return ProjectFiles.parse({ type: "project_files", project_id: projectId, files: rows.map((r) => r.path) });
}
