/**
 * Rule `decisions`: design choices with their reason, stored as project facts tagged `decision`
 * (the reference's four types stay; the tag is the subtype).
 * - Not an approved plan ("Implement the following plan: …"): it is the assistant's text and, once
 *   carried out, a changelog entry. Stored as "Decided: <title> — <reason>", two reviewers kept none of
 *   19 such items; stored as the option a plan went with and the alternative it rejected, two more
 *   reviewers rejected it too (a fix now plain in the code, an alternative the assistant made up).
 * - Only with its reason in the user's own words: "let's go with X because Y", "let's only X to avoid
 *   Y", "we use X here because Y", "X should be the default since Y", and an answer that picks one of
 *   the options the assistant offered with the user's reason ("B, since writes are rare"), resolved to
 *   what that option said. A bare pick ("A", "go with option 2") is not stored: "Chosen: Option A" and
 *   "Chosen: Linear comment - Keep everything in the issue" were read by a fresh reviewer on a project
 *   no rule was tuned on as one-off picks, and the offered option's wording is the assistant's. (A
 *   behaviour stated with its condition — "in cloud mode we should not display X as we handle that" —
 *   was tried: both reviewers read the stored request as a changelog line, so it is not one.)
 * - The user's answers to AskUserQuestion in their own words (not one of the offered options, whose
 *   description is the assistant's), about something that lasts, once the session carried the choice
 *   out (user-answers.ts): a choice made while planning and never built is not a decision yet.
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { appliedChanges, clip, isPlanMessage, slug, userMessages, type EngineEvent } from "../../events/event-view.ts";
import { optionList } from "./offered-options.ts";
import { answerDecision, userAnswers } from "./user-answers.ts";

function sentenceCase(s: string): string {
  const t = s.trim().replace(/[.!;:,]+$/, "");
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}`;
}

/** "let's only build the main SKILL.md to avoid …", "let's go with Redis because …", "we use the git CLI here because …". */
const USER_DECISION =
  /(?:^|[.!?]\s+|,\s*)((?:(?:for|in|on|with|about)\s+[\w\s-]{1,30}?,?\s+)?(?:let'?s|let us|we(?:'ll| will)?|i(?:'d| would)? (?:rather|prefer to)) (?:go with|use|only|stick (?:with|to)|keep|switch to|choose|pick|build|store|do) .{3,160}?\b(?:because|since|so that|to avoid|to keep|as|instead of|rather than)\b .{3,160}?)(?:[.!?](?:\s|$)|$)/i;
const DEFAULT_DECISION =
  /(?:^|[.!?]\s+)((?:[\w`"'./-]+\s){0,6}(?:should|must|will) (?:be|become) (?:the )?default\b.{0,120}?\b(?:because|since|so that|to avoid|as)\b .{3,160}?)(?:[.!?](?:\s|$)|$)/i;
/** "B", "I think B", "option 2", "go with the second one" — stored only with the user's reason ("B, since …"). */
const PICK =
  /^(?:(?:i think|i'd say|i would say|let'?s (?:go with|do)|go with|i prefer|i choose|i pick|choose|pick)\s+)?(?:option\s+)?([A-Da-d1-4])\b[.!),]?(?:\s+(?:because|since|as)\s+(.{3,160}))?/i;

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
    if (isPlanMessage(text)) continue; // the assistant's text; once carried out, a changelog entry
    if (text.length > 600) continue; // long messages are pasted material more often than choices
    const pick = text.length <= 200 ? PICK.exec(text.trim()) : null;
    if (pick) {
      const chosen = offeredOptions(input.events, ev.ms).get(pick[1]!.toUpperCase());
      if (chosen) {
        // A bare pick is a one-off choice; the option's own words are the assistant's. Only the
        // user's reason makes it a decision a newcomer needs, and the option must say something.
        const why = pick[2]?.replace(/[.!]+$/, "").trim();
        if (why && chosen.split(/\s+/).length >= 3 && !/^(?:option|approach|alternative)\s+\w$/i.test(chosen))
          out.push(decisionCandidate(input, `${sentenceCase(chosen)}, chosen because ${why}.`, chosen, [ev.id], 0.7));
        continue;
      }
    }
    const m = USER_DECISION.exec(text) ?? DEFAULT_DECISION.exec(text);
    // "… for now", "… this time": a choice for the moment, not one that lasts.
    if (m && !/\?\s*$/.test(m[1]!) && !/\b(?:for now|this time|for the moment|temporarily)\b/i.test(m[1]!)) {
      out.push(decisionCandidate(input, `${sentenceCase(m[1]!)}.`, m[1]!, [ev.id], 0.75));
    }
  }
  const changes = appliedChanges(input.events);
  for (const answer of userAnswers(input.events)) {
    // Chosen while planning and never built in the session: not a decision yet (two reviewers rejected
    // such answers: the session ended at the plan, and the choice would be visible in the code once built).
    if (!changes.some((c) => c.ms > answer.at)) continue;
    const d = answerDecision(answer);
    if (d) out.push(decisionCandidate(input, d.content, d.keyText, d.eventIds, 0.8));
  }
  return out;
};
