/**
 * The contract of `sqrl eval` (src/engine/retrieve/eval/): the report it prints with `--json`, the
 * last one kept for the project (src/shared/last-eval.ts), and what the `sqrl ui` page reads and does
 * with it through the engine API (`/eval`, `/eval/run`, `/eval/forget_unused` in ROUTES).
 */
import { z } from "zod";

export const EVAL_RANKERS = ["sqrl", "bm25", "none"] as const;
export type EvalRanker = (typeof EVAL_RANKERS)[number];

const Ratio = z.number().min(0).max(1).nullable();
const Count = z.number().int().nonnegative();

export const EvalSession = z.object({
  session_id: z.string(),
  started_at: z.string(),
  /** The opening request, clipped. */
  request: z.string(),
  files: z.array(z.string()),
  /** Items standing when it started (what could be served). */
  standing: Count,
  needed: z.array(z.string()),
  served: z.array(z.string()),
  needed_served: Count,
  /** The needed items as lessons: items that restate one another count once, served when any of them is. */
  needed_lessons: Count.default(0),
  lessons_served: Count.default(0),
  served_tokens: Count,
  wasted_tokens: Count,
  abstained: z.boolean(),
});
export type EvalSession = z.infer<typeof EvalSession>;

export const EvalItem = z.object({
  memory_id: z.string(),
  type: z.string(),
  key: z.string(),
  content: z.string(),
  /** Sessions it was served to, needed by, and both (its value), and served without being needed. */
  served: Count,
  needed: Count,
  served_needed: Count,
  served_unused: Count,
});
export type EvalItem = z.infer<typeof EvalItem>;

/** What `sqrl eval --json` prints. */
export const EvalReport = z.object({
  project: z.string(),
  ranker: z.enum(EVAL_RANKERS),
  budget: z.number().int().positive(),
  /** Sessions of the project; evaluated: each later one with an opening request. */
  sessions_total: Count,
  sessions_evaluated: Count,
  /** Needed items served, of all needed items (summed over sessions); null when nothing was needed. */
  served_recall: Ratio,
  needed_total: Count,
  needed_served: Count,
  /**
   * The same per lesson: needed items that restate one another (two wordings of one pitfall, both
   * standing) count as one need, met when any of them is served.
   */
  lesson_recall: Ratio.default(null),
  lessons_total: Count.default(0),
  lessons_served: Count.default(0),
  /** Why items were needed (summed over sessions): met by the session's extraction, or anchored to what its failures and fixes touched. */
  needed_by_reason: z.object({ met_by_extraction: Count, anchor_touched: Count }),
  /**
   * Why needed items were not served (sqrl's task context only; null for the baselines): never a
   * candidate (no shared word, not about an active file), scored below the relevance gate, or
   * relevant but cut (the 20-item cap or the budget).
   */
  missed_by_cause: z.object({ not_candidate: Count, below_gate: Count, cut: Count }).nullable(),
  served_tokens: Count,
  /** Tokens of served items the session never needed. */
  wasted_tokens: Count,
  abstention: z.object({
    /** Sessions that needed nothing standing, and how many of them were served nothing. */
    sessions_nothing_needed: Count,
    abstained: Count,
    rate: Ratio,
  }),
  sessions: z.array(EvalSession),
  items: z.array(EvalItem),
});
export type EvalReport = z.infer<typeof EvalReport>;

/** Why the last eval no longer describes today's memory. */
export const EvalStale = z.object({ at: z.string(), reason: z.string() });

/** The project's last eval as kept on disk: the report, when and from where it ran, and whether it is stale. */
export const StoredEval = z.object({
  version: z.literal(1),
  project_id: z.string(),
  ran_at: z.string(),
  /** `sqrl eval` in a terminal, or the page's "Run the eval" button (through the engine). */
  by: z.enum(["cli", "page"]),
  report: EvalReport,
  stale: EvalStale.nullable(),
});
export type StoredEval = z.infer<typeof StoredEval>;

/**
 * An item the last eval served and no session needed, as it stands now: `valid` (the forget action
 * may take it), `held` (a person pinned or edited it: never forgotten by the action), `gone` (no longer
 * valid: superseded or forgotten since the eval).
 */
export const NeverNeededItem = z.object({
  memory_id: z.string(),
  type: z.string(),
  key: z.string(),
  content: z.string(),
  served: Count,
  state: z.enum(["valid", "held", "gone"]),
});
export type NeverNeededItem = z.infer<typeof NeverNeededItem>;

export const EvalRunState = z.object({ started_at: z.string(), done: Count, total: Count });

/** GET /eval: the project's last eval for the page (its figures, the items worth most, those never needed), and a run in progress. */
export const EvalStatus = z.object({
  type: z.literal("eval_status"),
  project_id: z.string(),
  last: z
    .object({
      ran_at: z.string(),
      by: z.enum(["cli", "page"]),
      stale: EvalStale.nullable(),
      summary: EvalReport.omit({ sessions: true, items: true }),
      /** Served and needed most: value first. */
      most: z.array(EvalItem),
      /** Served, never needed: most served first. */
      never_needed: z.array(NeverNeededItem),
    })
    .nullable(),
  /** A run started from the page that has not finished. */
  running: EvalRunState.nullable(),
  /** Why the last run started from the page failed (null: it did not). */
  error: z.string().nullable(),
});
export type EvalStatus = z.infer<typeof EvalStatus>;

export const EvalRunRequest = z.object({
  project_id: z.string().min(1),
  /** Only the last N sessions (default: all). */
  sessions: z.number().int().min(1).max(100_000).optional(),
  /** Token budget per session (default: config budgets.task_context). */
  budget: z.number().int().min(1).max(100_000).optional(),
});

/** POST /eval/forget_unused: the ids the person confirmed, each of which must still be in the last eval's never-needed list. */
export const EvalForgetRequest = z.object({
  project_id: z.string().min(1),
  memory_ids: z.array(z.string().min(1)).min(1).max(10_000),
});

export const EvalForgetResponse = z.object({
  type: z.literal("eval_forget"),
  /** Moved to history (as `sqrl forget` does). */
  forgotten: z.array(z.string()),
  /** Left alone, with why: pinned or edited by a person, no longer valid, or not never-needed in the last eval. */
  kept: z.array(z.object({ memory_id: z.string(), reason: z.enum(["held", "gone", "not_in_eval"]) })),
  /** The last eval is now marked stale (something was forgotten). */
  stale: z.boolean(),
});
export type EvalForgetResponse = z.infer<typeof EvalForgetResponse>;
