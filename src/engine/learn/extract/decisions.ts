import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { capTokens } from "./distil.ts";
import { clip, isPlanMessage, slug, userMessages, type EngineEvent } from "../../events/event-view.ts";

/**
 * Rule `decisions`: design choices with their reason, stored as project facts tagged `decision`
 * (the reference's four types stay; the tag is the subtype).
 * - An approved plan ("Implement the following plan: # Plan: …", Claude Code's plan mode): the user
 *   accepted it, so its title is the choice; the sentence of the plan that gives the reason or the
 *   rule of the choice ("because…", "Default: when in doubt…", "(Recommended)", "must…") is the why.
 *   A plan with no such sentence is a task, not a decision, and gives nothing.
 * - The user's own words: "let's go with X because Y", "let's only X to avoid Y", "we use X here
 *   because Y", "X should be the default", and an answer that picks one of the options the assistant
 *   offered ("I think B", "go with option 2"), resolved to what that option said.
 */

const PLAN_HEAD = /^(?:implement the following plan|here is the plan|execute (?:this|the following) plan)\s*:?\s*/i;
const TITLE_PREFIX = /^(?:plan|fix|bug ?fix|feature|assessment|proposal|design|refactor|change|update)\s*[:—-]\s*/i;
/** Sections whose lines are steps or checks, not reasons. */
const SKIP_SECTION = /^(?:verification|verify|testing|tests?|files?(?: to (?:change|modify|edit))?|critical files|implementation(?: steps| order)?|steps|out of scope|notes?)$/i;

/** Sentences that carry the why (or the rule) of a choice, with a weight. */
const REASON_MARKS: Array<[RegExp, number]> = [
  [/\b(?:recommended|when in doubt|by default|default(?:s)? to|the default)\b/i, 3],
  [/\b(?:because|since|so that|in order to|to avoid|to prevent|otherwise|which (?:means|avoids|prevents))\b/i, 3],
  [/\b(?:must|never|always|only (?:when|if|the)|should (?:only|not|never|always)|instead of|rather than)\b/i, 2],
  [/\b(?:no value|useless|costs? money|non-?interactive|requires?|blocks?|breaks?)\b/i, 1],
];
const CODEY = /=>|\blines? \d+|^\s*\d+[.)]\s*`|\/\/|[{};]\s*$/;

/** A sentence about the state before the change ("currently always displays …"): false once the plan is done. */
const BEFORE_STATE = /\b(?:current(?:ly)?|right now|at the moment|as of now|the current|existing (?:code|behaviou?r|implementation|logic)|still|no longer|is missing|are missing|broken|the bug|the problem|the issue)\b/i;

function reasonScore(s: string): number {
  if (BEFORE_STATE.test(s) || /:\s*$/.test(s)) return -1; // a line leading into a list or a code block says nothing alone
  let score = 0;
  for (const [re, w] of REASON_MARKS) if (re.test(s)) score += w;
  if (CODEY.test(s)) score -= 2;
  if (s.split(/\s+/).length < 5) score -= 2;
  return score;
}

function plainLine(line: string): string {
  return line
    .replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "")
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .trim();
}

interface PlanSentence {
  text: string;
  /** The section the sentence stands in, lower-cased ("context", "fix", "changes", …). */
  section: string;
}

interface PlanParts {
  title: string;
  /** The title as written, with its prefix ("Fix:", "Plan:"). */
  rawTitle: string;
  sentences: PlanSentence[];
}

/** Title and the candidate sentences (outside code fences and step/verification sections) of a plan. */
export function parsePlan(text: string): PlanParts | null {
  const body = text.replace(PLAN_HEAD, "");
  const rawTitle = /^#\s+(.+)$/m.exec(body)?.[1]?.replace(/\*\*/g, "").trim();
  if (!rawTitle) return null;
  const sentences: PlanSentence[] = [];
  let section = "";
  let skip = false;
  let fence = false;
  for (const raw of body.split(/\r?\n/)) {
    if (/^\s*```/.test(raw)) {
      fence = !fence;
      continue;
    }
    if (fence) continue;
    const h = /^#{2,4}\s+(?:\d+[.)]\s*)?(.+)$/.exec(raw);
    if (h) {
      section = h[1]!.replace(/[*"`]/g, "").trim().toLowerCase();
      skip = SKIP_SECTION.test(section);
      continue;
    }
    if (skip || /^\s*\|/.test(raw)) continue;
    const line = plainLine(raw);
    if (line.length < 20 || /^if you need specific details/i.test(line)) continue;
    for (const s of line.split(/(?<=[.!?])\s+(?=[A-Z])/)) if (s.length >= 20) sentences.push({ text: s.trim(), section });
  }
  return { title: rawTitle.replace(TITLE_PREFIX, "").trim(), rawTitle, sentences };
}

export interface PlanDecision {
  title: string;
  why: string;
  /** A bug-fix plan: what went wrong and how it was fixed is a lesson, not a choice. */
  fix: string | null;
}

const FIX_TITLE = /^(?:fix|bug ?fix|hotfix)\b|\b(?:bug|broken|crash(?:es)?|flood(?:s|ing)?|fails?|failing|regression|shows? .+ instead of)\b/i;

/**
 * What an approved plan records: its title (the choice) with the sentence that gives the reason
 * or rule of the choice, else the first sentence of its Context (the motivation). A bug-fix plan
 * also gives the first sentence of its fix. Null for a plan with neither.
 */
