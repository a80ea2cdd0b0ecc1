/**
 * The one place where normalized events become rows: project by cwd (longest registered root that
 * contains it; unregistered paths skipped), repo-relative file paths, redaction and truncation
 * BEFORE anything is written, dedup hash, `insertEvents` in big per-project transactions.
 */
import type { Database } from "bun:sqlite";
import { isAbsolute, relative, resolve } from "node:path";
import type { EventContent, EventDTO, NormalizedEvent } from "../shared/event.ts";
import { isWithin, projectForPath } from "../shared/projects.ts";
import { insertEvents, insertPackedEvents } from "../sql/events.ts";
import { openProjectDb } from "../sql/open.ts";
import { canonicalStruct, eventIdFromHash, hashStruct } from "./dedup.ts";
import type { ToolUseInfo } from "./normalize/types.ts";
import { isEnvFilePath, isSecretKey, redactDeep, redactText, secretFlags } from "./redact.ts";
import { DEFAULT_OUTPUT_CHARS, DEFAULT_RAW_STRING_CHARS, DEFAULT_RAW_TOTAL_CHARS, truncateDeep, truncateText } from "./truncate.ts";

/** Longest user/assistant text kept whole (pasted logs are cut like tool output). */
export const MAX_TEXT_CHARS = 32_000;
/** Extra characters kept before redaction so a secret at a cut point is still recognised whole. */
const REDACT_SLACK = 256;
const MAX_COMMAND_CHARS = 4000;
const MAX_INPUT_STRING = 2000;
const MAX_INPUT_TOTAL = 12_000;
/** Array items kept by the precut (marked beyond) and by the final cut. */
const PRECUT_MAX_ARRAY = 400;
const FINAL_MAX_ARRAY = 200;

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
  /** Rows added per project root. */
  addedByProject: Map<string, number>;
}

export function emptyIngestResult(): IngestResult {
  return { added: 0, duplicates: 0, skipped: 0, addedByProject: new Map() };
}

export function mergeIngestResult(into: IngestResult, r: IngestResult): void {
  into.added += r.added;
  into.duplicates += r.duplicates;
  into.skipped += r.skipped;
  for (const [k, v] of r.addedByProject) into.addedByProject.set(k, (into.addedByProject.get(k) ?? 0) + v);
}

/** Paths made repo-relative: relative ones resolve against the record's cwd first. */
export function repoRelativePaths(paths: readonly string[], root: string, cwd: string | null): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    if (!p) continue;
    const abs = isAbsolute(p) ? p : resolve(cwd ?? root, p);
    out.add(isWithin(abs, root) ? relative(root, abs) || "." : p);
  }
  return [...out];
}

/**
 * Cut, then redact, then cut to the final size: no secret is ever written, outputs stay bounded.
 * 1. every string is cut to its final limit plus some slack (a secret at a cut point stays whole);
 *    in the raw record, a long copy of a normalized field (a tool's output repeated in the result
 *    block and in toolUseResult.stdout) becomes a reference to that field;
 * 2. a cheap scan of those strings (and of secret-named keys) decides whether anything can look
 *    like a secret (most events cannot) — only then every string goes through the redactor;
 * 3. the final cut.
 *
 * Most events hold nothing that can look like a secret: `sanitizeFast` does all three steps in one
 * walk for them and hands the rare suspect event to `sanitizeSuspect` (the same steps one by one).
 */
export function sanitizeContent(content: EventContent, opts: { envFile: boolean }): EventContent {
  if (!opts.envFile) {
    const fast = sanitizeFast(content);
    if (fast) return fast;
  }
  return sanitizeSuspect(content, opts);
}

/** A string that a raw record repeats from a normalized field (long ones only). */
interface SameAs {
  value: string;
  ref: string;
}

function sameFields(content: EventContent): SameAs[] {
  const same: SameAs[] = [];
  for (const k of ["output", "text", "command"] as const) {
    const v = content[k];
    if (typeof v === "string" && v.length >= 200 && !same.some((x) => x.value === v)) same.push({ value: v, ref: `[same as ${k}]` });
  }
  return same;
}

