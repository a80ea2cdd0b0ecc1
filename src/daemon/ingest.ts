/**
 * The one place where normalized events become rows: project by cwd (longest registered root that
 * contains it; unregistered paths skipped), repo-relative file paths, redaction and truncation
 * (sanitize.ts) BEFORE anything is written, dedup hash, `insertEvents` in big per-project transactions.
 */
import type { Database } from "bun:sqlite";
import { isAbsolute, relative, resolve } from "node:path";
import type { EventContent, EventDTO, NormalizedEvent } from "../shared/event.ts";
import { checkoutRoot, gitDirs } from "../shared/git.ts";
import { isWithin, projectForPath } from "../shared/projects.ts";
import { insertEvents, insertPackedEvents } from "../sql/events.ts";
import { openProjectDb } from "../sql/open.ts";
import { projectPaths } from "../shared/paths.ts";
import { canonicalStruct, eventIdFromHash, hashStruct } from "./dedup.ts";
import type { ToolUseInfo } from "./normalize/types.ts";
import { commandReadsEnvFile, isEnvFilePath, redactText } from "../shared/privacy/redact.ts";
import { sanitizeContent } from "../shared/privacy/sanitize.ts";

/** Opens each project's data.db once and keeps it open. */
export class ProjectDbPool {
  private readonly dbs = new Map<string, Database>();

  get(root: string): Database {
    let db = this.dbs.get(root);
    if (!db) {
      db = openProjectDb(root);
      db.exec("PRAGMA cache_size = -32768"); // 32 MiB: big ingest batches keep the indexes in memory
      db.exec("PRAGMA wal_autocheckpoint = 8192"); // fewer checkpoint fsyncs during a backfill (WAL up to ~32 MiB)
      this.dbs.set(root, db);
    }
    return db;
  }

  close(root?: string): void {
    for (const [r, db] of this.dbs) {
      if (root !== undefined && r !== root) continue;
      db.close();
      this.dbs.delete(r);
    }
  }
}

export interface IngestContext {
  /** Registered project roots. */
  projects: readonly string[];
  userId: string;
  pool: ProjectDbPool;
  /** When set, only these roots receive events (a rescan for newly registered projects). */
  only?: ReadonlySet<string>;
}

export interface IngestResult {
  added: number;
  duplicates: number;
  /** Events whose cwd is in no registered project (or outside `only`). */
  skipped: number;
  /** Of the skipped, per working directory that no registered project contains: how many events. */
  unmatched?: Record<string, number>;
  /** Rows added per project root. */
  addedByProject: Map<string, number>;
}

/** At most this many distinct unmatched folders are counted (a machine's whole history stays small). */
const MAX_UNMATCHED = 100;
/** The key of events that name no working directory at all. */
export const NO_CWD = "(no working directory)";

/** Add `from`'s unmatched counts into `into` (bounded). */
export function mergeUnmatched(into: Record<string, number>, from: Record<string, number> | undefined): void {
  if (!from) return;
  for (const [cwd, n] of Object.entries(from))
    if (cwd in into || Object.keys(into).length < MAX_UNMATCHED) into[cwd] = (into[cwd] ?? 0) + n;
}

export function emptyIngestResult(): IngestResult {
  return { added: 0, duplicates: 0, skipped: 0, addedByProject: new Map() };
}

export function mergeIngestResult(into: IngestResult, r: IngestResult): void {
  into.added += r.added;
  into.duplicates += r.duplicates;
  into.skipped += r.skipped;
  if (r.unmatched) mergeUnmatched((into.unmatched ??= {}), r.unmatched);
  for (const [k, v] of r.addedByProject) into.addedByProject.set(k, (into.addedByProject.get(k) ?? 0) + v);
}

/** cwd → the top of the linked worktree of `root` it is in (null: none), memoized per (root, cwd). */
const worktreeTops = new Map<string, string | null>();

function worktreeTop(root: string, cwd: string): string | null {
  const key = `${root}\0${cwd}`;
  let top = worktreeTops.get(key);
  if (top === undefined) {
    const t = checkoutRoot(cwd);
    const a = t && t !== root ? gitDirs(t) : null;
    const b = a ? gitDirs(root) : null;
    top = a && b && a.commonDir === b.commonDir ? t : null;
    if (worktreeTops.size > 1000) worktreeTops.clear();
    worktreeTops.set(key, top);
  }
  return top;
}

/**
 * Paths made repo-relative: relative ones resolve against the record's cwd first. A session in a
 * linked worktree of the project (same git common directory) has its paths made relative to that
 * worktree, so they name the same files as in the main checkout.
 */
