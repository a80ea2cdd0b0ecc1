/**
 * Rule `decisions`: design choices with their reason, stored as project facts tagged `decision`
 * (the reference's four types stay; the tag is the subtype).
 * - Not an approved plan's title ("Implement the following plan: …"): it is the assistant's text and,
 *   once carried out, a changelog entry. Stored as "Decided: <title> — <reason>", two reviewers kept
 *   none of 19 such items (they describe the code before the change, or a change visible in the code).
 *   Only a plan that lays out options and goes with one gives the choice, with the alternative it
 *   rejected: approving the plan is the user picking that option (offered-options.ts).
 * - The user's own words: "let's go with X because Y", "let's only X to avoid Y", "we use X here
 *   because Y", "X should be the default", a behaviour stated with its condition or reason ("in cloud
 *   mode we should not display X as we handle that"), and an answer that picks one of the options the
 *   assistant offered ("I think B", "go with option 2"), resolved to what that option said.
 * - The user's answers to AskUserQuestion about something that lasts (user-answers.ts).
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { clip, isPlanMessage, slug, userMessages, type EngineEvent } from "../../events/event-view.ts";
import { optionList, planChoice, type OfferedOption } from "./offered-options.ts";
import { answerDecision, userAnswers } from "./user-answers.ts";

function sentenceCase(s: string): string {
  const t = s.trim().replace(/[.!;:,]+$/, "");
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}`;
}

/** "let's only build the main SKILL.md to avoid …", "let's go with Redis because …", "we use the git CLI here because …". */
const USER_DECISION =
  /(?:^|[.!?]\s+|,\s*)((?:(?:for|in|on|with|about)\s+[\w\s-]{1,30}?,?\s+)?(?:let'?s|let us|we(?:'ll| will)?|i(?:'d| would)? (?:rather|prefer to)) (?:go with|use|only|stick (?:with|to)|keep|switch to|choose|pick|build|store|do) .{3,160}?\b(?:because|since|so that|to avoid|to keep|as|instead of|rather than)\b .{3,160}?)(?:[.!?](?:\s|$)|$)/i;
const DEFAULT_DECISION =
  /(?:^|[.!?]\s+)((?:[\w`"'./-]+\s){0,6}(?:should|must|will) (?:be|become) (?:the )?default\b.{0,120}?)(?:[.!?](?:\s|$)|$)/i;
/**
 * A behaviour stated with what it depends on: a mode or environment it holds in ("In cloud mode we
 * should not display …"), or a reason after it ("… as we handle that", "… because …"). Without either
 * a "should display/show" is a change request for the task at hand, and stays out.
 */
const MODE_CONDITION =
  /^(?:in|on|under|during|outside|with(?:out)?)\s+(?:the\s+)?(?:["'`]?[\w-]+["'`]?\s+){0,3}(?:mode|environments?|env|production|prod|staging|ci|cloud|self-hosted|deployments?|builds?|windows|linux|macos|docker|offline|online)\b,?\s+/i;
const WHEN_CONDITION = /^(?:when|whenever|if|unless)\s+(?![^,]*\b(?:it|this|that|these|those)\b)[^,]{3,60},\s*/i;
const STATED_BEHAVIOUR =
  /^(?:we|(?:the|our|all|every|each|any)\s+[\w\s"'`.-]{1,40}?|users?)\s+(?:should|must|shall|need to|have to)(?:n't| not)?\s+(?:never\s+|always\s+)?(?!also\b|now\b|first\b|then\b|probably\b|maybe\b|just\b|(?:add|create|fix|update|remove|delete|rename|refactor|investigate|check|try|look|commit|push|test|write|implement|move|change|bump|release|mention|make|run)\b)\w+/i;
const REASON =
  /\b(?:because|since|so that|to avoid|otherwise|as (?:we|they|our|the (?:\w+ ){0,2}(?:already|handles?|does|chooses?|picks?|owns?)))\b\s+\S+/i;
const FLEETING = /\b(?:for now|this time|for the moment|temporarily|right now|today)\b/i;

/** "In cloud mode we should not display X as we handle that." → that sentence; else null. */
export function statedDesignChoice(sentence: string): string | null {
  const s = sentence.trim();
  if (s.length < 30 || s.length > 280 || /\?\s*$/.test(s) || FLEETING.test(s) || /[:`{}<>|]\s*$/.test(s)) return null;
  const condition = MODE_CONDITION.exec(s) ?? WHEN_CONDITION.exec(s);
  const main = condition ? s.slice(condition[0].length) : s;
  const m = STATED_BEHAVIOUR.exec(main);
  if (!m) return null;
  if (!condition && !REASON.test(main.slice(m[0].length))) return null;
  return s;
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\r?\n+/)
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

/**
 * The option an approved plan went with, as a standing decision: what the option does (its first
 * bullet, or its title), the reason the plan gives for it, and the alternative it was chosen over.
 */
function planDecision(plan: string): { content: string; keyText: string } | null {
  const choice = planChoice(plan);
  if (!choice) return null;
  const { chosen, others } = choice;
  const what = chosen.body.find((b) => b.split(/\s+/).length >= 8) ?? chosen.title;
  if (what.split(/\s+/).length < 6) return null;
  const why = chosen.body.find(
    (b) => b !== what && /^(?:this (?:ensures|keeps|avoids|prevents|means)|so that|to avoid|because)\b/i.test(b),
  );
  const rejected = others.map((o: OfferedOption) => `${o.title.charAt(0).toLowerCase()}${o.title.slice(1)}`).join("; ");
  const content = [sentenceCase(what), why ? sentenceCase(why) : "", `Rejected alternative: ${rejected}`]
    .filter((x) => x)
    .join(". ");
  return { content: `${content}.`, keyText: chosen.title };
}

/** "B", "I think B", "option 2", "go with the second one". */
const PICK =
  /^(?:(?:i think|i'd say|i would say|let'?s (?:go with|do)|go with|i prefer|i choose|i pick|choose|pick)\s+)?(?:option\s+)?([A-Da-d1-4])\b[.!)]?(?:\s+(?:because|since|as)\s+(.{3,160}))?/i;

/** Options the assistant offered in its last message before `at`: label → text. */
function offeredOptions(events: readonly EngineEvent[], at: number): Map<string, string> {
  let last: EngineEvent | undefined;
  for (const e of events) if (e.type === "assistant_response" && e.ms <= at && e.text.trim()) last = e;
  return new Map((last ? optionList(last.text) : []).map((o) => [o.label, o.title]));
}

function decisionCandidate(
  input: RuleInput,
  content: string,
  keyText: string,
  ids: string[],
  confidence: number,
): Candidate {
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
      // An approved plan is the assistant's text and, once carried out, a changelog entry: two
      // reviewers kept none of the plan-derived decisions ("Decided: <title> — <reason>") out of 19.
      // What it does give is a choice between options it laid out, which the user approved.
      const d = planDecision(text);
      if (d) out.push(decisionCandidate(input, d.content, d.keyText, [ev.id], 0.7));
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
    if (m && !/\?\s*$/.test(m[1]!) && !/\b(?:for now|this time|for the moment|temporarily)\b/i.test(m[1]!)) {
      out.push(decisionCandidate(input, `${sentenceCase(m[1]!)}.`, m[1]!, [ev.id], 0.75));
      continue;
    }
    if (/```|^\s*\[[\d:.]+\]/m.test(text)) continue; // pasted code or logs
    for (const sentence of sentencesOf(text)) {
      const stated = statedDesignChoice(sentence);
      if (stated) out.push(decisionCandidate(input, `${sentenceCase(stated)}.`, stated, [ev.id], 0.75));
    }
  }
  for (const answer of userAnswers(input.events)) {
    const d = answerDecision(answer);
    if (d) out.push(decisionCandidate(input, d.content, d.keyText, d.eventIds, 0.8));
  }
  return out;
};