function sameRef(same: readonly SameAs[], v: string): string | undefined {
  for (const x of same) if (x.value.length === v.length && x.value === v) return x.ref;
  return undefined;
}

/** State of one fused walk (precut + scan + final cut) over `input` or `raw`. */
interface FastWalk {
  /** Precut length (final limit + slack). */
  pre: number;
  maxString: number;
  /** Characters left of the total budget. */
  left: number;
  same: readonly SameAs[];
  /** Something can look like a secret: the caller takes the careful path. */
  suspect: boolean;
}

/** Exactly what steps 1–3 give when nothing is suspect; undefined when something is. */
function sanitizeFast(content: EventContent): EventContent | undefined {
  const c: EventContent = { ...content };
  const pre = (v: string, max: number): string | undefined => {
    const out = v.length > max ? truncateText(v, max) : v;
    return secretFlags(out) === 0 ? out : undefined;
  };
  if (typeof c.output === "string") {
    const v = pre(c.output, DEFAULT_OUTPUT_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.output = truncateText(v, DEFAULT_OUTPUT_CHARS);
  }
  if (typeof c.text === "string") {
    const v = pre(c.text, MAX_TEXT_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.text = truncateText(v, MAX_TEXT_CHARS);
  }
  if (typeof c.command === "string") {
    const v = pre(c.command, MAX_COMMAND_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.command = truncateText(v, MAX_COMMAND_CHARS);
  }
  if (typeof c.diff_summary === "string") {
    const v = pre(c.diff_summary, 1000);
    if (v === undefined) return undefined;
    c.diff_summary = v;
  }
  if (c.commit && secretFlags(c.commit.message) !== 0) return undefined;
  if (c.input !== undefined) {
    const w: FastWalk = { pre: MAX_INPUT_STRING + REDACT_SLACK, maxString: MAX_INPUT_STRING, left: MAX_INPUT_TOTAL, same: [], suspect: false };
    c.input = fastCut(c.input, w);
    if (w.suspect) return undefined;
  }
  if (c.raw !== undefined) {
    const w: FastWalk = { pre: DEFAULT_RAW_STRING_CHARS + REDACT_SLACK, maxString: DEFAULT_RAW_STRING_CHARS, left: DEFAULT_RAW_TOTAL_CHARS, same: sameFields(content), suspect: false };
    c.raw = fastCut(c.raw, w);
    if (w.suspect) return undefined;
  }
  return c;
}

/**
 * precutDeep + truncateDeep in one walk. Array items past the final limit are never visited: they
 * are dropped either way, and only what is kept can change under redaction.
 */
function fastCut(value: unknown, w: FastWalk): unknown {
  if (typeof value === "string") return fastString(value, w);
  if (Array.isArray(value)) {
    const n = Math.min(value.length, FINAL_MAX_ARRAY);
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      out[i] = fastCut(value[i], w);
      if (w.suspect) return undefined;
    }
    const precutLength = value.length > PRECUT_MAX_ARRAY ? PRECUT_MAX_ARRAY + 1 : value.length;
    if (precutLength > FINAL_MAX_ARRAY) out.push(`…[${precutLength - FINAL_MAX_ARRAY} more items truncated]…`);
    return out;
  }
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k in src) {
      if (!Object.hasOwn(src, k)) continue;
      const v = src[k];
      if (typeof v === "string") {
        if (isSecretKey(k)) {
          w.suspect = true;
          return undefined;
        }
        out[k] = fastString(v, w);
      } else if (v !== null && typeof v === "object") out[k] = fastCut(v, w);
      else out[k] = v;
      if (w.suspect) return undefined;
    }
    return out;
  }
  return value;
}

function fastString(v: string, w: FastWalk): string {
  let p = v.length >= 200 ? sameRef(w.same, v) : undefined;
  if (p === undefined) {
    p = v.length > w.pre ? truncateText(v, w.pre) : v;
    if (secretFlags(p) !== 0) {
      w.suspect = true;
      return "";
    }
  }
  const allowed = Math.max(64, Math.min(w.maxString, w.left));
  const out = p.length > allowed ? truncateText(p, allowed) : p;
  w.left = Math.max(0, w.left - Math.min(out.length, p.length));
  return out;
}