export function repoRelativePaths(paths: readonly string[], root: string, cwd: string | null): string[] {
  const out = new Set<string>();
  const inside = normalAbsolute(root) ? `${root}/` : null;
  for (const p of paths) {
    if (!p) continue;
    // An absolute path already in normal form under a normal root: `relative` would only cut the
    // root off. Most paths are (tool inputs name absolute files); path.resolve/relative for each
    // cost ~15 ms on the ingest bench (30,283 events).
    if (inside !== null && p.startsWith(inside) && normalTail(p, inside.length)) {
      out.add(p.slice(inside.length));
      continue;
    }
    const abs = isAbsolute(p) ? p : resolve(cwd ?? root, p);
    if (isWithin(abs, root)) out.add(relative(root, abs) || ".");
    else {
      const tree = cwd && !isWithin(cwd, root) ? worktreeTop(root, cwd) : null;
      out.add(tree && isWithin(abs, tree) ? relative(tree, abs) || "." : p);
    }
  }
  return [...out];
}

/** `/a/b`: absolute, no empty, `.` or `..` segment, no trailing slash (what `resolve` leaves as is). */
function normalAbsolute(path: string): boolean {
  return path.length > 1 && path.charCodeAt(0) === 47 && normalTail(path, 1);
}

/** From `from` on, `path` is one or more segments with no empty, `.` or `..` one and no trailing slash. */
function normalTail(path: string, from: number): boolean {
  let start = from;
  for (let i = from; i <= path.length; i++) {
    if (i < path.length && path.charCodeAt(i) !== 47) continue;
    const len = i - start;
    if (len === 0) return false;
    if (path.charCodeAt(start) === 46 && (len === 1 || (len === 2 && path.charCodeAt(start + 1) === 46))) return false;
    start = i + 1;
  }
  return true;
}

/** Build the stored row of one normalized event for a project (everything but the insert). */
export function toEventRow(e: NormalizedEvent, root: string, userId: string): EventDTO {
  // paths are stored too: a token in a path (`/tmp/ghp_…/x`, `?key=…`) is redacted like content
  const filePaths = repoRelativePaths(e.file_paths, root, e.cwd).map((p) => redactText(p));
  // a dotenv file read, or printed by a command (`cat .env`): every value in it is a secret
  const envFile =
    filePaths.some(isEnvFilePath) ||
    e.file_paths.some(isEnvFilePath) ||
    (typeof e.content.command === "string" && commandReadsEnvFile(e.content.command));
  const content = sanitizeContent(e.content, { envFile });
  if (typeof content.diff_summary === "string") content.diff_summary = content.diff_summary.split(`${root}/`).join("");
  const hash = hashStruct(
    canonicalStruct({
      project_id: root,
      source_tool: e.source_tool,
      event_type: e.event_type,
      session_id: e.session_id,
      timestamp: e.timestamp,
      file_paths: filePaths,
      content,
    }),
  );
  return {
    id: eventIdFromHash(hash),
    project_id: root,
    user_id: userId,
    source_tool: e.source_tool,
    session_id: e.session_id,
    timestamp: e.timestamp,
    event_type: e.event_type,
    content_json: JSON.stringify(content),
    file_paths: filePaths,
    hash,
    processed_at: null,
  };
}

/** Rows of a batch of events, grouped by project (in event order), and the events no project takes. */
export interface RoutedRows {
  byProject: Map<string, EventDTO[]>;
  skipped: number;
  /** Skipped events per working directory that no registered project contains. */
  unmatched?: Record<string, number>;
}

/**
 * Map each event to its project (longest registered root containing its cwd; unregistered paths and
 * roots outside `only` are skipped) and build its row. Pure: no database (runs in ingest workers).
 */
export function routeEvents(
  events: readonly NormalizedEvent[],
  projects: readonly string[],
  userId: string,
  only?: ReadonlySet<string>,
): RoutedRows {
  const out: RoutedRows = { byProject: new Map(), skipped: 0, unmatched: {} };
  let lastCwd: string | null = null;
  let lastRoot: string | undefined;
  for (const e of events) {
    // consecutive events share their cwd: resolve it once
    if (e.cwd !== lastCwd) {
      lastCwd = e.cwd;
      lastRoot = e.cwd ? projectForPath(resolve(e.cwd), projects) : undefined;
    }
    const root = lastRoot;
    if (!root || (only && !only.has(root))) {
      out.skipped++;
      if (!root) mergeUnmatched(out.unmatched!, { [e.cwd ? resolve(e.cwd) : NO_CWD]: 1 });
      continue;
    }
    let row: EventDTO;
    try {
      row = toEventRow(e, root, userId);
    } catch {
      out.skipped++; // an event no row can be built from is skipped alone, never its batch
      continue;
    }
    let rows = out.byProject.get(root);
    if (!rows) out.byProject.set(root, (rows = []));
    rows.push(row);
  }
  return out;
}

