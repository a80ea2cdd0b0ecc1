/**
 * `POST /task_context` (reference §5.5), the primary tool: the memories relevant to one coding task,
 * explained, inside the budget — or an explicit abstention.
 *
 * Candidates come from the FTS index (task text), path look-ups (active files) and the user's global
 * style in user.db (rows sharing a word with the task), filtered by project and type; each is scored 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path_match
 * (src/engine/scoring.ts). Items at or above RELEVANCE_THRESHOLD are selected, best first; if none
 * is, the answer abstains. With an LLM configured a Chain-of-Note pass then keeps the ones that truly
 * matter for the task and rewrites their reasons; the budget is applied after it.
 */
import {
  MEMORY_TYPES,
  NO_RELEVANT_MEMORY,
  TaskContext,
  type MemoryType,
  type TaskContextRequest,
} from "../../shared/api.ts";
import { log as rootLog } from "../../shared/log.ts";
import { nowIso } from "../../shared/time.ts";
import { packBlocks, type Block } from "./render/budget.ts";
import { globalStyleItems, lexicalCandidates, loadItems, pathCandidates } from "./rank/candidates.ts";
import { queryVector, vectorCandidates } from "./rank/vectors.ts";
import { memoryLine } from "./render/markdown.ts";
import { groupOf, originOf, SERVED_HEADINGS } from "./render/origin.ts";
import { scoreItems, type Scored } from "./rank/relevance.ts";
import { buildQueryModel, informativeQuery, itemStems, termCoverage } from "./rank/scoring.ts";
import { analyzeQuery } from "../../ranker/query.ts";
import { pinnedIds } from "../../sql/memory-marks.ts";
import { recurringItems, type Recurring } from "./rank/recurring.ts";
import { restatements } from "./rank/restatements.ts";
import { clipQuery } from "./query-text.ts";
import type { RetrievalContext } from "./retrieval-context.ts";
import { asServed, checkRoot, withStatusNote, verifyItems, type Verification } from "./verify/verify.ts";

const log = rootLog.child({ service: "retrieve" });

/**
 * Abstention gate, calibrated on the labelled set in test/fixtures/retrieval/ (`bun run bench
 * retrieval` prints the sweep): an item is relevant when its score reaches RELEVANCE_THRESHOLD and
 * either its similarity reaches MIN_SIMILARITY or it is about an active file itself. Importance and
 * recency alone reach at most 0.3, so without shared content only an item on an active file can pass.
 */
export const RELEVANCE_THRESHOLD = 0.3;
export const MIN_SIMILARITY = 0.2;

export function isRelevant(
  s: Pick<Scored, "score" | "parts">,
  threshold = RELEVANCE_THRESHOLD,
  minSimilarity = MIN_SIMILARITY,
): boolean {
  return s.score >= threshold && (s.parts.similarity >= minSimilarity || s.parts.path >= 1);
}

const RULE_MODAL = /^(.{2,80}?)\s+(?:must|should|shall|needs? to|ha(?:s|ve) to)\b/i;

/**
 * A rule the user stated about a kind of work ("Deletes must run inside a Postgres transaction")
 * holds for every task doing that work, though it may share a single word with it ("add a bulk
 * delete endpoint"): a stated rule whose subject — the words before its modal — names a word of the
 * task clears the gate. Measured on the replay and memory-quality tasks: the scenario's
 * withTransaction rule is served for the bulk-delete task; unrelated tasks still abstain (28/28).
 */
export function ruleSubjectMatch(
  item: { type: string; key: string; content: string },
  taskStems: ReadonlySet<string>,
): string | null {
  if (item.type !== "user_style" || !item.key.startsWith("rule:")) return null;
  const subject = RULE_MODAL.exec(item.content)?.[1];
  if (!subject) return null;
  const hit = analyzeQuery(subject).find((t) => taskStems.has(t.stem));
  return hit ? hit.word : null;
}

/** Why a stated rule about the task's kind of work is served, saying whose rule it is (render/origin.ts). */
export function ruleReason(item: Parameters<typeof originOf>[0], subject: string): string {
  const o = originOf(item);
  switch (o.kind) {
    case "repo_file":
    case "manifest":
      return `From ${o.source ?? "the repository's files"}: the project's rule about ${subject}, which this task involves.`;
    case "stated":
      return `A rule you stated about ${subject}, which this task involves.`;
    case "edited":
      return `A rule about ${subject}, in your words, which this task involves.`;
    case "imported":
      return `An imported rule about ${subject}, which this task involves.`;
    default:
      return `A rule about ${subject} learned from your sessions, which this task involves.`;
  }
}

/** Reference: "take top ~20 candidates". */
export const MAX_SELECTED = 20;

export const TASK_CONTEXT_HEADER = "## Relevant memory for this task";
const ALL_SEEN = "All relevant memory for this task was already shown earlier in this session.";