/** Steps 1–3 one by one: every string is redacted when anything in the event can look like a secret. */
function sanitizeSuspect(content: EventContent, opts: { envFile: boolean }): EventContent {
  const c: EventContent = { ...content };
  const same = new Map<string, string>();
  for (const x of sameFields(content)) same.set(x.value, x.ref);
  // 1. precut, noting whether any string (or any secret-named key) can hold a secret
  let suspect = opts.envFile;
  const pre = (v: string, max: number): string => {
    const out = v.length > max ? truncateText(v, max) : v;
    if (!suspect && secretFlags(out) !== 0) suspect = true;
    return out;
  };
  if (typeof c.output === "string") c.output = pre(c.output, DEFAULT_OUTPUT_CHARS + REDACT_SLACK);
  if (typeof c.text === "string") c.text = pre(c.text, MAX_TEXT_CHARS + REDACT_SLACK);
  if (typeof c.command === "string") c.command = pre(c.command, MAX_COMMAND_CHARS + REDACT_SLACK);
  if (typeof c.diff_summary === "string") c.diff_summary = pre(c.diff_summary, 1000);
  if (c.commit) pre(c.commit.message, c.commit.message.length);
  const onKey = (k: string, v: unknown) => {
    if (!suspect && typeof v === "string" && isSecretKey(k)) suspect = true;
  };
  if (c.input !== undefined) c.input = precutDeep(c.input, (v) => pre(v, MAX_INPUT_STRING + REDACT_SLACK), onKey);
  if (c.raw !== undefined) {
    const rawMax = DEFAULT_RAW_STRING_CHARS + REDACT_SLACK;
    c.raw = precutDeep(c.raw, (v) => (v.length >= 200 ? same.get(v) : undefined) ?? pre(v, rawMax), onKey);
  }
  // 2. redact only when something can match
  if (suspect) {
    const r = { envFile: opts.envFile };
    for (const k of ["output", "text", "command", "diff_summary"] as const) {
      const v = c[k];
      if (typeof v === "string") c[k] = redactText(v, r);
    }
    if (c.commit) c.commit = { ...c.commit, message: redactText(c.commit.message, r) };
    if (c.input !== undefined) c.input = redactDeep(c.input, r);
    if (c.raw !== undefined) c.raw = redactDeep(c.raw, r);
  }
  // 3. final cut
  if (typeof c.output === "string") c.output = truncateText(c.output, DEFAULT_OUTPUT_CHARS);
  if (typeof c.text === "string") c.text = truncateText(c.text, MAX_TEXT_CHARS);
  if (typeof c.command === "string") c.command = truncateText(c.command, MAX_COMMAND_CHARS);
  if (c.input !== undefined) c.input = truncateDeep(c.input, { maxString: MAX_INPUT_STRING, maxTotal: MAX_INPUT_TOTAL, maxArray: FINAL_MAX_ARRAY });
  if (c.raw !== undefined) c.raw = truncateDeep(c.raw, { maxArray: FINAL_MAX_ARRAY });
  return c;
}

/** Walk a JSON-like value: strings through `str`, keys reported to `onKey`, arrays capped at 400 (marked; the final cut keeps fewer). */
function precutDeep(value: unknown, str: (s: string) => string, onKey: (k: string, v: unknown) => void): unknown {
  if (typeof value === "string") return str(value);
  if (Array.isArray(value)) {
    const n = Math.min(value.length, PRECUT_MAX_ARRAY);
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = precutDeep(value[i], str, onKey);
    if (value.length > n) out.push(`…[${value.length - n} more items truncated]…`);
    return out;
  }
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k in src) {
      if (!Object.hasOwn(src, k)) continue;
      const v = src[k];
      onKey(k, v);
      out[k] = typeof v === "string" || (v !== null && typeof v === "object") ? precutDeep(v, str, onKey) : v;
    }
    return out;
  }
  return value;
}

