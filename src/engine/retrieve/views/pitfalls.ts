/**
 * `GET /views/pitfalls` (reference §5.4): known pitfalls whose file paths (or tags) meet
 * `scope_paths`, ranked by the relevance formula against `task_description` (importance, recency and
 * path closeness when there is no task). Core mode: 5 items; full: 50.
 */
import { PitfallsView, type ViewQuery } from "../../../shared/api.ts";
import { splitIdentifier } from "../../../shared/code-tokens.ts";
import { nowIso } from "../../../shared/time.ts";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { packBlocks, type Block } from "../render/budget.ts";
import { itemsOfTypes, loadItems } from "../rank/candidates.ts";
import {
  asServed,
  checkRoot,
  checkSignature,
  outOfDateLine,
  verificationField,
  verifyItems,
} from "../verify/verify.ts";
import { memoryLine } from "../render/markdown.ts";
import { scoreItems } from "../rank/relevance.ts";
import { clipQuery } from "../query-text.ts";
import type { RetrievalContext } from "../retrieval-context.ts";
import { pathMatch } from "../rank/scoring.ts";
import { cachedView, memoryFingerprint } from "./view-cache.ts";

const HEADER = "## Known pitfalls";
const LIMITS = { core: 5, full: 50 } as const;

/** Does a pitfall concern one of the scope paths (path overlap, or a tag naming the file/folder)? */
export function inScope(item: Pick<MemoryItem, "file_paths" | "tags">, scope: readonly string[]): boolean {
  if (scope.length === 0) return true;
  if (pathMatch(item.file_paths, scope).score >= 0.7) return true;
  const names = new Set(
    scope
      .flatMap((p) =>
        splitIdentifier(
          p
            .replace(/\.[a-z0-9]+$/i, "")
            .split("/")
            .pop() ?? "",
        ),
      )
      .filter((w) => w.length > 2),
  );
  return item.tags.some((t) => names.has(t.toLowerCase()));
}

export async function pitfallsView(ctx: RetrievalContext, q: ViewQuery): Promise<PitfallsView> {
  const budget = q.context_budget_tokens ?? ctx.budgets.view;
  const scope = [...q.scope_paths].sort();
  const task = clipQuery(q.task_description ?? "").text; // a ranking hint: clipped quietly, the view does not echo it
  return cachedView({
    ctx,
    name: "pitfalls",
    key: `${q.mode}|scope=${scope.join(",")}|task=${task}${ctx.workTree ? `|tree=${ctx.workTree}` : ""}`,
    budget,
    exclude: q.exclude_memory_ids,
    schema: PitfallsView,
    fingerprint: memoryFingerprint(ctx.db, ctx.projectId, ["pitfall"]),
    checkSig: (ids) => checkSignature(checkRoot(ctx), ctx.db, loadItems(ctx.db, ctx.projectId, ids), ctx.nowMs),
    build: async () => {
      const excluded = new Set(q.exclude_memory_ids);
      const candidates = itemsOfTypes(ctx.db, ctx.projectId, ["pitfall"], 2000).filter((i) => inScope(i, scope));
      const scored = await scoreItems(ctx, candidates, { text: task, paths: scope, similarity: "absolute" });
      let omitted = 0;
      const picked: MemoryItem[] = [];
      const outOfDate: MemoryItem[] = [];
      let heldBack = 0;
      // Checked against today's code: stale pitfalls are held back (full mode lists them apart).
      const pool = scored.slice(0, LIMITS[q.mode] * 2 + excluded.size).map((s) => s.item);
      const checks = verifyItems(checkRoot(ctx), ctx.db, pool, ctx.nowMs);
      for (const s of scored) {
        if (picked.length >= LIMITS[q.mode]) break;
        if (excluded.has(s.item.id)) omitted++;
        else if (checks.get(s.item.id)?.status === "stale") {
          heldBack++;
          if (q.mode === "full") outOfDate.push(s.item);
        } else picked.push(asServed(s.item, checks.get(s.item.id)));
      }
      const blocks: Block[] = [
        ...picked.map((i) => ({ id: i.id, text: memoryLine(i, ctx.nowMs) })),
        ...outOfDate.map((i) => ({ id: i.id, text: outOfDateLine(i.content, checks.get(i.id)!) })),
      ];
      const packed = packBlocks({
        header: HEADER,
        blocks,
        budget,
        counter: ctx.counter,
        omittedSeen: omitted,
        emptyText:
          omitted > 0
            ? "Every pitfall for this scope was already shown earlier in this session."
            : heldBack > 0
              ? `No current pitfalls: ${heldBack} held back because the code they cite has changed (\`sqrl doctor\` lists them).`
              : scope.length > 0
                ? "No known pitfalls for these paths."
                : "No pitfalls recorded yet.",
      });
      const byId = new Map([...picked, ...outOfDate].map((i) => [i.id, i]));
      const shown = packed.shown.map((b) => byId.get(b.id)!);
      return {
        truncated: shown.length < picked.length + outOfDate.length,
        checkedIds: pool.map((i) => i.id),
        view: {
          type: "pitfalls_view" as const,
          project_id: ctx.projectId,
          generated_at: nowIso(ctx.nowMs),
          token_estimate: packed.tokens,
          has_relevant_pitfalls: picked.length > 0 || omitted > 0,
          items: shown.map((i) => ({
            key: i.key,
            content: i.content,
            tags: i.tags,
            importance: i.importance,
            file_paths: i.file_paths,
            ...verificationField(checks.get(i.id)),
          })),
          markdown: packed.markdown,
          memory_ids: shown.map((i) => i.id),
          omitted_seen: omitted,
        },
      };
    },
  });
}
