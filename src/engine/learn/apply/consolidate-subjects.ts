/**
 * One subject, one memory, across keys (issue 26 item 2): the pass a team wiki's editor makes after
 * new sessions. The Mem0-style decision (decide.ts, update.ts) only meets items under the same key,
 * and one subject rarely keeps its key from one session to the next ("images generated into a static
 * folder" and, weeks later, "images are generated JSON and SVG"). After an episode's items are
 * stored, each new item is set beside the older valid items on the same subject — ones that cite the
 * same identifiers, paths or settings keys, or that the BM25 ranker finds close to it — and:
 * - with a model, the model decides among that small set: the newer is the later outcome (the older
 *   becomes history, linked to it), they say the same (merged), a machine item contradicts the
 *   user's own rule (the rule stays), or both stay;
 * - offline, only what is certain: the same statement under another key (merged into the newer), an
 *   older item the code now contradicts (its anchor is stale) that a newer item on the same subject
 *   replaces, and a recipe that runs a command the user's own rule forbids outright ("Never run
 *   `npm install`."); a rule that only limits when or how ("not on every commit") is left to the model.
 * Never destroys: the superseded row is kept with `superseded_by` pointing at the item that replaced
 * it (`sqrl show` prints the chain). A person's correction (an edited or pinned item) is never
 * superseded by a machine, and a rule the user stated is replaced only by another the user stated.
 */
import type { Database } from "bun:sqlite";
import { z } from "zod";
import { log as rootLog } from "../../../shared/log.ts";
import { nowIso } from "../../../shared/time.ts";
import { anchorJsonOf } from "../../../sql/memory-anchors.ts";
import { getMemoryItem, supersedeMemoryItem, updateMemoryItem, type MemoryItem } from "../../../sql/memory-items.ts";
import { rankLexical } from "../../../ranker/lexical.ts";
import { Anchor, namedInContent } from "../../anchors/anchor.ts";
import { checkAnchor, namesToSearch } from "../../anchors/check.ts";
import { RepoState } from "../../anchors/repo-state.ts";
import { clip } from "../../events/event-view.ts";
import { callForJson } from "../../llm/json-call.ts";
import type { LlmProvider } from "../../llm/provider.ts";
import type { UsageLedger } from "../../llm/usage.ts";
import { heldByPerson } from "./corrections.ts";
import { similarity } from "./wording.ts";

const log = rootLog.child({ service: "learn" });

/** Older items set beside one new item (the model decides among them; each costs prompt tokens). */
export const MAX_CANDIDATES = 4;
/** Pairs sent to the model in one pass (the rest are decided by the offline rules). */
export const MAX_LLM_PAIRS = 24;
/** A BM25 score at least this share of the new item's own score is a strong lexical overlap. */
export const LEXICAL_SHARE = 0.35;

export type Verdict = "REPLACES" | "SAME" | "RULE_WINS" | "NEWER_WRONG" | "KEEP_BOTH";

export interface Pair {
  newer: MemoryItem;
  older: MemoryItem;
  /** Identifiers, paths and settings keys both cite. */
  shared: string[];
  /** BM25 score of the older item for the newer's text as a share of the newer's own score, or their word overlap (Jaccard) if higher (0..1). */
  lexical: number;
}

export interface Outcome {
  /** The item that goes (superseded, kept as history). */
  goes: string;
  /** The item that stays and holds the lineage. */
  stays: string;
  verdict: Exclude<Verdict, "KEEP_BOTH">;
  reason: string;
  by: "llm" | "rules";
}

/** A rule the user stated (not a habit read from what ran). */
export function isUserRule(i: Pick<MemoryItem, "type" | "tags">): boolean {
  return i.type === "user_style" && !i.tags.includes("tooling");
}

/** A fact read from a manifest ("Tests: `pnpm test` (from package.json)"): its key is its subject. */
function fromManifest(i: MemoryItem): boolean {
  return /\(from [\w./-]+\)\.?$/.test(i.content.trim());
}

/**
 * Types that can hold one subject: the same type, a user's rule and a recipe (a contradiction), or a
 * recipe and a project fact (one session stores how a release is cut as a recipe, a later one as a fact).
 */
function comparable(a: MemoryItem, b: MemoryItem): boolean {
  if (a.type === b.type) return true;
  const pair = new Set([a.type, b.type]);
  if (pair.has("recipe") && pair.has("project_fact")) return true;
  return pair.has("recipe") && pair.has("user_style") && (isUserRule(a) || isUserRule(b));
}

