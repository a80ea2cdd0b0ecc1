/**
 * `GET /views/user_style` (reference §5.2): the user's coding style — project-scoped style items of
 * this project merged over the global ones in ~/.sqrl/user.db (same key: the project's wins), sorted
 * by importance then recency, 5 items in core mode, up to 50 in full, packed into the budget.
 */
import type { Database } from "bun:sqlite";
import { UserStyleView, type ViewQuery } from "../../../shared/api.ts";
import { nowIso } from "../../../shared/time.ts";
import { packBlocks, type Block } from "../render/budget.ts";
import { itemsOfTypes } from "../rank/candidates.ts";
import { memoryLine } from "../render/markdown.ts";
import { groupOf, SERVED_HEADINGS } from "../render/origin.ts";
import type { RetrievalContext } from "../retrieval-context.ts";
import { recencyScore } from "../rank/scoring.ts";
import { cachedView, memoryFingerprint } from "./view-cache.ts";

export const CORE_ITEMS = 5;
export const FULL_ITEMS = 50;
const HEADER = "## Your coding style";
/** A rule read from CLAUDE.md or AGENTS.md is the project's, said under its own heading, not as the user's style. */
const GROUPS = {
  project: "### In this project",
  files: SERVED_HEADINGS.project_rule!,
  global: "### Across your projects",
};

interface StyleEntry {
  id: string;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  updated_at: string;
  origin: "project" | "global";
}

function globalStyle(userDb: Database | undefined, userId: string): StyleEntry[] {
  if (!userDb) return [];
  const rows = userDb
    .query(
      `SELECT id, key, content, tags, importance, updated_at FROM user_style_items WHERE user_id = ? ORDER BY importance DESC, updated_at DESC LIMIT 500`,
    )
    .all(userId) as Array<{
    id: string;
    key: string;
    content: string;
    tags: string;
    importance: number;
    updated_at: string;
  }>;
  return rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], origin: "global" as const }));
}

/** Project style over global style, best first. */
export function mergedStyle(ctx: RetrievalContext, userId: string): StyleEntry[] {
  const project: StyleEntry[] = itemsOfTypes(ctx.db, ctx.projectId, ["user_style"], 500)
    .filter((i) => i.user_id === null || i.user_id === userId)
    .map((i) => ({
      id: i.id,
      key: i.key,
      content: i.content,
      tags: i.tags,
      importance: i.importance,
      updated_at: i.updated_at,
      origin: "project" as const,
    }));
  const byKey = new Map<string, StyleEntry>();
  for (const g of globalStyle(ctx.userDb, userId)) byKey.set(g.key, g);
  for (const p of project) {
    const cur = byKey.get(p.key);
    if (!cur || cur.origin === "global" || p.updated_at > cur.updated_at) byKey.set(p.key, p);
  }
  const rank = (e: StyleEntry) => e.importance + 0.1 * recencyScore(e.updated_at, ctx.nowMs);
  return [...byKey.values()].sort((a, b) => rank(b) - rank(a) || a.key.localeCompare(b.key));
}

function styleFingerprint(ctx: RetrievalContext, userId: string): string {
  const local = memoryFingerprint(ctx.db, ctx.projectId, ["user_style"]);
  if (!ctx.userDb) return local;
  const g = ctx.userDb
    .query("SELECT COUNT(*) AS n, MAX(updated_at) AS latest FROM user_style_items WHERE user_id = ?")
    .get(userId) as { n: number; latest: string | null };
  return `${local}|${g.n}@${g.latest ?? "-"}`;
}

export async function userStyleView(ctx: RetrievalContext, q: ViewQuery): Promise<UserStyleView> {
  const userId = q.user_id ?? ctx.userId;
  const budget = q.context_budget_tokens ?? ctx.budgets.view;
  return cachedView({
    ctx,
    name: "user_style",
    key: `${q.mode}|user=${userId}`,
    budget,
    exclude: q.exclude_memory_ids,
    schema: UserStyleView,
    fingerprint: styleFingerprint(ctx, userId),
    build: () => {
      const excluded = new Set(q.exclude_memory_ids);
      const all = mergedStyle(ctx, userId);
      const limit = q.mode === "core" ? CORE_ITEMS : FULL_ITEMS;
      let omitted = 0;
      const picked: StyleEntry[] = [];
      for (const e of all) {
        if (picked.length >= limit) break;
        if (excluded.has(e.id)) omitted++;
        else picked.push(e);
      }
      const blocks: Block[] = picked.map((e) => ({
        id: e.id,
        group: e.origin === "project" && groupOf({ ...e, type: "user_style" }) === "project_rule" ? "files" : e.origin,
        text: memoryLine(e, ctx.nowMs, { paths: false }),
      }));
      const packed = packBlocks({
        header: HEADER,
        groups: GROUPS,
        blocks,
        budget,
        counter: ctx.counter,
        omittedSeen: omitted,
        emptyText: "No coding style recorded yet.",
      });
      const byId = new Map(picked.map((e) => [e.id, e]));
      const shown = packed.shown.map((b) => byId.get(b.id)!);
      return {
        truncated: shown.length < picked.length,
        view: {
          type: "user_style_view" as const,
          mode: q.mode,
          project_id: ctx.projectId,
          user_id: userId,
          generated_at: nowIso(ctx.nowMs),
          token_estimate: packed.tokens,
          items: shown.map((e) => ({
            key: e.key,
            summary: e.content,
            tags: e.tags,
            importance: e.importance,
            last_updated_at: e.updated_at,
            source_memory_ids: [e.id],
          })),
          markdown: packed.markdown,
          memory_ids: shown.map((e) => e.id),
          omitted_seen: omitted,
        },
      };
    },
  });
}
