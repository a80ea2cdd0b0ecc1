/** The candidate memory every extractor proposes, the rule signature, and the dedupe that keeps one per (type, key, scope). */
import { z } from "zod";
import { MemoryType } from "../../../shared/api.ts";
import type { MemoryScope } from "../../../sql/memory-items.ts";
import type { EngineEvent } from "../../events/event-view.ts";

/**
 * A memory item an extractor proposes for one episode. The update step (update.ts) decides what
 * happens to it against the items already stored on the same anchor (project, type, key, scope, user).
 */
export interface Candidate {
  type: MemoryType;
  /** Stable slug: `package_manager`, `test_command`, `framework`, `endpoint:/login`, `pitfall:lint:…`. */
  key: string;
  content: string;
  tags: string[];
  importance: number;
  confidence: number;
  scope: MemoryScope;
  file_paths: string[];
  source_episode_id: string;
  source_event_ids: string[];
  /**
   * The single value the statement is about (`pnpm` for package_manager), when there is one.
   * Same key + different value is a contradiction (DELETE_AND_ADD) for the rule-based update.
   */
  value?: string;
  /** +1 for "always/prefer/use", -1 for "never/don't/stop"; opposite polarity on one key contradicts. */
  polarity?: 1 | -1;
  /** Which rule produced it (kept in tags-free metadata for tests and `sqrl show`). */
  rule: string;
  /**
   * Not a memory on its own yet: it becomes one when another episode shows the same `signature`
   * (apply/gate.ts). Set on what one episode cannot prove lasting (a quick fix, one passing run).
   */
  gate?: { kind: "pitfall" | "recipe" | "lint_rule"; signature: string };
  /** Earlier episodes that showed the same thing (set when the recurrence gate promotes it). */
  evidence_episodes?: string[];
}

/** What every offline rule receives: the episode's events (main thread first) and where the repo is. */
export interface RuleInput {
  episodeId: string;
  projectRoot: string;
  events: readonly EngineEvent[];
}

export type Rule = (input: RuleInput) => Candidate[];

export const KEY_RE = /^[a-z0-9][a-z0-9_:./@#+-]{0,119}$/;

/** Candidate shape accepted from outside (LLM output), validated. */
export const CandidateShape = z.object({
  type: MemoryType,
  key: z.string().regex(KEY_RE, "key must be a lower-case slug"),
  content: z.string().min(3).max(1200),
  tags: z.array(z.string().max(40)).max(12).default([]),
  importance: z.number().min(0).max(1).default(0.5),
  confidence: z.number().min(0).max(1).default(0.6),
  scope: z.enum(["user", "project"]).default("project"),
  file_paths: z.array(z.string()).max(30).default([]),
});

export function clamp01(n: number): number {
  return Math.max(0, Math.min(1, n));
}

/** Keep one candidate per (type, key, scope): the most confident, evidence merged. */
export function dedupeCandidates(cands: readonly Candidate[]): Candidate[] {
  const byKey = new Map<string, Candidate>();
  for (const c of cands) {
    const k = `${c.type}\u0000${c.key}\u0000${c.scope}`;
    const prev = byKey.get(k);
    if (!prev) {
      byKey.set(k, { ...c });
      continue;
    }
    const keep = c.confidence >= prev.confidence ? { ...c } : prev; // ties: the later statement wins
    keep.source_event_ids = [...new Set([...prev.source_event_ids, ...c.source_event_ids])];
    keep.file_paths = [...new Set([...prev.file_paths, ...c.file_paths])];
    keep.tags = [...new Set([...prev.tags, ...c.tags])];
    byKey.set(k, keep);
  }
  return [...byKey.values()];
}
