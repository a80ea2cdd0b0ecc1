/**
 * Cached views (reference §5.2–§5.4): the last generated view JSON lives in `.ctx/views/<name>.json`
 * and `view_meta` says when it was made and at which event count. A cached view is served again only
 * when all of these hold:
 * - not stale by `view_meta` (TTL or event-count delta, src/engine/view-staleness.ts);
 * - made for the same mode and filters (scope paths, task, user) and with the same token counter;
 * - the memory it was made from is unchanged (count and newest `updated_at` of the items it reads —
 *   a forgotten or superseded item must not linger until the TTL);
 * - it fits the asked budget: same budget, or it was not truncated and its text fits the new one
 *   (only the footer is re-rendered);
 * - none of its items is excluded by the caller's session de-dup;
 * - the items it checked against the code still check the same (HEAD, files' mtime and size).
 * Views built with exclusions are answered but not cached.
 */
import type { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import type { z } from "zod";
import type { ViewName } from "../../../shared/api.ts";
import { writeJsonAtomic } from "../../../shared/fs-atomic.ts";
import { log as rootLog } from "../../../shared/log.ts";
import { projectPaths } from "../../../shared/paths.ts";
import { nowIso } from "../../../shared/time.ts";
import { refooter } from "../render/budget.ts";
import type { RetrievalContext } from "../retrieval-context.ts";
import { isViewStale, VIEW_STALENESS, type ViewMetaRow } from "./view-staleness.ts";

const log = rootLog.child({ service: "retrieve" });

export interface CacheStamp {
  /** Mode, filters and counter the view was made with. */
  key: string;
  budget: number;
  truncated: boolean;
  fingerprint: string;
  /** The items checked against the code for this view and a signature of their results (verify/). */
  checks?: { ids: string[]; sig: string };
}

export interface CacheableView {
  markdown: string;
  token_estimate: number;
  memory_ids: string[];
  omitted_seen: number;
}

export interface Built<V> {
  view: V;
  truncated: boolean;
  /** Items whose check against the code decided what the view shows (shown or held back). */
  checkedIds?: string[];
}

export interface CachedViewRequest<V extends CacheableView> {
  ctx: RetrievalContext;
  name: ViewName;
  /** Mode + filters, e.g. `core|scope=src/auth.py|task=` (the counter name is added here). */
  key: string;
  budget: number;
  exclude: readonly string[];
  schema: z.ZodType<V>;
  /** Changes whenever the memory the view reads changes. */
  fingerprint: string;
  /** Signature of the code checks of some items: a cached view is rebuilt when it changes. */
  checkSig?: (ids: readonly string[]) => string;
  build: () => Promise<Built<V>> | Built<V>;
}

export function eventCount(db: Database): number {
  return (db.query("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n;
}

export function readViewMeta(db: Database, name: ViewName): ViewMetaRow | undefined {
  return (db.query("SELECT * FROM view_meta WHERE view_name = ?").get(name) as ViewMetaRow | null) ?? undefined;
}

export function writeViewMeta(db: Database, name: ViewName, generatedAt: string, events: number): void {
  db.query(
    `INSERT INTO view_meta (view_name, last_generated, events_count_at_gen, ttl_seconds) VALUES (?, ?, ?, ?)
     ON CONFLICT(view_name) DO UPDATE SET last_generated = excluded.last_generated, events_count_at_gen = excluded.events_count_at_gen, ttl_seconds = excluded.ttl_seconds`,
  ).run(name, generatedAt, events, VIEW_STALENESS[name].ttl_seconds);
}

function readCacheFile(root: string, name: ViewName): (Record<string, unknown> & { cache?: CacheStamp }) | undefined {
  const path = projectPaths.view(root, name);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown> & { cache?: CacheStamp };
  } catch {
    return undefined;
  }
}

/** The cached view when it may be served for this request (see the module comment), else undefined. */
function reusable<V extends CacheableView>(req: CachedViewRequest<V>, key: string): V | undefined {
  const { ctx, name } = req;
  const meta = readViewMeta(ctx.db, name);
  if (!meta || isViewStale(meta, eventCount(ctx.db), ctx.nowMs)) return undefined;
  const file = readCacheFile(ctx.projectId, name);
  const stamp = file?.cache;
  if (!file || !stamp || stamp.key !== key || stamp.fingerprint !== req.fingerprint) return undefined;
  if (req.checkSig && (!stamp.checks || req.checkSig(stamp.checks.ids) !== stamp.checks.sig)) return undefined;
  const parsed = req.schema.safeParse(file);
  if (!parsed.success) return undefined;
  const view = parsed.data;
  if (req.exclude.some((id) => view.memory_ids.includes(id))) return undefined;
  if (stamp.budget === req.budget) return view;
  if (stamp.truncated || view.token_estimate > req.budget) return undefined;
  const re = refooter(view.markdown, req.budget, ctx.counter);
  return re ? { ...view, markdown: re.markdown, token_estimate: re.tokens } : undefined;
}

/** Serve the cached view or build (and cache) a fresh one. */
export async function cachedView<V extends CacheableView>(req: CachedViewRequest<V>): Promise<V> {
  const key = `${req.key}|counter=${req.ctx.counter.name}`;
  const hit = reusable(req, key);
  if (hit) return hit;
  const eventsNow = eventCount(req.ctx.db);
  const built = await req.build();
  const view = req.schema.parse(built.view);
  if (req.exclude.length === 0) {
    const stamp: CacheStamp = { key, budget: req.budget, truncated: built.truncated, fingerprint: req.fingerprint };
    if (req.checkSig) stamp.checks = { ids: built.checkedIds ?? [], sig: req.checkSig(built.checkedIds ?? []) };
    try {
      writeJsonAtomic(projectPaths.view(req.ctx.projectId, req.name), { ...view, cache: stamp });
      writeViewMeta(req.ctx.db, req.name, nowIso(req.ctx.nowMs), eventsNow);
    } catch (err) {
      log.warn(`could not cache the ${req.name} view: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return view;
}

/** Count and newest update of the valid items of some types: changes whenever those items change. */
export function memoryFingerprint(db: Database, projectId: string, types: readonly string[]): string {
  const r = db
    .query(
      `SELECT COUNT(*) AS n, MAX(updated_at) AS latest FROM memory_items WHERE project_id = ? AND deleted = 0 AND type IN (SELECT value FROM json_each(?))`,
    )
    .get(projectId, JSON.stringify(types)) as { n: number; latest: string | null };
  return `${r.n}@${r.latest ?? "-"}`;
}
