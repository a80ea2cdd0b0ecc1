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
import type { Candidate } from "../extract/candidate.ts";
import { mergeEndpointContent } from "../extract/project-endpoints.ts";
import { mergeModuleContent } from "../extract/project-modules.ts";
import { parseDirective } from "../extract/style-preferences.ts";
import { heldByPerson, rejectedBy } from "./corrections.ts";
import { sameWording, similarity, tokens } from "./wording.ts";

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
  /** When the evidence showed it (an old episode's end for a backfill): created_at, updated_at. */
  nowMs: number;
  /** When sqrl learns it, on this machine's clock (default nowMs): learned_at, where decay counts from. */
  learnedMs?: number;
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
    learned_at: nowIso(ctx.learnedMs ?? ctx.nowMs),
    ...extra,
  };
  return { ...row, importance: round2(row.importance), confidence: round2(row.confidence) };
}

/** Seen again: more evidence and a later last-seen time, nothing else (an item a person wrote or pinned). */
function addEvidence(db: Database, target: MemoryItem, c: Candidate, seenAt: string): string {
  updateMemoryItem(db, target.id, {
    updated_at: seenAt,
    source_event_ids: union(target.source_event_ids, c.source_event_ids, 60),
    evidence_episode_ids: union(target.evidence_episode_ids, [c.source_episode_id], 40),
  });
  return target.id;
}

/** Apply a decision to the project DB (call inside a transaction); returns the id of the item that is valid now. */
export function applyProjectDecision(db: Database, c: Candidate, d: Decision, ctx: ApplyContext): string {
  const now = nowIso(ctx.nowMs);
  const onAnchor = projectAnchorItems(db, ctx.projectId, c);
  // Seen again: an older episode processed late (a backfill out of order) never moves last-seen back,
  // nor before the item was created.
  const seenAt = (t: MemoryItem) => (t.updated_at > now ? t.updated_at : now);
  // What a person forgot, marked wrong or rewrote is not made again (corrections.ts); the same words
  // confirm the person's own version on the anchor, when there is one.
  const rejected = rejectedBy(db, c);
  if (rejected) {
    const own = onAnchor.find((i) => heldByPerson(db, i));
    return own ? addEvidence(db, own, c, seenAt(own)) : rejected.memory_id;
  }
  const target = d.targetId ? onAnchor.find((i) => i.id === d.targetId) : undefined;
  // An item a person wrote or pinned keeps its words and its importance: the extractor only adds evidence
  // to it, and what contradicts it changes nothing.
  if (target && d.verb !== "ADD_NEW" && heldByPerson(db, target))
    return d.verb === "DELETE_AND_ADD" || d.refresh === false ? target.id : addEvidence(db, target, c, seenAt(target));
  const restates = onAnchor.find((i) => heldByPerson(db, i) && sameWording(c.content, i.content));
  if (restates) return addEvidence(db, restates, c, seenAt(restates));
  if (d.verb === "ADD_NEW" || !target) {
    return insertMemoryItem(db, newRow(c, ctx, "ADD_NEW", c.content)).id;
  }
  if (d.verb === "NOOP") {
    if (d.refresh === false) return target.id;
    updateMemoryItem(db, target.id, {
      updated_at: seenAt(target),
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
