/**
 * Mem0-style updates applied as supersede (reference §5.1.3). For each candidate, the valid items on
 * its anchor (project_id, type, key, scope, user_id) are compared and one verb chosen:
 * ADD_NEW (nothing there, or a different thing that shares the key), NOOP (near-duplicate: refresh
 * updated_at, bump importance, append evidence), DELETE_AND_ADD (a contradiction: "use pnpm" after
 * "use npm"), UPDATE_EXISTING (otherwise). UPDATE and DELETE never destroy: the old row is kept,
 * marked deleted with an end time and a link to the row and episode that replaced it.
 */
import type { Database } from "bun:sqlite";
import { newId } from "../../../shared/ids.ts";
import { nowIso } from "../../../shared/time.ts";
import {
  insertMemoryItem,
  itemsByAnchor,
  supersedeMemoryItem,
  updateMemoryItem,
  type MemoryItem,
  type UpdateDecision,
} from "../../../sql/memory-items.ts";
import { isPinned, wrongMarkFor } from "../../../sql/memory-marks.ts";
import type { Candidate } from "../extract/candidate.ts";
import { mergeEndpointContent } from "../extract/project-endpoints.ts";
import { mergeModuleContent } from "../extract/project-modules.ts";
import { parseDirective } from "../extract/style-preferences.ts";

export interface Decision {
  verb: UpdateDecision;
  /** Existing item the verb applies to (absent for ADD_NEW). */
  targetId?: string;
  /** Merged content for UPDATE_EXISTING (an LLM may write it; rules use the candidate's). */
  content?: string;
  reason: string;
  /** NOOP only: false when the candidate is weaker evidence against the stored item (keep it untouched). */
  refresh?: boolean;
}

/** What the decision looks at of an existing item (project row or global style row). */
export interface ExistingItem {
  id: string;
  content: string;
  importance: number;
  confidence: number;
  updated_at: string;
  tags?: readonly string[];
}

const STOP = new Set(
  "a an the to of in on for with and or is are be by as at it its this that from e.g then use uses".split(" "),
);