export function planDecision(text: string): PlanDecision | null {
  const plan = parsePlan(text);
  if (!plan) return null;
  let best: { s: string; score: number } | null = null;
  for (const { text: s } of plan.sentences) {
    const score = reasonScore(s);
    if (score >= 3 && (!best || score > best.score)) best = { s, score };
  }
  // No reason, no decision: a plan's motivation ("users must currently type …") describes the code
  // before the change, which is false once the plan is carried out (a reviewer rejected every one).
  const why = best?.s;
  if (!why) return null;
  const isFix = FIX_TITLE.test(plan.rawTitle);
  const fixLine = isFix ? plan.sentences.find((x) => /^(?:fix|solution|the fix|change|changes|approach)\b/.test(x.section) && !CODEY.test(x.text) && x.text !== why) : undefined;
  return { title: plan.title, why, fix: fixLine?.text ?? null };
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? `${s.charAt(0).toLowerCase()}${s.slice(1)}` : s;
}

function sentenceCase(s: string): string {
  const t = s.trim().replace(/[.!;:,]+$/, "");
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}`;
}

/** "let's only build the main SKILL.md to avoid …", "let's go with Redis because …", "we use the git CLI here because …". */
const USER_DECISION =
  /(?:^|[.!?]\s+|,\s*)((?:(?:for|in|on|with|about)\s+[\w\s-]{1,30}?,?\s+)?(?:let'?s|let us|we(?:'ll| will)?|i(?:'d| would)? (?:rather|prefer to)) (?:go with|use|only|stick (?:with|to)|keep|switch to|choose|pick|build|store|do) .{3,160}?\b(?:because|since|so that|to avoid|to keep|as|instead of|rather than)\b .{3,160}?)(?:[.!?](?:\s|$)|$)/i;
const DEFAULT_DECISION = /(?:^|[.!?]\s+)((?:[\w`"'./-]+\s){0,6}(?:should|must|will) (?:be|become) (?:the )?default\b.{0,120}?)(?:[.!?](?:\s|$)|$)/i;
/** "B", "I think B", "option 2", "go with the second one". */
const PICK = /^(?:(?:i think|i'd say|i would say|let'?s (?:go with|do)|go with|i prefer|i choose|i pick|choose|pick)\s+)?(?:option\s+)?([A-Da-d1-4])\b[.!)]?(?:\s+(?:because|since|as)\s+(.{3,160}))?/i;

/** Options the assistant offered in its last message before `at`: label → text. */
function offeredOptions(events: readonly EngineEvent[], at: number): Map<string, string> {
  let last: EngineEvent | undefined;
  for (const e of events) if (e.type === "assistant_response" && e.ms <= at && e.text.trim()) last = e;
  const out = new Map<string, string>();
  if (!last) return out;
  for (const line of last.text.split(/\r?\n/)) {
    const m = /^\s*(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?([A-Da-d1-4])(?:\*\*)?\s*[).:—-]\s*(?:\*\*)?(.{8,200})$/i.exec(line);
    if (m) out.set(m[1]!.toUpperCase(), plainLine(m[2]!).replace(/\*\*/g, ""));
  }
  return out.size >= 2 ? out : new Map();
}

function decisionCandidate(input: RuleInput, content: string, keyText: string, ids: string[], confidence: number): Candidate {
  return {
    type: "project_fact",
    key: `decision:${slug(keyText, 6) || "choice"}`.slice(0, 110),
    content: clip(content, 360),
    tags: ["decision"],
    importance: 0.75,
    confidence,
    scope: "project",
    file_paths: [],
    source_episode_id: input.episodeId,
    source_event_ids: ids,
    rule: "decisions",
  };
}

export const decisions: Rule = (input) => {
  const out: Candidate[] = [];
  for (const { ev, text } of userMessages(input.events)) {
    if (isPlanMessage(text)) {
      const d = planDecision(text);
      // A bug-fix plan's story ends with the fix: told later, it reads as if the bug were still there.
      if (!d || d.fix !== null || FIX_TITLE.test(d.title)) continue;
      out.push(decisionCandidate(input, capTokens(`Decided: ${d.title.replace(/[.!]+$/, "")} — ${lowerFirst(d.why).replace(/[.!]+$/, "")}.`, 64), d.title, [ev.id], 0.7));
      continue;
    }
    if (text.length > 600) continue; // long messages are pasted material more often than choices
    const pick = text.length <= 200 ? PICK.exec(text.trim()) : null;
    if (pick) {
      const chosen = offeredOptions(input.events, ev.ms).get(pick[1]!.toUpperCase());
      if (chosen) {
        const why = pick[2] ? ` (${pick[2].replace(/[.!]+$/, "")})` : "";
        out.push(decisionCandidate(input, `Chosen: ${sentenceCase(chosen)}${why}.`, chosen, [ev.id], 0.7));
        continue;
      }
    }
    const m = USER_DECISION.exec(text) ?? DEFAULT_DECISION.exec(text);
    // "… for now", "… this time": a choice for the moment, not one that lasts.
    if (m && !/\?\s*$/.test(m[1]!) && !/\b(?:for now|this time|for the moment|temporarily)\b/i.test(m[1]!)) out.push(decisionCandidate(input, `${sentenceCase(m[1]!)}.`, m[1]!, [ev.id], 0.75));
  }
  return out;
};
