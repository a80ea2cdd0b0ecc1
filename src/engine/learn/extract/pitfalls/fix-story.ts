/**
 * The story the assistant told around a failure (rule `pitfalls`): the cause it gave after the last
 * failed attempt, and the fix — its own summary, the user's steering, or the change it made. Hedges,
 * hypotheses it ruled out, narration and plans are not part of it.
 */
import { porterStem } from "../../../../ranker/porter.ts";
import { STOP_WORDS } from "../../../../ranker/stop-words.ts";
import { cleanUserText, clip, rejectedCalls, userMessages, type EngineEvent } from "../../../events/event-view.ts";

const CAUSAL =
  /\b(?:because|(?:is|was|were|are) (?:causing|picking up)|picks? up|requires?|required|caused by|due to|the (?:issue|problem|error|cause|reason|culprit) (?:is|was|here is)|is failing (?:because|since)|fails? (?:because|since|when)|happens (?:because|when)|expects?|must be|needs? to be|ha(?:s|ve) to be|is not (?:allowed|supported|defined|exported)|doesn't (?:exist|support|allow)|was (?:removed|renamed|missing)|can be (?:undefined|null|nil|none|empty|missing)|(?:is|are|was|were)(?: not|n't) (?:awaited|initiali[sz]ed|defined|exported|imported|called|closed|escaped|handled|set))\b/i;
const HEDGE =
  /\b(?:maybe|might|possibly|perhaps|probably|i think|i suspect|could be|likely|not sure|seems? to|may be|guess|hypothes)/i;