export function tokens(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .replace(/[`"'“”()[\]{},;:!?]/g, " ")
      .split(/\s+/)
      .map((w) => w.replace(/\.+$/, ""))
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );
}

export function similarity(a: string, b: string): { jaccard: number; containment: number } {
  const ta = tokens(a);
  const tb = tokens(b);
  if (ta.size === 0 || tb.size === 0) return { jaccard: 0, containment: 0 };
  let inter = 0;
  for (const t of ta) if (tb.has(t)) inter++;
  return { jaccard: inter / (ta.size + tb.size - inter), containment: inter / ta.size };
}

const NEGATIVE = /^(?:never|don'?t|do not|dont|stop|avoid|no more|please stop|refused)\b/i;

function polarityOf(content: string): 1 | -1 {
  return NEGATIVE.test(content.trim()) ? -1 : 1;
}

function mentions(content: string, value: string): boolean {
  const v = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?:^|[^\\w-])${v}(?:$|[^\\w-])`, "i").test(content);
}

/** Keys whose content states one value: a different value is a contradiction, not a refinement. */
function singleValued(c: Candidate): boolean {
  return c.value !== undefined && c.type !== "recipe" && c.type !== "pitfall";
}

/** The deterministic decision for one candidate against the valid items on its anchor. */
export function ruleDecision(c: Candidate, existing: readonly ExistingItem[]): Decision {
  if (existing.length === 0) return { verb: "ADD_NEW", reason: "nothing stored on this anchor" };
  const scored = existing
    .map((e) => ({ e, ...similarity(c.content, e.content) }))
    .sort((a, b) => b.jaccard - a.jaccard);
  const best = scored[0]!;
  const target = best.e;
  const stated = (tags: readonly string[] | undefined) => tags?.includes("preference") === true;
  // A stated preference is re-read: "Use pnpm instead of npm" prefers pnpm, although it mentions npm.
  const said = stated(target.tags) ? parseDirective(target.content) : null;
  const samePolarity = c.polarity === undefined || (said?.polarity ?? polarityOf(target.content)) === c.polarity;
  const sameValue = !singleValued(c) || mentions(said ? said.object : target.content, c.value!);
  const contradicts = !sameValue || !samePolarity;
  if (contradicts && (c.confidence + 0.1 < target.confidence || (stated(target.tags) && !stated(c.tags)))) {
    // What sessions happened to run does not overrule what the user said; weaker evidence keeps the item.
    return { verb: "NOOP", targetId: target.id, refresh: false, reason: "weaker evidence than the stored item; kept" };
  }
  if (contradicts)
    return {
      verb: "DELETE_AND_ADD",
      targetId: target.id,
      reason: sameValue ? "opposite instruction" : `value changed to ${c.value}`,
    };
  // The stored text told again with more ("update changelog.md" → "update package.json and changelog.md"): the fuller one.
  const ct = tokens(c.content);
  if (ct.size > tokens(target.content).size && [...tokens(target.content)].every((t) => ct.has(t)))
    return { verb: "UPDATE_EXISTING", targetId: target.id, reason: "the same, with more detail" };
  if (best.jaccard >= 0.8 || best.containment >= 0.9)
    return { verb: "NOOP", targetId: target.id, reason: "near-duplicate" };
  // A recipe whose every command the stored one already has is a shorter variant: keep the fuller one.
  if (c.type === "recipe") {
    const commands = [...c.content.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (commands.length > 0 && commands.every((cmd) => target.content.includes(`\`${cmd}\``)))
      return { verb: "NOOP", targetId: target.id, reason: "a variant the stored recipe covers" };
  }
  // A habit seen again with the same value (same test command, other flags this time) is the same habit.
  if (singleValued(c) && c.rule.startsWith("style-habits"))
    return { verb: "NOOP", targetId: target.id, reason: "same value" };
  // List-like facts grow by union instead of being replaced by whichever episode spoke last.
  const merge = c.key.startsWith("module:")
    ? mergeModuleContent
    : c.key.startsWith("endpoint:")
      ? mergeEndpointContent
      : null;
  if (merge) {
    const merged = merge(target.content, c.content);
    if (merged === target.content) return { verb: "NOOP", targetId: target.id, reason: "nothing new in the list" };
    if (merged) return { verb: "UPDATE_EXISTING", targetId: target.id, content: merged, reason: "list extended" };
  }
  if (c.type === "pitfall" && best.jaccard < 0.2)
    return { verb: "ADD_NEW", reason: "a different problem under the same key" };
  return { verb: "UPDATE_EXISTING", targetId: target.id, reason: "same subject, new details" };
}

export interface ApplyContext {
  projectId: string;
  extractor: string;
  nowMs: number;
}

function union(a: readonly string[], b: readonly string[], max: number): string[] {
  return [...new Set([...a, ...b])].slice(-max);
}

/** Project anchor of a candidate: project-scope items are project-wide (user_id NULL). */
export function projectAnchorItems(db: Database, projectId: string, c: Candidate): MemoryItem[] {
  return itemsByAnchor(db, { project_id: projectId, type: c.type, key: c.key, scope: "project", user_id: null });
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function newRow(c: Candidate, ctx: ApplyContext, verb: UpdateDecision, content: string, extra?: Partial<MemoryItem>) {
  const now = nowIso(ctx.nowMs);
  const row = {
    id: newId("mem", ctx.nowMs),
    project_id: ctx.projectId,
    user_id: null,
    scope: "project" as const,
    type: c.type,
    key: c.key,
    content,
    tags: c.tags,
    importance: c.importance,
    created_at: now,
    updated_at: now,
    source_episode_id: c.source_episode_id,
    source_event_ids: c.source_event_ids,
    confidence: c.confidence,
    file_paths: c.file_paths,
    evidence_episode_ids: union(c.evidence_episodes ?? [], [c.source_episode_id], 40),
    decision: verb,
    extractor: ctx.extractor,
    ...extra,
  };
  return { ...row, importance: round2(row.importance), confidence: round2(row.confidence) };
}

/** Apply a decision to the project DB (call inside a transaction); returns the id of the item that is valid now. */
export function applyProjectDecision(db: Database, c: Candidate, d: Decision, ctx: ApplyContext): string {
  const now = nowIso(ctx.nowMs);
  // A memory a person marked wrong is not made again from the same evidence; the answer names the marked item.
  const wrong = wrongMarkFor(db, c);
  if (wrong) return wrong.memory_id;
  const target = d.targetId ? projectAnchorItems(db, ctx.projectId, c).find((i) => i.id === d.targetId) : undefined;
  // Seen again: an older episode processed late (a backfill out of order) never moves last-seen back,
  // nor before the item was created.
  const seenAt = target && target.updated_at > now ? target.updated_at : now;
  // A pinned item keeps its words and its importance: the extractor only adds evidence to it.
  if (target && d.verb !== "ADD_NEW" && isPinned(db, target.id)) {
    updateMemoryItem(db, target.id, {
      updated_at: seenAt,
      source_event_ids: union(target.source_event_ids, c.source_event_ids, 60),
      evidence_episode_ids: union(target.evidence_episode_ids, [c.source_episode_id], 40),
    });
    return target.id;
  }
  if (d.verb === "ADD_NEW" || !target) {
    return insertMemoryItem(db, newRow(c, ctx, "ADD_NEW", c.content)).id;
  }
  if (d.verb === "NOOP") {
    if (d.refresh === false) return target.id;
    updateMemoryItem(db, target.id, {
      updated_at: seenAt,
      importance: round2(Math.min(1, Math.max(target.importance, c.importance) + 0.05)),
      confidence: round2(Math.min(1, Math.max(target.confidence, c.confidence) + 0.02)),
      source_event_ids: union(target.source_event_ids, c.source_event_ids, 60),
      evidence_episode_ids: union(
        target.evidence_episode_ids,
        [...(c.evidence_episodes ?? []), c.source_episode_id],
        40,
      ),
      file_paths: union(target.file_paths, c.file_paths, 20),
    });
    return target.id;
  }
  const merged = d.verb === "UPDATE_EXISTING";
  const row = newRow(c, ctx, d.verb, d.content ?? c.content, {
    importance: merged ? Math.max(target.importance, c.importance) : c.importance,
    evidence_episode_ids: union(
      merged ? target.evidence_episode_ids : [],
      [...(c.evidence_episodes ?? []), c.source_episode_id],
      40,
    ),
    file_paths: merged ? union(target.file_paths, c.file_paths, 20) : c.file_paths,
    tags: merged ? union(target.tags, c.tags, 12) : c.tags,
  });
  const inserted = insertMemoryItem(db, row);
  supersedeMemoryItem(db, target.id, inserted.id, c.source_episode_id, now);
  return inserted.id;
}
