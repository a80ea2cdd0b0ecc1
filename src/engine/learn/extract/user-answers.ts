/**
 * The user's answers to Claude Code's AskUserQuestion tool, as decisions. The call's input is
 * `{questions: [{question, header, multiSelect, options: [{label, description}]}]}`; its result reads
 * `User has answered your questions: "<question>"="<answer>", … You can now continue with the user's
 * answers in mind.` An answer is either one of the offered labels (several, comma-joined, for a
 * multi-select) or the user's own free text.
 *
 * Only a question about something that lasts gives a memory: an approach, a behaviour, a library or
 * tool, a convention, a default. A one-off detail of the task at hand (where a button goes, whether
 * to also touch other components, whether to commit with --no-verify) is not, nor is a yes/no
 * permission, nor an answer that leaves the choice to the assistant.
 */
import type { EngineEvent } from "../../events/event-view.ts";
import { toolInput } from "../../events/event-view.ts";

export interface AskedOption {
  label: string;
  description: string;
}
export interface AskedQuestion {
  question: string;
  header: string;
  multiSelect: boolean;
  options: AskedOption[];
}
/** One answered question, resolved: the options it picked, or the user's own words. */
export interface UserAnswer {
  question: AskedQuestion;
  picked: AskedOption[];
  /** The user's free-text answer when it is none of the options. */
  ownWords: string | null;
  eventIds: string[];
  /** When the user answered. */
  at: number;
}
/** A decision drawn from an answer: the stored sentence and what its key is made of. */
export interface AnswerDecision {
  content: string;
  keyText: string;
  eventIds: string[];
}

const TOOL = "AskUserQuestion";
const ANSWERED = /^\s*User has answered your questions?:\s*/i;
const ANSWER_END = /\.\s*You can now continue with the user'?s answers? in mind\.?\s*$/i;

function str(v: unknown): string {
  return typeof v === "string" ? v.trim() : "";
}

/** The answers part of an AskUserQuestion result (`"<question>"="<answer>", …`), or null for any other output. */
export function answeredText(output: string): string | null {
  if (!ANSWERED.test(output)) return null;
  const body = output.replace(ANSWERED, "").replace(ANSWER_END, "").trim();
  return body || null;
}

/** The questions of an AskUserQuestion call (malformed entries skipped). */
export function askedQuestions(call: EngineEvent): AskedQuestion[] {
  const raw = toolInput(call).questions;
  if (!Array.isArray(raw)) return [];
  const out: AskedQuestion[] = [];
  for (const q of raw) {
    if (q === null || typeof q !== "object") continue;
    const r = q as Record<string, unknown>;
    const question = str(r.question);
    if (!question) continue;
    const options = (Array.isArray(r.options) ? r.options : [])
      .map((o) => (o !== null && typeof o === "object" ? (o as Record<string, unknown>) : {}))
      .map((o) => ({ label: str(o.label), description: str(o.description) }))
      .filter((o) => o.label.length > 0);
    out.push({ question, header: str(r.header), multiSelect: r.multiSelect === true, options });
  }
  return out;
}

/**
 * The answer to each question in the result text. Questions are found by their own text (answers
 * are not escaped, so a quote inside an answer must not end it): an answer runs from `"<q>"="` to
 * the next known question or to the closing sentence.
 */