const FILLER_SENTENCE =
  /^(?:good idea|great|perfect|ok(?:ay)?|sure|got it|you're right|right|yes|done|now\b|first,?\b)/i;
/** "Postgres is up, so that was not it": a hypothesis ruled out — never part of what is stored. */
const DISMISSAL =
  /\b(?:(?:was|is)(?: not|n't) (?:it|the (?:issue|problem|cause|culprit|reason))|not the (?:issue|problem|cause|culprit)|ruled out|that's not it|red herring)\b/i;
/** A short sentence that only reports a check ("All 12 auth tests pass.") says nothing about the fix. */
const CHECK_REPORT =
  /\b(?:tests?|specs?|suites?|lint(?:ing|er)?|checks?|builds?|type ?checks?)\b.{0,40}\b(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?|clean|ok)\b/i;
/** "Adding `await`.": a short action on code is a fix description although it has few words. */
const CODE_ACTION =
  /^(?:i'll\s+|i will\s+|we can\s+)?(?:add(?:ing)?|us(?:e|ing)|replac(?:e|ing)|remov(?:e|ing)|guard(?:ing)?|wrap(?:ping)?|import(?:ing)?|export(?:ing)?|renam(?:e|ing)|call(?:ing)?|await(?:ing)?|set(?:ting)?|mov(?:e|ing)|chang(?:e|ing)|switch(?:ing)?)\b.*`[^`]+`/i;
/** Plans in the first person ("I'll…", "we can…"): what will be done, not why it failed. */
const PLAN = /\b(?:i'll|i will|we can|we could|let's|let me|i'm going to|i need to|we need to|we should)\b/i;
/** "Fixed:", "Done.", "The fix:" labels at the head of a closing summary. */
const SUMMARY_LABEL = /^(?:fixed|done|the fix|summary|result)\s*[:.!-]\s*/i;
/** "Let me read the file", "I'll run the tests": narration of the next step, not the fix. */
const NARRATION =
  /^(?:now\s+)?(?:let me|let's|i'll|i will|i need to|i'm going to)\s+(?:\w+\s+){0,2}(?:read|look|check|run|verify|see|investigate|explore|search|find|open|examine|inspect|understand|start)\b/i;

function sentencesOf(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, " ")
    .split(/(?<=[.!?:])\s+|\n+/)
    .map((s) => s.trim().replace(/:$/, "."))
    .filter((s) => s.length > 8);
}

function causeSentence(events: readonly EngineEvent[], from: number, to: number): { text: string; id: string } | null {
  for (const e of events) {
    if (e.ms < from || e.ms > to) continue;
    const text =
      e.type === "assistant_response" ? e.text : e.type === "user_message" && !e.sidechain ? cleanUserText(e.text) : "";
    if (!text) continue;
    for (const s of sentencesOf(text)) {
      if (CAUSAL.test(s) && !HEDGE.test(s) && !DISMISSAL.test(s) && !/^(?:let me|i'll|i will|now)\b/i.test(s))
        return { text: clip(s, 220), id: e.id };
    }
  }
  return null;
}

interface Explanation {
  /** Declarative sentences: what is wrong. */
  diagnosis: string[];
  /** What the assistant said it would do — dropped when the user refused a call after saying it. */
  plans: string[];
  id: string;
}

function isPlan(s: string): boolean {
  return PLAN.test(s) || CODE_ACTION.test(s);
}

/** The last explanation before the first fix, without filler, narration, hedges, dismissals and the cause itself. */
function preFixExplanation(
  events: readonly EngineEvent[],
  from: number,
  firstFix: EngineEvent,
  cause: string | null,
): Explanation | null {
  let last: EngineEvent | null = null;
  for (const e of events) {
    if (e.ms < from || e.ms > firstFix.ms) continue;
    if (e.type === "assistant_response" && e.text.trim()) last = e;
  }
  if (!last) return null;
  const kept = sentencesOf(last.text).filter(
    (s) =>
      !FILLER_SENTENCE.test(s) &&
      !NARRATION.test(s) &&
      !HEDGE.test(s) &&
      !DISMISSAL.test(s) &&
      s !== cause &&
      (s.split(/\s+/).length >= 4 || CODE_ACTION.test(s)),
  );
  const refusedSince = rejectedCalls(events).some((r) => r.result.ms >= last!.ms && r.result.ms <= firstFix.ms);
  const out = {
    diagnosis: kept.filter((s) => !isPlan(s)).slice(0, 2),
    plans: refusedSince ? [] : kept.filter(isPlan).slice(0, 2),
    id: last.id,
  };
  return out.diagnosis.length + out.plans.length > 0 ? out : null;
}

/**
 * What the assistant said once the check was green again, before the user spoke: the closing summary
 * of the fix ("Fixed: `isExpired` now treats a missing `exp` as not expired."), bare check reports dropped.
 */
function postFixSummary(events: readonly EngineEvent[], pass: EngineEvent): { text: string; id: string } | null {
  let seen = 0;
  for (const e of events) {
    if (e.ms <= pass.ms) continue;
    if (e.type === "user_message" && !e.sidechain && cleanUserText(e.text)) break;
    if (e.type !== "assistant_response" || !e.text.trim()) continue;
    if (++seen > 2) break;
    const kept = sentencesOf(e.text.replace(SUMMARY_LABEL, ""))
      .map((s) => s.replace(SUMMARY_LABEL, ""))
      .filter(
        (s) =>
          !FILLER_SENTENCE.test(s) &&
          !NARRATION.test(s) &&
          !HEDGE.test(s) &&
          !DISMISSAL.test(s) &&
          !/^\s*(?:\d+[.)]|[-*])\s/.test(s),
      )
      .filter((s) => s.split(/\s+/).length >= 5 && !(CHECK_REPORT.test(s) && s.split(/\s+/).length < 10))
      .filter((s) => !/^here(?:'s| is| are)\b/i.test(s)); // "Here's a summary of what was changed:" leads into a list
    if (kept.length > 0) return { text: clip(kept[0]!, 220), id: e.id };
  }
  return null;
}

/** The user's instruction right after a refused call, between the failure and the fix: it steered the fix. */
function steeringCorrection(
  events: readonly EngineEvent[],
  from: number,
  firstFix: EngineEvent,
): { text: string; id: string } | null {
  const msgs = userMessages(events);
  for (const r of rejectedCalls(events)) {
    if (r.result.ms < from || r.result.ms > firstFix.ms) continue;
    const next = msgs.find((m) => m.ev.ms >= r.result.ms && m.ev.ms <= firstFix.ms && m.ev.id !== r.result.id);
    if (next) return { text: `as the user asked: "${clip(next.text, 160)}"`, id: next.ev.id };
  }
  return null;
}

export interface FixStory {
  cause: { text: string; id: string } | null;
  fix: { text: string; id: string } | null;
}

/**
 * Cause and fix of a resolved failure. The cause: a causal sentence after the last failure, else the
 * declarative explanation given right before a fix that worked (the diagnosis). The fix: what the
 * assistant said it would do (unless the user refused it), else its closing summary once green,
 * else the user's steering correction, else the diff summary.
 */
export function fixStory(
  events: readonly EngineEvent[],
  from: number,
  firstFix: EngineEvent,
  pass: EngineEvent,
): FixStory {
  const causal = causeSentence(events, from, firstFix.ms);
  const pre = preFixExplanation(events, from, firstFix, causal?.text ?? null);
  const cause = causal ?? (pre && pre.diagnosis.length > 0 ? { text: clip(pre.diagnosis[0]!, 220), id: pre.id } : null);
  if (pre && pre.plans.length > 0) return { cause, fix: { text: clip(pre.plans.join(" "), 240), id: pre.id } };
  const post = postFixSummary(events, pass.ms > firstFix.ms ? pass : firstFix);
  if (post) return { cause, fix: post };
  const steer = steeringCorrection(events, from, firstFix);
  if (steer) return { cause, fix: steer };
  const diff = firstFix.content.diff_summary;
  return { cause, fix: diff ? { text: clip(diff, 200), id: firstFix.id } : null };
}

/** Words any failure story uses: sharing only these says nothing about being the same failure. */
const GENERIC = new Set(
  (
    "error errors fail fails failed failing failure test tests testing run runs running ran file files code check " +
    "checks command commands build builds line lines issue problem need needs use used make work works working " +
    "fix fixed fixes change changed now still again first next also should must will can the this that with from " +
    "into when then than there here have has was were are not but and for you your our its it's let get got set " +
    "new add added remove removed update updated call called value values type types function method return returns"
  ).split(" "),
);

/** A path or a file name: `cmd/cli/hooks/install.go`, `install.go`, `tmp/clones/`. */
const PATHLIKE = /[\w.@-]+(?:\/[\w.@-]*)+|\b[\w-]+\.[a-z]{1,5}\b/gi;

/** The parts of an identifier: `test_empty_cells` → test, empty, cells; `NoneType` → None, Type. */
function identifierParts(id: string): string[] {
  return id
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[\s_.-]+/)
    .filter((p) => p.length > 0);
}

function addWord(out: Set<string>, raw: string): void {
  const w = raw.toLowerCase();
  if (w.length >= 3 && !GENERIC.has(w) && !STOP_WORDS.has(w)) out.add(porterStem(w));
}

/**
 * The words of a failure story: words and the parts of identifiers, stemmed. A path counts by its file
 * name only ("install.go", "importer"): the folders on the way ("hooks", "cli") are not what a sentence
 * is about when it uses the same word.
 */
function storyWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const p of text.match(PATHLIKE) ?? []) {
    const base = p
      .replace(/[.,;:]+$/, "")
      .replace(/\/+$/, "")
      .split("/")
      .pop()!;
    if (!/\.[a-z0-9]{1,5}$/i.test(base)) continue; // a folder
    out.add(base.toLowerCase());
    for (const part of identifierParts(base.replace(/\.[a-z0-9]{1,5}$/i, ""))) addWord(out, part);
  }
  for (const raw of text.replace(PATHLIKE, " ").match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
    addWord(out, raw);
    for (const part of identifierParts(raw)) addWord(out, part);
  }
  return out;
}

/**
 * Is a sentence about this failure: does it name something the failure shows (its command, output,
 * the files the fix touched, the fix's diff)? A cause or fix taken from an unrelated nearby sentence
 * ("Restart your Claude session" beside a `go vet` warning) is not stored with the failure.
 */
export function aboutFailure(sentence: string, failure: string): boolean {
  // A quoted span the failure shows as it is (`*/` in "Keeps: */skills/…").
  for (const m of sentence.matchAll(/`([^`]{2,80})`/g)) if (failure.includes(m[1]!)) return true;
  const said = storyWords(sentence);
  if (said.size === 0) return false;
  const shown = storyWords(failure);
  for (const w of said) if (shown.has(w)) return true;
  return false;
}
