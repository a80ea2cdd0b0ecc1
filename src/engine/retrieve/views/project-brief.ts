/**
 * `GET /views/project_brief` (reference §5.3): key facts (project_fact items), the decisions taken
 * (facts tagged `decision`, under their own heading; in `key_facts` too) and the project's main
 * modules. Modules come from `module:<path>` facts when the extractor wrote them, else from where the
 * recorded episodes actually worked (files per module, how often, how recently). Core mode: 5 facts
 * and 3 modules; full: 30 and 10.
 */
import { ProjectBriefView, type ViewQuery } from "../../../shared/api.ts";
import { isoToMs, nowIso, relativeTime } from "../../../shared/time.ts";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { packBlocks, type Block } from "../render/budget.ts";
import { itemsOfTypes, loadItems } from "../rank/candidates.ts";
import { asServed, checkRoot, checkSignature, outOfDateLine, verifyItems } from "../verify/verify.ts";
import { listItem, memoryLine, shortPaths } from "../render/markdown.ts";
import type { RetrievalContext } from "../retrieval-context.ts";
import { moduleOf, recencyScore } from "../rank/scoring.ts";
import { cachedView, memoryFingerprint } from "./view-cache.ts";

const HEADER = "## Project overview";
const GROUPS = {
  facts: "### Key facts",
  decisions: "### Decisions",
  modules: "### Modules",
  stale: "### May be out of date",
};
/** Decisions (facts tagged `decision`: a choice and its reason) get a group of their own, beside the facts. */
const LIMITS = {
  core: { facts: 5, decisions: 3, modules: 3 },
  full: { facts: 30, decisions: 15, modules: 10 },
} as const;
const isDecision = (f: MemoryItem) => f.tags.includes("decision");
const MODULE_KEY = /^module:(.+)$/;

export interface BriefModule {
  name: string;
  paths: string[];
  summary: string;
  /** Memory id when the module came from a `module:` fact. */
  id?: string;
  weight: number;
  last: string;
}

/** Modules from episodes: files touched per module, ranked by episodes touching it, recency-weighted. */
export function modulesFromEpisodes(ctx: RetrievalContext, limit: number): BriefModule[] {
  const rows = ctx.db
    .query(
      `SELECT s.file_paths AS files, e.end_ts AS end_ts FROM episodes e JOIN episode_state s ON s.episode_id = e.id WHERE e.project_id = ? ORDER BY e.start_ts DESC LIMIT 300`,
    )
    .all(ctx.projectId) as Array<{ files: string; end_ts: string }>;
  const mods = new Map<string, { episodes: number; weight: number; files: Map<string, number>; last: string }>();
  for (const r of rows) {
    let files: string[] = [];
    try {
      files = JSON.parse(r.files) as string[];
    } catch {}
    const seen = new Set<string>();
    for (const f of files) {
      const m = moduleOf(f);
      if (!m) continue;
      const entry = mods.get(m) ?? { episodes: 0, weight: 0, files: new Map(), last: r.end_ts };
      entry.files.set(f, (entry.files.get(f) ?? 0) + 1);
      if (!seen.has(m)) {
        seen.add(m);
        entry.episodes++;
        entry.weight += 0.5 + recencyScore(r.end_ts, ctx.nowMs);
        if (isoToMs(r.end_ts) > isoToMs(entry.last)) entry.last = r.end_ts;
      }
      mods.set(m, entry);
    }
  }
  return [...mods.entries()]
    .sort((a, b) => b[1].weight - a[1].weight || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([name, m]) => {
      const top = [...m.files.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([f]) => f);
      return {
        name,
        paths: top.slice(0, 3),
        summary: `Worked on in ${m.episodes} episode${m.episodes === 1 ? "" : "s"}, last ${relativeTime(m.last, ctx.nowMs)}; ${m.files.size} file${m.files.size === 1 ? "" : "s"} touched.`,
        weight: m.weight,
        last: m.last,
      };
    });
}

function modulesFromFacts(items: readonly MemoryItem[]): BriefModule[] {
  return items.flatMap((i) => {
    const m = MODULE_KEY.exec(i.key);
    return m
      ? [
          {
            name: m[1]!,
            paths: i.file_paths.length > 0 ? i.file_paths : [m[1]!],
            summary: i.content,
            id: i.id,
            weight: i.importance,
            last: i.updated_at,
          },
        ]
      : [];
  });
}

function moduleLine(m: BriefModule): string {
  return listItem(`\`${m.name}\` (${shortPaths(m.paths, 3)}): ${m.summary}`);
}