export function parseAnswers(output: string, questions: readonly AskedQuestion[]): Map<AskedQuestion, string> {
  const out = new Map<AskedQuestion, string>();
  const body = answeredText(output);
  if (!body) return out;
  const starts = questions
    .map((q) => {
      const marker = `"${q.question}"="`;
      const at = body.indexOf(marker);
      return { q, at, from: at + marker.length };
    })
    .filter((s) => s.at >= 0)
    .sort((a, b) => a.at - b.at);
  starts.forEach((s, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.at : body.length;
    const answer = body
      .slice(s.from, end)
      .replace(/\s*,\s*$/, "")
      .replace(/"\s*$/, "")
      .trim();
    // an answer the capture cut (a very long result) is not the user's whole word
    if (answer && !/…\[truncated \d+ chars\]…/.test(answer)) out.set(s.q, answer);
  });
  return out;
}

/** Picked options of an answer: the whole answer as one label, or comma-joined labels of a multi-select. */
function resolve(q: AskedQuestion, answer: string): AskedOption[] {
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();
  const byLabel = new Map(q.options.map((o) => [norm(o.label), o]));
  const whole = byLabel.get(norm(answer));
  if (whole) return [whole];
  const parts = answer.split(/\s*,\s*/).map((p) => byLabel.get(norm(p)));
  return parts.length > 1 && parts.every((p) => p !== undefined) ? (parts as AskedOption[]) : [];
}

/** Every answered AskUserQuestion of an episode (main thread only; a refused call has no answers). */
export function userAnswers(events: readonly EngineEvent[]): UserAnswer[] {
  const calls = new Map<string, EngineEvent>();
  for (const e of events)
    if (e.type === "tool_call" && e.tool === TOOL && e.toolUseId && !e.sidechain) calls.set(e.toolUseId, e);
  const out: UserAnswer[] = [];
  for (const e of events) {
    if (e.type !== "tool_result" || e.rejected || e.isError || !e.toolUseId) continue;
    const call = calls.get(e.toolUseId);
    if (!call) continue;
    const questions = askedQuestions(call);
    for (const [question, answer] of parseAnswers(e.output, questions)) {
      const picked = resolve(question, answer);
      out.push({ question, picked, ownWords: picked.length > 0 ? null : answer, eventIds: [call.id, e.id], at: e.ms });
    }
  }
  return out;
}

/** What a lasting choice is about: an approach, a behaviour, a library or tool, a convention, a default. */
const LASTING =
  /\b(?:approach|strategy|pattern|convention|behaviou?r|default|librar(?:y|ies)|framework|tool(?:ing)?|format|style|naming|architecture|polic(?:y|ies)|mechanism|storage|persist\w*|handl(?:e|ed|ing)|prefer(?:red|ence)?|standard|workflow|layout|design)\b/i;
/** A detail of the task at hand: placement, scope, this change, a git step, a permission. */
const ONE_OFF =
  /\b(?:where (?:exactly )?(?:should|do|would)|position(?:ed|ing)?|placed?|placement|should (?:we|i) also|also (?:update|change|refactor|include)|scope|this (?:pr|task|change|commit|session|time|file|branch)|right now|for now|(?:should|shall|can|may) i (?:commit|push|proceed|continue|merge|run|go ahead)|proceed|commit|push|merge|no-verify|which files?|ready to)\b/i;
/** An option that grants or refuses a step rather than choosing how something works. */
const PERMISSION = /^(?:yes|no|yep|nope|ok(?:ay)?|skip|cancel|abort|proceed|continue|stop|later|none|other)\b/i;
/** A free answer that hands the choice back or declines it. */
const NO_CHOICE =
  /^(?:(?:i )?(?:don'?t|do not) (?:know|care|mind)|(?:you|your) (?:decide|choice|call|pick)|whatever|up to you|doesn'?t matter|no preference|not sure|skip|n\/a|none)\b/i;

/** Is this question one whose answer lasts beyond the task? */
export function isLastingQuestion(q: AskedQuestion): boolean {
  const text = `${q.header} ${q.question}`;
  if (/^scope$/i.test(q.header) || ONE_OFF.test(text)) return false;
  if (q.options.length > 0 && q.options.every((o) => PERMISSION.test(o.label))) return false;
  return LASTING.test(text);
}

const GENERIC_HEADER = /^(?:approach|option|options|choice|question|decision|scope|preference|approach choice)$/i;

/**
 * The subject of a question, to head the stored line: "Which scrolling approach would you like to
 * implement?" → "Scrolling approach"; "What scroll behavior do you prefer when new messages arrive?"
 * → "Scroll behavior when new messages arrive". Falls back to a specific header, then the question.
 */
export function questionTopic(q: AskedQuestion): string {
  const t = q.question.trim().replace(/\?+$/, "");
  const m = /^(?:which|what)\s+(.{3,40}?)\s+(?:would|should|do|does|will|shall|can|is|are)\s+(.*)$/i.exec(t);
  let topic = "";
  if (m) {
    const tail = /\b(?:when|whenever|during|after|before|if|for|in(?!\s+this\b))\s.{3,60}$/i.exec(m[2]!);
    topic = tail ? `${m[1]} ${tail[0]}` : m[1]!;
  } else if (q.header && !GENERIC_HEADER.test(q.header)) topic = q.header;
  else topic = t;
  return `${topic.charAt(0).toUpperCase()}${topic.slice(1)}`;
}

function cleanLabel(label: string): string {
  return label.replace(/\s*\((?:recommended|preferred|default|current(?: behaviou?r)?)\)\s*/gi, " ").trim();
}

function sentence(s: string): string {
  return s.trim().replace(/[.;:,\s]+$/, "");
}

/** The decision an answer gives, or null when it is not a lasting choice. */
export function answerDecision(a: UserAnswer): AnswerDecision | null {
  const q = a.question;
  if (!isLastingQuestion(q)) return null;
  const topic = questionTopic(q);
  if (a.ownWords !== null) {
    const words = a.ownWords.replace(/\s+/g, " ").trim();
    if (words.length < 12 || words.length > 300 || /\?\s*$/.test(words) || NO_CHOICE.test(words)) return null;
    if (/\b(?:for now|this time|for the moment|temporarily)\b/i.test(words)) return null;
    return { content: `${topic}: ${sentence(words)}.`, keyText: `${topic} ${words}`, eventIds: a.eventIds };
  }
  // A pick among the offered options carries the assistant's wording, not the user's reason: a fresh
  // reviewer read such picks as one-off choices ("Chosen: Linear comment - Keep everything in the issue").
  return null;
}