/** Build the stored row of one normalized event for a project (everything but the insert). */
export function toEventRow(e: NormalizedEvent, root: string, userId: string): EventDTO {
  const filePaths = repoRelativePaths(e.file_paths, root, e.cwd);
  const envFile = filePaths.some(isEnvFilePath) || e.file_paths.some(isEnvFilePath);
  const content = sanitizeContent(e.content, { envFile });
  if (typeof content.diff_summary === "string") content.diff_summary = content.diff_summary.split(`${root}/`).join("");
  const hash = hashStruct(
    canonicalStruct({ project_id: root, source_tool: e.source_tool, event_type: e.event_type, session_id: e.session_id, timestamp: e.timestamp, file_paths: filePaths, content }),
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
}

/**
 * Map each event to its project (longest registered root containing its cwd; unregistered paths and
 * roots outside `only` are skipped) and build its row. Pure: no database (runs in ingest workers).
 */
export function routeEvents(events: readonly NormalizedEvent[], projects: readonly string[], userId: string, only?: ReadonlySet<string>): RoutedRows {
  const out: RoutedRows = { byProject: new Map(), skipped: 0 };
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
      continue;
    }
    let rows = out.byProject.get(root);
    if (!rows) out.byProject.set(root, (rows = []));
    rows.push(toEventRow(e, root, userId));
  }
  return out;
}

/** Insert routed rows, one transaction per project. */
export function insertRouted(routed: RoutedRows, pool: ProjectDbPool): IngestResult {
  const result = emptyIngestResult();
  result.skipped = routed.skipped;
  for (const [root, rows] of routed.byProject) {
    const res = insertEvents(pool.get(root), rows);
    result.added += res.added;
    result.duplicates += res.duplicates;
    if (res.added > 0) result.addedByProject.set(root, (result.addedByProject.get(root) ?? 0) + res.added);
  }
  return result;
}

/** Insert rows packed by a worker (see file-rows.ts), one transaction per project. */
export function insertPacked(byProject: ReadonlyArray<readonly [string, readonly (string | null)[]]>, skipped: number, userId: string, pool: ProjectDbPool): IngestResult {
  const result = emptyIngestResult();
  result.skipped = skipped;
  for (const [root, packed] of byProject) {
    const res = insertPackedEvents(pool.get(root), root, userId, packed);
    result.added += res.added;
    result.duplicates += res.duplicates;
    if (res.added > 0) result.addedByProject.set(root, (result.addedByProject.get(root) ?? 0) + res.added);
  }
  return result;
}

/** The contract's entry point: write normalized events to their projects' data.db. */
export function ingestNormalized(events: readonly NormalizedEvent[], ctx: IngestContext): IngestResult {
  return insertRouted(routeEvents(events, ctx.projects, ctx.userId, ctx.only), ctx.pool);
}

/** Find a stored tool_call/code_change by tool_use_id (the normalizer's map was lost in a restart). */
export function lookupStoredToolUse(ctx: IngestContext, cwd: string | null, sessionId: string | null, toolUseId: string): ToolUseInfo | undefined {
  const root = cwd ? projectForPath(resolve(cwd), ctx.projects) : undefined;
  if (!root) return undefined;
  return lookupToolUseIn(ctx.pool.get(root), root, sessionId, toolUseId);
}

/** The same lookup in one project's data.db (any connection, read-only ones included). */
export function lookupToolUseIn(db: Database, root: string, sessionId: string | null, toolUseId: string): ToolUseInfo | undefined {
  const row = db
    .query(
      `SELECT content_json FROM events WHERE project_id = ? AND session_id IS ? AND event_type IN ('tool_call', 'code_change')
         AND json_extract(content_json, '$.tool_use_id') = ? LIMIT 1`,
    )
    .get(root, sessionId, toolUseId) as { content_json: string } | null;
  if (!row) return undefined;
  const c = JSON.parse(row.content_json) as EventContent;
  return { tool: c.tool ?? "unknown", input: c.command !== undefined && c.input === undefined ? { command: c.command } : c.input };
}