/** Lower-cased names an item cites: identifiers, paths, settings keys (`llm.provider`), commands in backticks. */
function namesOf(i: MemoryItem): Set<string> {
  return new Set(
    [...namedInContent(i.content, { prose: true }), ...i.file_paths, ...backticked(i.content)]
      .map((n) => n.toLowerCase())
      .filter((n) => n.length >= 4),
  );
}

/**
 * Pairs of each new item (made by one of `episodeIds`: an item only seen again is not a later
 * outcome) with the older valid items on the same subject under another key.
 */
export function subjectPairs(
  db: Database,
  projectId: string,
  newIds: readonly string[],
  episodeIds: readonly string[],
): Pair[] {
  const episodes = new Set(episodeIds);
  const fresh = [...new Set(newIds)]
    .map((id) => getMemoryItem(db, id))
    .filter((i): i is MemoryItem => !!i && !i.deleted && i.scope === "project" && i.project_id === projectId)
    .filter((i) => i.source_episode_id !== null && episodes.has(i.source_episode_id) && !fromManifest(i));
  if (fresh.length === 0) return [];
  const out: Pair[] = [];
  for (const newer of fresh) {
    // One BM25 query proposes the items close to its words and to the paths it cites.
    const query = [newer.content, ...newer.file_paths].join(" ");
    const hits = rankLexical(db, query, { table: "memory_fts", idColumn: "memory_id", limit: 12 });
    const self = hits.find((h) => h.id === newer.id)?.score ?? hits[0]?.score ?? 0;
    const lexical = new Map(hits.filter((h) => h.id !== newer.id).map((h) => [h.id, self > 0 ? h.score / self : 0]));
    const mine = namesOf(newer);
    const ids = lexical.keys();
    const scored: Pair[] = [];
    for (const id of ids) {
      const older = getMemoryItem(db, id);
      if (!older || older.deleted || older.scope !== "project" || older.project_id !== projectId) continue;
      if (older.id === newer.id || (older.type === newer.type && older.key === newer.key)) continue;
      if (older.created_at >= newer.created_at || older.source_episode_id === newer.source_episode_id) continue;
      if (!comparable(newer, older) || fromManifest(older)) continue;
      const theirs = namesOf(older);
      const shared = [...mine].filter((n) => theirs.has(n));
      // BM25 proposes; in a small store its scores say little, so the words both share count too.
      const share = Math.max(lexical.get(id) ?? 0, similarity(newer.content, older.content).jaccard);
      if (shared.length === 0 && share < LEXICAL_SHARE) continue;
      scored.push({ newer, older, shared, lexical: Math.round(share * 100) / 100 });
    }
    scored.sort((a, b) => b.shared.length + b.lexical - (a.shared.length + a.lexical));
    out.push(...scored.slice(0, MAX_CANDIDATES));
  }
  return out;
}

