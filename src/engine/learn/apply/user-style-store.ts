/**
 * Where user_style lives. Personal preferences that hold across repositories (scope `user`) go to the
 * global `~/.sqrl/user.db`; this repository's conventions (scope `project`: tools it uses, how it is
 * tested, corrections tied to its files) stay in the project's data.db. On the same key the project's
 * item overrides the global one.
 */
import type { Database } from "bun:sqlite";
import { newId } from "../../../shared/ids.ts";
import { nowIso } from "../../../shared/time.ts";
import { currentItems, type MemoryItem } from "../../../sql/memory-items.ts";
import {
  getUserStyle,
  insertUserStyle,
  listUserStyle,
  refreshUserStyle,
  supersedeUserStyle,
  type StyleEvidence,
  type UserStyleItem,
} from "../../../sql/user-style.ts";
import type { Candidate } from "../extract/candidate.ts";
import { styleRejectedBy } from "./corrections.ts";
import type { ApplyContext, Decision, ExistingItem } from "./update.ts";

export function userAnchorItems(userDb: Database, userId: string, key: string): ExistingItem[] {
  const cur = getUserStyle(userDb, userId, key);
  return cur
    ? [
        {
          id: cur.id,
          content: cur.content,
          importance: cur.importance,
          confidence: cur.confidence,
          updated_at: cur.updated_at,
          tags: cur.tags,
        },
      ]
    : [];
}

function evidenceOf(c: Candidate, projectId: string): StyleEvidence {
  return { project_id: projectId, episode_id: c.source_episode_id, event_ids: c.source_event_ids.slice(0, 20) };
}

function mergeEvidence(a: readonly StyleEvidence[], b: StyleEvidence): StyleEvidence[] {
  const rest = a.filter((e) => !(e.project_id === b.project_id && e.episode_id === b.episode_id));
  return [...rest, b].slice(-30);
}

/** Apply a decision to the global style store (call inside a user.db transaction); returns the current item id. */
export function applyUserDecision(
  userDb: Database,
  userId: string,
  c: Candidate,
  d: Decision,
  ctx: ApplyContext,
): string {
  const now = nowIso(ctx.nowMs);
  const cur = getUserStyle(userDb, userId, c.key);
  const source = ctx.extractor === "llm" ? "llm" : "offline";
  const next = (content: string, importance: number, evidence: StyleEvidence[]): UserStyleItem => ({
    id: newId("ust", ctx.nowMs),
    user_id: userId,
    key: c.key,
    content,
    tags: c.tags,
    importance,
    created_at: now,
    updated_at: now,
    source,
    confidence: c.confidence,
    evidence,
  });
  const seen = (item: UserStyleItem) => {
    refreshUserStyle(userDb, item.id, {
      updated_at: item.updated_at > now ? item.updated_at : now,
      importance: item.importance,
      confidence: item.confidence,
      evidence: mergeEvidence(item.evidence, evidenceOf(c, ctx.projectId)),
    });
    return item.id;
  };
  // What the person forgot or rewrote is not made again; their own version (source `manual`) keeps its
  // words and only gains evidence (corrections.ts).
  const rejected = styleRejectedBy(userDb, userId, c);
  if (rejected) return rejected.current?.source === "manual" ? seen(rejected.current) : rejected.id;
  if (cur?.source === "manual") return d.verb === "DELETE_AND_ADD" || d.refresh === false ? cur.id : seen(cur);
  if (!cur) {
    const item = next(c.content, c.importance, [evidenceOf(c, ctx.projectId)]);
    insertUserStyle(userDb, item);
    return item.id;
  }
  if (d.verb === "NOOP") {
    if (d.refresh === false) return cur.id;
    refreshUserStyle(userDb, cur.id, {
      updated_at: cur.updated_at > now ? cur.updated_at : now, // a late, older episode never moves last-seen back
      importance: Math.round(Math.min(1, Math.max(cur.importance, c.importance) + 0.05) * 100) / 100,
      confidence: Math.round(Math.min(1, Math.max(cur.confidence, c.confidence) + 0.02) * 100) / 100,
      evidence: mergeEvidence(cur.evidence, evidenceOf(c, ctx.projectId)),
    });
    return cur.id;
  }
  // The unique (user_id, key) index keeps one current row: ADD_NEW on an occupied key replaces it too.
  const verb = d.verb === "ADD_NEW" ? "UPDATE_EXISTING" : d.verb;
  const merged = verb === "UPDATE_EXISTING";
  const item = next(
    d.content ?? c.content,
    merged ? Math.max(cur.importance, c.importance) : c.importance,
    merged ? mergeEvidence(cur.evidence, evidenceOf(c, ctx.projectId)) : [evidenceOf(c, ctx.projectId)],
  );
  supersedeUserStyle(userDb, cur.id, item, verb, c.source_episode_id, now);
  return item.id;
}

export interface EffectiveStyleItem {
  key: string;
  content: string;
  tags: string[];
  importance: number;
  updated_at: string;
  scope: "user" | "project";
  id: string;
}

/** The style that applies in a project: global items, with the project's items replacing them key by key. */
export function effectiveStyle(
  projectDb: Database,
  userDb: Database | null,
  projectId: string,
  userId: string,
): EffectiveStyleItem[] {
  const byKey = new Map<string, EffectiveStyleItem>();
  if (userDb) {
    for (const g of listUserStyle(userDb, userId)) {
      byKey.set(g.key, {
        key: g.key,
        content: g.content,
        tags: g.tags,
        importance: g.importance,
        updated_at: g.updated_at,
        scope: "user",
        id: g.id,
      });
    }
  }
  const project: MemoryItem[] = currentItems(projectDb, projectId, ["user_style"]);
  for (const p of project) {
    const prev = byKey.get(p.key);
    if (prev && prev.scope === "project" && prev.importance >= p.importance) continue;
    byKey.set(p.key, {
      key: p.key,
      content: p.content,
      tags: p.tags,
      importance: p.importance,
      updated_at: p.updated_at,
      scope: "project",
      id: p.id,
    });
  }
  return [...byKey.values()].sort((a, b) => b.importance - a.importance || (a.updated_at < b.updated_at ? 1 : -1));
}