/** Candidates scored and split into relevant (best first) and the rest. */
export async function rankTaskCandidates(
  ctx: RetrievalContext,
  req: Pick<TaskContextRequest, "task_description" | "active_file_paths" | "preferred_memory_types"> & {
    user_id?: string;
  },
): Promise<Scored[]> {
  const types: MemoryType[] =
    req.preferred_memory_types && req.preferred_memory_types.length > 0
      ? req.preferred_memory_types
      : [...MEMORY_TYPES];
  const model = buildQueryModel(ctx.db, req.task_description);
  const lexical = model.terms.length > 0 ? lexicalCandidates(ctx.db, informativeQuery(model)) : new Map();
  const ids = new Set(lexical.keys());
  for (const id of pathCandidates(ctx.db, req.active_file_paths)) ids.add(id);
  for (const id of pinnedIds(ctx.db)) ids.add(id); // pinned by a person: always a candidate
  let queryVec: Float32Array | undefined;
  if (ctx.embedder) {
    queryVec = await queryVector(ctx.embedder, req.task_description);
    if (queryVec)
      for (const id of (await vectorCandidates(ctx.db, ctx.projectId, ctx.embedder, queryVec, 50)).keys()) ids.add(id);
  }
  const items = loadItems(ctx.db, ctx.projectId, ids, types);
  if (types.includes("user_style") && model.terms.length > 0) {
    // Global style shares the project's scoring; only rows with a word of the task can clear the gate.
    items.push(
      ...globalStyleItems(
        ctx.db,
        ctx.userDb,
        ctx.projectId,
        req.user_id ?? ctx.userId,
        (g) => termCoverage(model, itemStems(g)).score > 0,
      ),
    );
  }
  return scoreItems(ctx, items, {
    text: req.task_description,
    paths: req.active_file_paths,
    similarity: "absolute",
    model,
    lexical,
    ...(queryVec ? { queryVec } : {}),
  });
}

export async function taskContext(ctx: RetrievalContext, request: TaskContextRequest): Promise<TaskContext> {
  const clipped = clipQuery(request.task_description);
  const req = { ...request, task_description: clipped.text };
  const note = clipped.note ? `\n${clipped.note}` : "";
  const budget = req.context_budget_tokens ?? ctx.budgets.task_context;
  const scored = await rankTaskCandidates(ctx, req);
  const excluded = new Set(req.exclude_memory_ids);
  const taskStems = new Set(analyzeQuery(req.task_description).map((t) => t.stem));
  const pinned = pinnedIds(ctx.db);
  let relevant: Array<Scored & { verification?: Verification }> = scored.flatMap((s) => {
    if (isRelevant(s) || pinned.has(s.item.id)) return [s];
    const subject = ruleSubjectMatch(s.item, taskStems);
    return subject ? [{ ...s, reason: ruleReason(s.item, subject) }] : [];
  });
  const omittedSeen = relevant.filter((s) => excluded.has(s.item.id)).length;
  relevant = relevant.filter((s) => !excluded.has(s.item.id)).slice(0, MAX_SELECTED * 2);
  if (relevant.length > 0 || omittedSeen > 0 || req.active_file_paths.length > 0 || onlyWorkWords(taskStems)) {
    // A recurring item ranks by the larger of its relevance and the share of sessions that met it; for
    // an opening of work words only it goes first (see recurringFor).
    relevant.push(...(await recurringFor(ctx, req, relevant, excluded, onlyWorkWords(taskStems))));
    relevant.sort((a, b) => b.score - a.score);
  }
  relevant = heldBackStale(ctx, relevant).slice(0, MAX_SELECTED);
  if (ctx.noteTaker && relevant.length > 0) relevant = await chainOfNote(ctx, req.task_description, relevant);

  const said = restatements(ctx.db, relevant);
  const blocks: Block[] = relevant.map((s) => ({
    id: s.item.id,
    group: groupOf(s.item),
    text: memoryLine(s.item, ctx.nowMs),
    ...(said.has(s.item.id) ? { restates: said.get(s.item.id)! } : {}),
  }));
  const hasRelevant = relevant.length > 0 || omittedSeen > 0;
  const packed = packBlocks({
    ...(hasRelevant ? { header: `${TASK_CONTEXT_HEADER}${note}` } : {}),
    groups: SERVED_HEADINGS,
    blocks,
    budget,
    counter: ctx.counter,
    omittedSeen,
    emptyText: `${hasRelevant ? ALL_SEEN : NO_RELEVANT_MEMORY}${note}`,
  });
  const byId = new Map(relevant.map((s) => [s.item.id, s]));
  const selected = packed.shown.map((b) => byId.get(b.id)!);
  return TaskContext.parse({
    type: "task_context",
    project_id: ctx.projectId,
    user_id: req.user_id ?? ctx.userId,
    task_description: req.task_description,
    generated_at: nowIso(ctx.nowMs),
    token_estimate: packed.tokens,
    has_relevant_memory: hasRelevant,
    selected_memories: selected.map((s) => ({
      memory_id: s.item.id,
      type: s.item.type,
      key: s.item.key,
      content: s.item.content,
      importance: s.item.importance,
      reason: s.reason,
      ...(s.verification ? { verification: { status: s.verification.status, reason: s.verification.reason } } : {}),
    })),
    markdown: packed.markdown,
    memory_ids: selected.map((s) => s.item.id),
    omitted_seen: omittedSeen,
  });
}