export async function projectBriefView(ctx: RetrievalContext, q: ViewQuery): Promise<ProjectBriefView> {
  const budget = q.context_budget_tokens ?? ctx.budgets.view;
  const episodesStamp = ctx.db
    .query("SELECT COUNT(*) AS n, MAX(end_ts) AS last FROM episodes WHERE project_id = ?")
    .get(ctx.projectId) as { n: number; last: string | null };
  return cachedView({
    ctx,
    name: "project_brief",
    key: ctx.workTree ? `${q.mode}|tree=${ctx.workTree}` : q.mode,
    budget,
    exclude: q.exclude_memory_ids,
    schema: ProjectBriefView,
    checkSig: (ids) => checkSignature(checkRoot(ctx), ctx.db, loadItems(ctx.db, ctx.projectId, ids), ctx.nowMs),
    fingerprint: `${memoryFingerprint(ctx.db, ctx.projectId, ["project_fact"])}|ep=${episodesStamp.n}@${episodesStamp.last ?? "-"}`,
    build: () => {
      const limits = LIMITS[q.mode];
      const excluded = new Set(q.exclude_memory_ids);
      const facts = itemsOfTypes(ctx.db, ctx.projectId, ["project_fact"], 1000);
      const factModules = modulesFromFacts(facts);
      const plainFacts = facts
        .filter((f) => !MODULE_KEY.test(f.key))
        .sort(
          (a, b) =>
            b.importance +
            0.1 * recencyScore(b.updated_at, ctx.nowMs) -
            (a.importance + 0.1 * recencyScore(a.updated_at, ctx.nowMs)),
        );
      let omitted = 0;
      const keptFacts: MemoryItem[] = [];
      const outOfDate: MemoryItem[] = [];
      const taken = { facts: 0, decisions: 0 };
      // Checked against today's code: stale facts are held back (full mode lists them apart).
      const pool = plainFacts.slice(0, (limits.facts + limits.decisions) * 2 + excluded.size);
      const checks = verifyItems(checkRoot(ctx), ctx.db, pool, ctx.nowMs);
      for (const f of plainFacts) {
        const group = isDecision(f) ? "decisions" : "facts";
        if (taken[group] >= limits[group]) continue;
        if (excluded.has(f.id)) omitted++;
        else if (checks.get(f.id)?.status === "stale") {
          if (q.mode === "full") outOfDate.push(f);
        } else {
          keptFacts.push(asServed(f, checks.get(f.id)));
          taken[group]++;
        }
      }
      const modules = (
        factModules.length > 0
          ? factModules.sort((a, b) => b.weight - a.weight)
          : modulesFromEpisodes(ctx, limits.modules + 5)
      )
        .filter((m) => !(m.id && excluded.has(m.id)))
        .slice(0, limits.modules);
      const blocks: Block[] = [
        ...keptFacts.map((f) => ({
          id: f.id,
          group: isDecision(f) ? "decisions" : "facts",
          text: memoryLine(f, ctx.nowMs, { paths: false }),
        })),
        ...modules.map((m, i) => ({ id: m.id ?? `module:${i}`, group: "modules", text: moduleLine(m) })),
        ...outOfDate.map((f) => ({ id: f.id, group: "stale", text: outOfDateLine(f.content, checks.get(f.id)!) })),
      ];
      const packed = packBlocks({
        header: HEADER,
        groups: GROUPS,
        blocks,
        budget,
        counter: ctx.counter,
        omittedSeen: omitted,
        emptyText: "No project facts recorded yet.",
      });
      const shownIds = new Set(packed.shown.map((b) => b.id));
      const shownFacts = keptFacts.filter((f) => shownIds.has(f.id));
      const shownStale = outOfDate.filter((f) => shownIds.has(f.id));
      const shownModules = modules.filter((m, i) => shownIds.has(m.id ?? `module:${i}`));
      return {
        truncated: packed.shown.length < blocks.length,
        checkedIds: pool.map((f) => f.id),
        view: {
          type: "project_brief_view" as const,
          mode: q.mode,
          project_id: ctx.projectId,
          generated_at: nowIso(ctx.nowMs),
          token_estimate: packed.tokens,
          modules: shownModules.map((m) => ({ name: m.name, paths: m.paths, summary: m.summary })),
          key_facts: shownFacts.map((f) => f.content),
          markdown: packed.markdown,
          memory_ids: [
            ...shownFacts.map((f) => f.id),
            ...shownModules.flatMap((m) => (m.id ? [m.id] : [])),
            ...shownStale.map((f) => f.id),
          ],
          omitted_seen: omitted,
        },
      };
    },
  });
}