/**
 * Writing to some projects failed (each named with its file); the others' rows are committed. The
 * caller keeps its read position, so the failed rows are written again later (dedup absorbs the rest).
 */
export class ProjectWriteError extends Error {
  override readonly name = "ProjectWriteError";
  constructor(
    readonly failures: ReadonlyArray<{ root: string; error: Error }>,
    readonly partial: IngestResult,
  ) {
    super(failures.map((f) => `${f.root} (${projectPaths.db(f.root)}): ${f.error.message}`).join("; "));
  }
  /** The first cause's SQLite code (SQLITE_FULL, SQLITE_CORRUPT…), when there is one. */
  get code(): string | undefined {
    return (this.failures[0]?.error as { code?: string } | undefined)?.code;
  }
}

/** Insert rows per project, one transaction each; a project that fails does not stop the others. */
function insertEach<T>(
  entries: Iterable<readonly [string, T]>,
  skipped: number,
  insert: (root: string, rows: T) => { added: number; duplicates: number },
  unmatched?: Record<string, number>,
): IngestResult {
  const result = emptyIngestResult();
  result.skipped = skipped;
  if (unmatched && Object.keys(unmatched).length > 0) result.unmatched = { ...unmatched };
  const failures: Array<{ root: string; error: Error }> = [];
  for (const [root, rows] of entries) {
    let res: { added: number; duplicates: number };
    try {
      res = insert(root, rows);
    } catch (err) {
      failures.push({ root, error: err as Error });
      continue;
    }
    result.added += res.added;
    result.duplicates += res.duplicates;
    if (res.added > 0) result.addedByProject.set(root, (result.addedByProject.get(root) ?? 0) + res.added);
  }
  if (failures.length > 0) throw new ProjectWriteError(failures, result);
  return result;
}

/** Insert routed rows, one transaction per project. */
export function insertRouted(routed: RoutedRows, pool: ProjectDbPool): IngestResult {
  return insertEach(
    routed.byProject,
    routed.skipped,
    (root, rows) => insertEvents(pool.get(root), rows),
    routed.unmatched,
  );
}

/** Insert rows packed by a worker (see file-rows.ts; each from index `from` on), one transaction per project. */
export function insertPacked(
  byProject: ReadonlyArray<readonly [string, readonly (string | null)[]]>,
  skipped: number,
  userId: string,
  pool: ProjectDbPool,
  from = 0,
): IngestResult {
  return insertEach(byProject, skipped, (root, packed) =>
    insertPackedEvents(pool.get(root), root, userId, packed, from),
  );
}

/** The contract's entry point: write normalized events to their projects' data.db. */
export function ingestNormalized(events: readonly NormalizedEvent[], ctx: IngestContext): IngestResult {
  return insertRouted(routeEvents(events, ctx.projects, ctx.userId, ctx.only), ctx.pool);
}

/** Find a stored tool_call/code_change by tool_use_id (the normalizer's map was lost in a restart). */
export function lookupStoredToolUse(
  ctx: IngestContext,
  cwd: string | null,
  sessionId: string | null,
  toolUseId: string,
): ToolUseInfo | undefined {
  const root = cwd ? projectForPath(resolve(cwd), ctx.projects) : undefined;
  if (!root) return undefined;
  return lookupToolUseIn(ctx.pool.get(root), root, sessionId, toolUseId);
}

/** The same lookup in one project's data.db (any connection, read-only ones included). */
export function lookupToolUseIn(
  db: Database,
  root: string,
  sessionId: string | null,
  toolUseId: string,
): ToolUseInfo | undefined {
  const row = db
    .query(
      `SELECT content_json FROM events WHERE project_id = ? AND session_id IS ? AND event_type IN ('tool_call', 'code_change')
         AND json_extract(content_json, '$.tool_use_id') = ? LIMIT 1`,
    )
    .get(root, sessionId, toolUseId) as { content_json: string } | null;
  if (!row) return undefined;
  const c = JSON.parse(row.content_json) as EventContent;
  return {
    tool: c.tool ?? "unknown",
    input: c.command !== undefined && c.input === undefined ? { command: c.command } : c.input,
  };
}