/** Commands and code a text names in backticks. */
function backticked(text: string): Set<string> {
  return new Set([...text.matchAll(/`([^`\n]{2,120})`/g)].map((m) => m[1]!.trim().toLowerCase()));
}

/** The verdict the offline rules are certain of, or KEEP_BOTH. */
export function ruleVerdict(p: Pair, staleOlder: boolean): { verdict: Verdict; reason: string } {
  const { newer, older } = p;
  if (newer.type === older.type) {
    const a = similarity(newer.content, older.content);
    const b = similarity(older.content, newer.content);
    if (a.jaccard >= 0.8 || a.containment >= 0.9 || b.containment >= 0.9)
      return { verdict: "SAME", reason: "the same statement under another key" };
    // The code contradicts the older one; a later session says what is true now, on the same subject.
    if (staleOlder && (p.shared.length > 0 || a.jaccard >= 0.3))
      return {
        verdict: "REPLACES",
        reason: "the code no longer has what the older one names; the newer one is current",
      };
    return { verdict: "KEEP_BOTH", reason: "not certain offline" };
  }
  // A recipe and a fact on one subject: which one holds is the model's call.
  if (!isUserRule(newer) && !isUserRule(older)) return { verdict: "KEEP_BOTH", reason: "not certain offline" };
  // A user's rule against a recipe: the rule forbids outright a command the recipe runs ("Never run
  // `npm install`."). A rule that only limits when or how ("not on every commit") is the model's call.
  const rule = isUserRule(newer) ? newer : older;
  const recipe = rule === newer ? older : newer;
  const runs = backticked(recipe.content);
  const forbidden = [...rule.content.matchAll(FORBIDS)].map((m) => m[1]!.trim().toLowerCase());
  if (forbidden.some((c) => runs.has(c)))
    return { verdict: "RULE_WINS", reason: "a recipe runs what the user's rule forbids" };
  return { verdict: "KEEP_BOTH", reason: "not certain offline" };
}

/** "Never run `x`." / "Don't use `x`;" — a command forbidden with nothing after it that limits the ban. */
const FORBIDS =
  /\b(?:never|don'?t|do not|avoid|stop)\s+(?:(?:run|use|call|invoke)(?:ning)?\s+)?`([^`\n]{2,120})`\s*(?=$|[.;!]|,\s*(?:it|this|that|we|use|run)\b)/gi;

export const CONSOLIDATE_SYSTEM = `You edit a software team's long-term memory the way a careful teammate edits the team wiki.
Each PAIR shows an OLDER item and a NEWER item, written from a later session, that may be about the same subject although they were stored under different keys. Choose one verdict per pair:
- REPLACES: same subject, and the newer one is what the project does now: a later design, name, layout, tool, decision or procedure (the steps a later session took for the same task, e.g. a release) that replaced the older one. The older one is no longer true. When the two disagree about what the project does and neither is a user rule, the newer one replaces the older: the later session saw more.
- NEWER_WRONG: they disagree about how a tool, command or library behaves (not about a change the project made), and the older one is the correct account: the newer one misreads it and goes.
- SAME: the same lesson or fact, maybe worded differently, with another detail or another example (one can go: a reader needs it once). Give "content" only when one merged sentence says more than the newer item alone: only what the two say (add no advice of your own), 60 tokens or fewer; never merge claims that disagree.
- RULE_WINS: one of them is the user's own stated rule (marked [user rule]) and the other contradicts it (e.g. a recipe that tests every commit against the rule "test only HEAD"); the rule stays, the other goes.
- KEEP_BOTH: different subjects, both still true.
Return ONLY JSON: {"pairs": [{"pair": number, "verdict": "REPLACES"|"SAME"|"RULE_WINS"|"NEWER_WRONG"|"KEEP_BOTH", "content": string (SAME only, optional)}]}.`;

export const ConsolidateOutput = z.object({
  pairs: z
    .array(
      z.object({
        pair: z.number().int().nonnegative(),
        verdict: z.enum(["REPLACES", "SAME", "RULE_WINS", "NEWER_WRONG", "KEEP_BOTH"]),
        content: z.string().min(3).max(1200).optional(),
      }),
    )
    .max(200),
});

function line(i: MemoryItem): string {
  const who = isUserRule(i) ? " [user rule]" : "";
  return `[${i.type} ${i.key}, ${i.created_at.slice(0, 10)}${who}] ${clip(i.content, 400)}`;
}

/** The model's verdicts by pair index (pairs it left out or answered wrongly are absent). */
export async function verdictsByLlm(
  llm: LlmProvider,
  ledger: UsageLedger,
  pairs: readonly Pair[],
): Promise<Map<number, { verdict: Verdict; content?: string }>> {
  const out = new Map<number, { verdict: Verdict; content?: string }>();
  if (pairs.length === 0) return out;
  const prompt = pairs
    .map((p, i) => [`Pair ${i}:`, `  OLDER ${line(p.older)}`, `  NEWER ${line(p.newer)}`].join("\n"))
    .join("\n\n");
  const res = await callForJson(
    llm,
    ledger,
    {
      system: CONSOLIDATE_SYSTEM,
      prompt: `${prompt}\n\nReturn the JSON object now.`,
      maxTokens: 150 + 60 * pairs.length,
    },
    ConsolidateOutput,
  );
  for (const a of res.pairs)
    if (a.pair < pairs.length && !out.has(a.pair))
      out.set(a.pair, { verdict: a.verdict, ...(a.content ? { content: a.content } : {}) });
  return out;
}

/** Is the older item's stored anchor stale against today's code (and not merely unlanded elsewhere)? */
function staleOf(db: Database, root: string, ids: readonly string[]): Set<string> {
  const out = new Set<string>();
  if (ids.length === 0) return out;
  let repo: RepoState;
  try {
    repo = new RepoState(root);
  } catch {
    return out;
  }
  if (!repo.isGit) return out;
  const anchors: Array<[string, Anchor]> = [];
  for (const [id, json] of anchorJsonOf(db, ids)) {
    try {
      const a = Anchor.safeParse(JSON.parse(json));
      if (a.success) anchors.push([id, a.data]);
    } catch {
      // Not checkable: not stale.
    }
  }
  // What they name, asked of git once for all of them.
  const names = [...new Set(anchors.flatMap(([, a]) => namesToSearch(a)))];
  const present = repo.presentNames(names);
  repo.unmergedHolders(names.filter((n) => !present.has(n)));
  for (const [id, a] of anchors) if (checkAnchor(a, repo).status === "stale") out.add(id);
  return out;
}

/** Who goes for a verdict, or null when a person's correction or the user's rule forbids it. */
function outcomeOf(db: Database, p: Pair, verdict: Verdict, reason: string, by: "llm" | "rules"): Outcome | null {
  if (verdict === "KEEP_BOTH") return null;
  let goes = p.older;
  let stays = p.newer;
  if (verdict === "RULE_WINS") {
    const rule = isUserRule(p.newer) ? p.newer : isUserRule(p.older) ? p.older : null;
    if (!rule) return null;
    stays = rule;
    goes = rule === p.newer ? p.older : p.newer;
    if (isUserRule(goes)) return null; // two rules: the same-key decision and the user's words settle it
  } else if (verdict === "NEWER_WRONG") {
    // A later misreading of how a tool behaves ("`bun test src/` runs only the project's tests") must not
    // push out the account the sessions proved: with "the newer replaces" alone, stand-in answers on the
    // packmind sessions replaced the right tmp/clones lesson with the wrong one (session 8).
    goes = p.newer;
    stays = p.older;
    if (isUserRule(goes)) return null;
  } else if (isUserRule(goes) && !isUserRule(stays)) return null; // a machine item never replaces the user's rule
  if (heldByPerson(db, goes)) return null;
  return { goes: goes.id, stays: stays.id, verdict, reason, by };
}

export interface ConsolidateDeps {
  llm: LlmProvider | null;
  ledger: UsageLedger;
  nowMs: number;
}

/**
 * The pass: pairs of the new items with older ones on their subject, a verdict for each (the model's
 * when there is one, else the certain offline rules), applied in one transaction. Returns what it did.
 */
export async function consolidateSubjects(
  db: Database,
  projectId: string,
  newIds: readonly string[],
  episodeIds: readonly string[],
  d: ConsolidateDeps,
): Promise<Outcome[]> {
  try {
    const pairs = subjectPairs(db, projectId, newIds, episodeIds);
    if (pairs.length === 0) return [];
    let byLlm = new Map<number, { verdict: Verdict; content?: string }>();
    const asked = pairs.slice(0, MAX_LLM_PAIRS);
    if (d.llm) {
      try {
        byLlm = await verdictsByLlm(d.llm, d.ledger, asked);
      } catch (err) {
        log.info(`LLM consolidation fell back to rules: ${(err as Error).message}`);
      }
    }
    const stale = staleOf(
      db,
      projectId,
      pairs.map((p) => p.older.id),
    );
    const at = nowIso(d.nowMs);
    const done: Outcome[] = [];
    db.transaction(() => {
      const gone = new Set<string>();
      for (const [i, p] of pairs.entries()) {
        if (gone.has(p.older.id) || gone.has(p.newer.id)) continue;
        const llm = byLlm.get(i);
        const v = llm ? { verdict: llm.verdict, reason: "llm" } : ruleVerdict(p, stale.has(p.older.id));
        const o = outcomeOf(db, p, v.verdict, v.reason, llm ? "llm" : "rules");
        if (!o) continue;
        const stays = getMemoryItem(db, o.stays);
        const goes = getMemoryItem(db, o.goes);
        if (!stays || !goes || stays.deleted || goes.deleted) continue;
        if (o.verdict === "SAME" || o.verdict === "REPLACES") {
          // The survivor carries the evidence of both: the subject was seen in every one of those sessions.
          const merged = o.verdict === "SAME";
          updateMemoryItem(db, stays.id, {
            updated_at: stays.updated_at,
            ...(merged && llm?.content ? { content: llm.content } : {}),
            evidence_episode_ids: [...new Set([...goes.evidence_episode_ids, ...stays.evidence_episode_ids])].slice(
              -40,
            ),
            ...(merged
              ? {
                  importance: Math.max(stays.importance, goes.importance),
                  source_event_ids: [...new Set([...stays.source_event_ids, ...goes.source_event_ids])].slice(-60),
                }
              : {}),
          });
        }
        // The episode whose items brought this pass superseded it, whichever of the two stays: with the
        // survivor's own episode, a newer item that lost (NEWER_WRONG, RULE_WINS) seemed superseded before
        // it was made, and a replay of the sessions saw it standing beside the one that stayed.
        supersedeMemoryItem(db, goes.id, stays.id, p.newer.source_episode_id ?? stays.source_episode_id, at);
        gone.add(goes.id);
        done.push(o);
      }
    }).immediate();
    for (const o of done) log.info(`consolidated ${o.goes} into ${o.stays}: ${o.verdict} (${o.by}: ${o.reason})`);
    return done;
  } catch (err) {
    log.warn(`could not consolidate memories of ${projectId}: ${(err as Error).message}`);
    return [];
  }
}