/** Recurring items served beside the relevant ones, at most this many (they come last, so the budget cuts them first). */
export const MAX_RECURRING = 3;

/**
 * Words that say only that work goes on in this project ("commit this", "continue", "run the tests
 * and push"): a task made of them alone is about the project, though no memory shares a word with it.
 */
const WORK_STEMS: ReadonlySet<string> = new Set(
  analyzeQuery(
    "commit commits push continue proceed resume go ahead next finish done change changes work run tests test lint build check checks fix merge rebase please ok okay yes let",
  ).map((t) => t.stem),
);

export function onlyWorkWords(taskStems: ReadonlySet<string>): boolean {
  return [...taskStems].every((s) => WORK_STEMS.has(s));
}

/**
 * The project's recurring items (rank/recurring.ts) for a task that is about this project: something
 * in memory is relevant to it, it names files, or it only says that work goes on. A task about
 * something else (no relevant memory, no files, words of its own) still abstains.
 */
async function recurringFor(
  ctx: RetrievalContext,
  req: Pick<TaskContextRequest, "task_description" | "active_file_paths" | "preferred_memory_types">,
  relevant: readonly Scored[],
  excluded: ReadonlySet<string>,
  /**
   * The opening is work words only ("commit", "continue"): it names no subject, so an item that shares
   * "commit" with it is weak evidence of need and what most sessions met again is strong. Measured with
   * `bun run bench eval` on model-made memory (issue 26, session 9): four items mentioning "commit"
   * (relevance 0.77-0.84) filled a "commit" opening's 400 tokens before the `rtk` pitfall met in 68 % of
   * the sessions, which that session then needed.
   */
  first = false,
): Promise<Scored[]> {
  const have = new Set(relevant.map((s) => s.item.id));
  const picks = recurringItems(ctx.db, ctx.projectId, ctx.nowMs)
    .filter((r) => !have.has(r.id) && !excluded.has(r.id))
    .slice(0, MAX_RECURRING);
  if (picks.length === 0) return [];
  const types: MemoryType[] =
    req.preferred_memory_types && req.preferred_memory_types.length > 0
      ? req.preferred_memory_types
      : [...MEMORY_TYPES];
  const byId = new Map(picks.map((r) => [r.id, r]));
  const items = loadItems(
    ctx.db,
    ctx.projectId,
    picks.map((r) => r.id),
    types,
  );
  const scored = await scoreItems(ctx, items, {
    text: req.task_description,
    paths: req.active_file_paths,
    similarity: "absolute",
  });
  return scored.map((s) => {
    const r = byId.get(s.item.id)!;
    const share = r.sessions / r.since;
    return { ...s, score: first ? 1 + share : Math.max(s.score, share), reason: recurringReason(r) };
  });
}

function recurringReason(r: Recurring): string {
  return `Came up again in ${r.sessions} of this project's last ${r.since} sessions, whatever their task.`;
}

/**
 * Each candidate checked against today's code (verify/): stale ones are held back, moved ones are
 * served with today's paths and names, and the status joins the reason.
 */
function heldBackStale(
  ctx: RetrievalContext,
  relevant: readonly Scored[],
): Array<Scored & { verification?: Verification }> {
  if (ctx.verify === false) return [...relevant];
  const checks = verifyItems(
    checkRoot(ctx),
    ctx.db,
    relevant.map((s) => s.item),
    ctx.nowMs,
  );
  const out: Array<Scored & { verification?: Verification }> = [];
  for (const s of relevant) {
    const v = checks.get(s.item.id);
    if (v?.status === "stale") continue;
    out.push(v ? { ...s, item: asServed(s.item, v), reason: withStatusNote(s.reason, v), verification: v } : s);
  }
  return out;
}

/**
 * Chain-of-Note: the LLM reads the task and the scored candidates, keeps those that truly matter and
 * says why. Ids it invents are ignored; if it fails, the scored selection stands.
 */
async function chainOfNote<T extends Scored>(ctx: RetrievalContext, task: string, relevant: T[]): Promise<T[]> {
  try {
    const picks = await ctx.noteTaker!.pick(
      task,
      relevant.map((s) => ({ memory_id: s.item.id, type: s.item.type, content: s.item.content, reason: s.reason })),
    );
    const byId = new Map(relevant.map((s) => [s.item.id, s]));
    const out: T[] = [];
    for (const p of picks) {
      const s = byId.get(p.memory_id);
      if (s && !out.includes(s)) out.push({ ...s, reason: p.reason.trim() || s.reason });
    }
    return out;
  } catch (err) {
    log.warn(
      `Chain-of-Note pass failed (${err instanceof Error ? err.message : String(err)}); keeping the scored selection`,
    );
    return relevant;
  }
}
