/**
 * Rule `style-preferences`: what the user SAID they want. Standing instructions in the user's own
 * messages ("always…", "never…", "don't…", "please stop…", "prefer X", "use X instead of Y", "we use…",
 * "keep our X in Y"), and corrections right after a refused tool call. Questions, one-off
 * instructions ("don't commit yet", any "don't/avoid/please use …" that does not say it stands) and
 * narration ("I never thought…") are not preferences.
 */
import { isAbsolute, relative } from "node:path";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { rejectionCorrections } from "./lint-suppression.ts";
import { parseCommand, type CommandKind } from "../../events/commands.ts";
import { clip, isPlanMessage, rejectedCalls, slug, userMessages, type EngineEvent } from "../../events/event-view.ts";

const FILLER =
  /^(?:please|pls|also|and|so|ok(?:ay)?|but|btw|note|remember|important|one more thing|from now on|going forward|in the future|in future|for the future|as a rule|generally|in general)[,:]?\s+/i;
const NOT_A_PREFERENCE =
  /\b(?:don'?t|do not) (?:know|think|understand|worry|see|have|care|mind|get|remember|recall|want to proceed|believe)\b|\bnever mind\b|\bnever (?:was|were|did|had|got|worked|been|happened|seen|heard|thought)\b/i;
const ONE_OFF =
  /\b(?:yet|right now|for now|this time|today|at the moment|until|before (?:i|we|you) |in this (?:file|function|pr|commit|change|case))\b/i;
const STANDING =
  /\b(?:always|never|ever|anymore|any more|again|from now on|going forward|in the future|every time|whenever|everywhere|by default|in (?:this|our|the) (?:repo|repository|project|codebase|code base))\b/i;
/** "we …" states the team's convention, i.e. this project's. */
const PROJECT_MARKERS =
  /\b(?:this|our|the) (?:repo|repository|project|codebase|code base|package|monorepo|app)\b|\bhere\b|\bwe (?:always |never |all )?(?:use|prefer|keep|write|run|generate|do not|don'?t)\b|\bwe (?:always|never)\b/i;
/** A ticket of an issue tracker: "ENT-98", "JIRA-1234", "issue #42". */
const TICKET = /\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b|\b(?:issue|ticket|task)\s+#?\d+\b/;
const PATHISH = /(?:^|\s)[\w@.-]+\/[\w./-]+|\.(?:ts|tsx|js|jsx|py|go|rs|rb|ex|exs|java|kt|swift|md|json|toml|ya?ml)\b/;

/** Most specific first: "run the tests with vitest" is about the test runner, though vitest may run through pnpm. */
const TOOL_CHOICES: Array<{ key: string; names: RegExp }> = [
  { key: "test_runner", names: /\b(vitest|jest|mocha|pytest|bun test|playwright|ava)\b/i },
  { key: "formatter", names: /\b(prettier|biome|black|ruff format|dprint|gofmt|rustfmt)\b/i },
  { key: "linter", names: /\b(eslint|biome|ruff|pylint|flake8|golangci-lint|oxlint|clippy|credo)\b/i },
  { key: "package_manager", names: /\b(pnpm|yarn|npm|bun)\b/i },
  { key: "python_package_manager", names: /\b(uv|poetry|pipenv|pip)\b/i },
];

/** A command quoted in an instruction ("always run the tests with `pnpm vitest run`") decides the key by what it does. */
const COMMAND_KEYS: Partial<Record<CommandKind, string>> = {
  test: "test_command",
  lint: "lint_command",
  format: "format_command",
  typecheck: "typecheck_command",
  build: "build_command",
};
/** A backticked span of several words: a command line, not a name. */
const QUOTED_COMMAND = /`([^`\s]+(?:\s+[^`]+)+)`/g;

const STOPWORDS = new Set(
  "a an the to of in on for with and or our my your we i you it its this that these those be is are use using used please just really also all any some every then".split(
    " ",
  ),
);

interface Directive {
  polarity: 1 | -1;
  object: string;
  replaced?: string;
  standing: boolean;
  form: string;
}

function sentences(text: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || /^\s*(?:>|\||[-*]\s*\[|\d+→)/.test(line)) continue;
    const bare = line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "");
    for (const s of bare.split(/(?<=[.!;])\s+/)) {
      const t = s.trim();
      if (t.length >= 6 && t.length <= 240) out.push(t);
    }
  }
  return out;
}

const EMPHASIS = /\b(?:always|never|must|important|make sure|remember)\b|!|\b[A-Z]{4,}\b/;

/** An instruction about "it"/"them": its subject is in another turn, so it cannot stand alone. */
const REFERS_BACK = /\b(?:it|them|they|this one|that one)\b/i;

/** Does the instruction itself (its reason clause aside: "… since they consume tokens") point back at another turn? */
function refersBack(object: string): boolean {
  return REFERS_BACK.test(object.replace(/\s*,?\s*\b(?:because|since|as|so that|unless)\b.*$/i, ""));
}

/** Lines that are pasted material, not the user's prose: logs, prompts, stack traces, review-bot text, diffs. */
const PASTED_LINE =
  /^\s*(?:\[\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}[T ]\d|\$ |> |at \S+ \(|[+-]{1,3}\s|@@|\w*(?:Error|Exception):|(?:high|medium|low|critical) severity\b|warning:|error(?:\[|:)|\d+ \||\s{4,}\S)/i;

/** The user's own prose in a message: pasted lines dropped, at most the first 3,000 characters. */
export function userProse(text: string): string {
  return text
    .slice(0, 3000)
    .split(/\r?\n/)
    .filter((l) => !PASTED_LINE.test(l))
    .join("\n");
}

function stripFillers(s: string): string {
  let t = s.trim();
  for (let i = 0; i < 4; i++) {
    const next = t.replace(FILLER, "");
    if (next === t) break;
    t = next;
  }
  return t;
}

function cutObject(s: string): string {
  return s
    .replace(/\s*(?:,\s*)?\b(?:because|since|so that|as|unless|otherwise|which|when you|if you)\b.*$/i, "")
    .replace(/[.!;,:]+$/, "")
    .trim();
}

/** "we always generate before migrating": the team's standing practice. */
const TEAM_HABIT = /^we\s+(always|never)\s+(.+)$/i;
/** "we always end up with conflicts": what keeps happening to the team, not what it does on purpose. */
const TEAM_NARRATION =
  /^we\s+(?:always|never)\s+(?:get|got|end(?:ed)? up|forget|forgot|run into|ran into|hit|see|saw|had|have had|seem|manage|managed|wonder|struggle|fail(?:ed)?|lose|lost|break|broke|need(?:ed)? to fix)\b/i;
/** A clause that can carry an instruction inside a longer sentence: a team practice or a polite imperative. */
const CLAUSE_DIRECTIVE = /^(?:we\s+(?:always|never|use|prefer|don'?t|do not)|please)\b/i;

/** Parse one sentence into a directive, or null when it is not a standing instruction. */
export function parseDirective(sentence: string): Directive | null {
  if (/\?\s*$/.test(sentence) || NOT_A_PREFERENCE.test(sentence)) return null;
  const s = stripFillers(sentence).replace(
    /^in (?:this|our|the) (?:repo|repository|project|codebase|code base),?\s+/i,
    "",
  );
  if (
    /^(?:if|when|can|could|would|should|is|are|does|do you|why|how|what|where|did|have you|i think|i thought|maybe|perhaps)\b/i.test(
      s,
    )
  )
    return null;
  const standing = STANDING.test(sentence);
  let m: RegExpExecArray | null;
  if ((m = /^(?:(?:we|i)\s+)?(?:always\s+)?use\s+(.+?)\s+(?:instead of|rather than|over)\s+(.+)$/i.exec(s))) {
    return { polarity: 1, object: cutObject(m[1]!), replaced: cutObject(m[2]!), standing: true, form: "use-instead" };
  }
  if ((m = /^(?:(?:we|i)\s+)?(?:always\s+)?prefer\s+(.+?)\s+(?:over|to|rather than|instead of)\s+(.+)$/i.exec(s))) {
    return { polarity: 1, object: cutObject(m[1]!), replaced: cutObject(m[2]!), standing: true, form: "prefer-over" };
  }
  if ((m = /^(?:(?:we|i)\s+)?prefer\s+(.+)$/i.exec(s)))
    return { polarity: 1, object: cutObject(m[1]!), standing: true, form: "prefer" };
  if ((m = /^always\s+(.+)$/i.exec(s)))
    return { polarity: 1, object: cutObject(m[1]!), standing: true, form: "always" };
  if ((m = /^never\s+(?:ever\s+)?(.+)$/i.exec(s)))
    return { polarity: -1, object: cutObject(m[1]!), standing: true, form: "never" };
  if ((m = /^(?:please\s+)?stop\s+(\w+ing\b.*)$/i.exec(s)))
    return { polarity: -1, object: cutObject(m[1]!), standing: true, form: "stop" };
  if ((m = /^no more\s+(.+)$/i.exec(s)))
    return { polarity: -1, object: cutObject(m[1]!), standing: true, form: "stop" };
  if ((m = /^avoid\s+(.+)$/i.exec(s))) return { polarity: -1, object: cutObject(m[1]!), standing, form: "avoid" };
  if ((m = /^(?:don'?t|do not|dont)\s+(?:ever\s+)?(.+)$/i.exec(s))) {
    if (ONE_OFF.test(sentence) && !standing) return null;
    return { polarity: -1, object: cutObject(m[1]!), standing, form: "dont" };
  }
  if ((m = /^we\s+(?:always\s+)?use\s+(.+)$/i.exec(s)))
    return { polarity: 1, object: cutObject(m[1]!), standing: true, form: "we-use" };
  // "please use the british spelling": a polite imperative about how to write, not a task on a file.
  if (
    (m = /^please\s+use\s+(?:the\s+|a\s+)?([\w-]+(?:\s+[\w-]+){0,3})\s*[.!]?$/i.exec(sentence.trim())) &&
    !PATHISH.test(sentence)
  )
    return { polarity: 1, object: `use the ${m[1]!}`, standing: true, form: "please-use" };
  if (TEAM_HABIT.test(s) && !TEAM_NARRATION.test(s)) {
    m = TEAM_HABIT.exec(s)!;
    return {
      polarity: m[1]!.toLowerCase() === "always" ? 1 : -1,
      object: cutObject(m[2]!),
      standing: true,
      form: m[1]!.toLowerCase() === "always" ? "always" : "never",
    };
  }
  if ((m = /^keep\s+((?:our|the|all)\s+.+?\s+in\s+.+)$/i.exec(s)))
    return { polarity: 1, object: cutObject(m[1]!), standing: true, form: "keep-in" };
  return memoRule(s, sentence) ?? modalRule(s, sentence);
}

/** "update CLAUDE.md that we should always run fmt with lint", "remember that X": a rule the user wants kept. */
const MEMO_REQUEST =
  /^(?:(?:please\s+)?(?:update|add (?:to|in)|write (?:in|into|to)|put (?:in|into)|note (?:in|down in)|document in)\s+(?:the\s+)?(?:claude|agents|gemini|copilot-instructions)\.md(?:\s+file)?\s*(?:that|to say(?: that)?|so that|:)\s+|remember(?: that)?\s+|note that\s+|keep in mind(?: that)?\s+)(.{6,220})$/i;

function memoRule(s: string, sentence: string): Directive | null {
  const m = MEMO_REQUEST.exec(s);
  if (!m || /\?\s*$/.test(sentence)) return null;
  const rest = stripLeadIns(m[1]!);
  return {
    polarity: /\b(?:never|don'?t|do not|should not|shouldn'?t|must not|mustn'?t|avoid)\b/i.test(rest) ? -1 : 1,
    object: rest.replace(/[.!;,:]+$/, ""),
    standing: true,
    form: "memo",
  };
}

/** Lead-ins that introduce the statement itself ("Mention also that …", "Note that …"). */
function stripLeadIns(s: string): string {
  return s
    .replace(
      /^(?:(?:also\s+)?(?:mention|say|state|add|note|explain|document)(?:\s+also)?(?:\s+that)+\s+|make sure(?:\s+that)?\s+(?=\S+\s+(?:is|are|does|do|has|have|gets?|runs?)\b))/i,
      "",
    )
    .trim();
}

const MODAL = /\b(should|must|shall|needs? to|ha(?:s|ve) to)(\s+not|n't)?\s+(?:always\s+|never\s+|only\s+)?(\w+)/i;
/** The condition that makes a "should" a standing rule rather than a one-off request. */
const CONDITION =
  /\b(?:in\s+[\w"'`-]+\s+mode|when(?:ever)?\b|for (?:the\s+)?[\w.@/"'`-]+\s+(?:target|agent|provider|users?|mode|case|files?|tests?|builds?|releases?|projects?)|for (?:all|every|any|each)\b|every\b|any\b|all\s+\w+s\b|by default|default)/i;
const PRONOUN_SUBJECT = /^(?:it|this|that|these|those|they|them|he|she|one)\b/i;
const NOW = /^(?:now|then|so|first|next|also)\b|\b(?:right now|for now|this time|yet|today|at the moment)\b/i;

/**
 * A modal statement anywhere in the sentence: "In cloud mode we should not display the agent
 * picker", "for the AGENTS.md target, the skills should be in .agents/skills", "Deletes must run in
 * a transaction". One-off requests ("the modal should be bigger", "you should run the tests now"),
 * statements about "it/this" with no subject, and first-person plans are not rules.
 */
function modalRule(s: string, sentence: string): Directive | null {
  const body = stripLeadIns(s);
  const m = MODAL.exec(body);
  if (!m) return null;
  const subject = body.slice(0, m.index).trim();
  if (/\b(?:i|you|u)\s*$/i.test(subject) && !STANDING.test(sentence)) return null;
  if (/^i\b/i.test(subject) || subject.split(/\s+/).length > 14) return null;
  const bareSubject = subject.replace(/^(?:(?:in|for|on|with|when|if)\s+[^,]+,\s*)/i, "");
  if (PRONOUN_SUBJECT.test(bareSubject) && !/\b(?:we|tests?|code|files?)\b/i.test(bareSubject)) return null;
  if (subject.length === 0 && !/^(?:must|should)/i.test(body)) return null;
  if (NOW.test(sentence) && !STANDING.test(sentence)) return null;
  const negative = m[2] !== undefined || /\bnever\b/i.test(m[0]);
  const strong = /^must|^shall|^ha/i.test(m[1]!);
  // "X should (not) display/show …" asks for a change to what a page shows: a task, not a rule.
  if (
    /^(?:display|show|render|appear|hide|be (?:hidden|shown|displayed|visible)|include|mention|say|read|look)$/i.test(
      m[3]!,
    )
  )
    return null;
  const reasoned = /\b(?:because|since|as they|so that)\b/i.test(body.slice(m.index)); // "… since they consume tokens"
  if (!negative && !strong && !reasoned && !CONDITION.test(body) && !STANDING.test(sentence)) return null;
  return { polarity: negative ? -1 : 1, object: body.replace(/[.!;,:]+$/, ""), standing: true, form: "modal" };
}

function contentWords(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^a-z0-9./+#@-]+/)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
}

/** One quoted command decides the key; several ("`yarn codegen` then `yarn build`") describe a procedure, not a tool. */
function commandChoice(d: Directive): { key: string; value: string } | null {
  if (d.polarity !== 1) return null;
  const quoted = [...d.object.matchAll(QUOTED_COMMAND)];
  if (quoted.length !== 1) return null;
  const step = parseCommand(quoted[0]![1]!)[0];
  const key = step ? COMMAND_KEYS[step.kind] : undefined;
  return step && key ? { key, value: step.base } : null;
}

function toolChoice(d: Directive): { key: string; value: string } | null {
  const named = d.object.replace(QUOTED_COMMAND, " "); // `pnpm db:migrate` names a script, not the package manager
  for (const t of TOOL_CHOICES) {
    const m = t.names.exec(named);
    if (m && (d.polarity === 1 || d.replaced)) return { key: t.key, value: m[1]!.toLowerCase() };
  }
  return null;
}

/** A light, readable stemmer for keys: adding → add, comments → comment, nested → nest, running → run. */
export function lightStem(w: string): string {
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  if (w.endsWith("ing") && w.length > 5) {
    const b = w.slice(0, -3);
    return /([b-df-hj-np-tv-z])\1$/.test(b) && b.length > 3 && !/(?:ll|ss|zz)$/.test(b) ? b.slice(0, -1) : b;
  }
  if (w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.endsWith("ed") && w.length > 5) {
    const b = w.slice(0, -2);
    return /([b-df-hj-np-tv-z])\1$/.test(b) && b.length > 3 ? b.slice(0, -1) : b;
  }
  if (/(?:ss|us|is)$/.test(w)) return w;
  return w.endsWith("s") ? w.slice(0, -1) : w;
}

/** Key words of a phrase, stemmed so "adding comments" and "add comments" meet on one key. */
function keyWords(s: string, max: number): string {
  return slug(contentWords(s).map(lightStem).join(" "), max);
}

function keyFor(d: Directive): { key: string; value?: string } {
  const tool = commandChoice(d) ?? toolChoice(d);
  if (tool) return tool;
  if (d.replaced) {
    const pair = [keyWords(d.object, 3), keyWords(d.replaced, 3)].sort();
    return { key: `pref:${pair.join("_vs_")}`.slice(0, 100), value: d.object };
  }
  if (d.form === "modal" || d.form === "memo")
    return { key: `rule:${keyWords(d.object.replace(QUOTED_COMMAND, " "), 6) || keyWords(d.object, 6)}`.slice(0, 100) };
  // Quoted commands make poor key words ("pnpm", "db"): key by the words around them when there are any.
  const words = keyWords(d.object.replace(QUOTED_COMMAND, " "), 5);
  return { key: `pref:${words || keyWords(d.object, 5)}`.slice(0, 100) };
}

/** Project scope for tool choices, team statements, repo words, paths — and instructions given about files of this repo. */
function scopeFor(sentence: string, key: string, d: Directive, aboutRepoFiles: boolean): "user" | "project" {
  if (!key.startsWith("pref:")) return "project";
  if (d.form === "we-use" || d.form === "keep-in" || d.form === "modal" || d.form === "memo") return "project";
  if (PROJECT_MARKERS.test(sentence) || PATHISH.test(sentence) || aboutRepoFiles) return "project";
  // How the person works anywhere needs a general phrasing: names, quotes and identifiers tie it to this repo.
  if (/[`"“]|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b\w+\.(?:md|json|ya?ml|toml)\b/.test(d.object))
    return "project";
  return "user";
}

const MENTIONED_PATH =
  /(?:^|[\s`'"(])((?:\/|\.\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z0-9]{1,8})(?=$|[\s`'"),:;]|\.(?:\s|$))/g;

/** Repo-relative file paths a user message names (`src/auth/jwt.ts`, an absolute path inside the repo). */
export function mentionedPaths(text: string, root: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(MENTIONED_PATH)) {
    const raw = m[1]!;
    if (/^[a-z]+:\/\//i.test(raw) || raw.includes("//")) continue;
    let p: string | null = raw.replace(/^\.\//, "");
    if (isAbsolute(p)) {
      const rel = relative(root, p);
      p = rel.startsWith("..") || isAbsolute(rel) ? null : rel;
    }
    if (p && !out.includes(p)) out.push(p);
  }
  return out.slice(0, 8);
}

/** The directive of a sentence, or of one of its clauses ("Right, the migrations live in drizzle/, and we always generate first."). */
function directiveIn(sentence: string): { d: Directive; text: string } | null {
  const whole = parseDirective(sentence);
  if (whole) return { d: whole, text: sentence };
  if (/\?\s*$/.test(sentence) || NOT_A_PREFERENCE.test(sentence)) return null;
  if (
    /^(?:if|when|can|could|would|should|is|are|does|do you|why|how|what|where|did|have you|i think|i thought|maybe|perhaps)\b/i.test(
      stripFillers(sentence),
    )
  )
    return null;
  const [first, ...clauses] = sentence.split(/,\s+(?:and|but|so)\s+/i);
  const ref = referent(first!);
  for (const raw of clauses) {
    if (!CLAUSE_DIRECTIVE.test(raw)) continue;
    // "the client is generated, and we always regenerate it": "it" is the first clause's subject.
    const c = ref && REFERS_BACK.test(raw) ? raw.replace(REFERS_BACK, ref) : raw;
    const d = parseDirective(c);
    if (d?.standing) return { d, text: c };
  }
  return null;
}

/** The subject a first clause introduces ("Right, the client is generated" → "the client"), for a later "it". */
function referent(clause: string): string | null {
  const m =
    /^(?:(?:right|ok(?:ay)?|so|yes|well|note)[,:]?\s+)?((?:the|our|this|that)\s+[\w.@/-]+(?:\s+[\w.@/-]+)?)\s+(?:is|are|was|were|lives?|gets?|has|have|comes?)\b/i.exec(
      clause.trim(),
    );
  return m ? m[1]!.replace(/^(?:this|that)\b/i, "the").toLowerCase() : null;
}

/** The refused call a user message answers (the first message after the refusal), by message event id. */
function refusalsAnswered(
  events: readonly EngineEvent[],
  msgs: ReadonlyArray<{ ev: EngineEvent }>,
): Map<string, { call: EngineEvent; result: EngineEvent }> {
  const out = new Map<string, { call: EngineEvent; result: EngineEvent }>();
  for (const r of rejectedCalls(events)) {
    const next = msgs.find((m) => m.ev.ms >= r.result.ms && m.ev.id !== r.result.id);
    if (next && !out.has(next.ev.id)) out.set(next.ev.id, r);
  }
  return out;
}

function sentenceContent(sentence: string): string {
  const t = clip(stripFillers(sentence), 220).replace(/[,;:]$/, "");
  const cap = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!…]$/.test(cap) ? cap : `${cap}.`;
}

/**
 * Stated preferences in the user's messages. An instruction given in a message about files of this
 * repo, or right after the user refused an edit, carries those files as its paths (and is a project
 * convention); one given after a refusal also carries the refused call as evidence.
 */
export function explicitPreferences(input: RuleInput): Candidate[] {
  const out: Candidate[] = [];
  const msgs = userMessages(input.events);
  const answered = refusalsAnswered(input.events, msgs);
  for (const { ev, text } of msgs) {
    if (isPlanMessage(text)) continue; // an approved plan is the assistant's text: the decisions rule reads it
    // Long messages are mostly pasted material (reviews, logs, specs): only standing instructions count there.
    const long = text.length > 400;
    const head = userProse(text);
    const refusal = answered.get(ev.id);
    // "I'm working on linear ENT-98. keep our working documentation in linear.": an instruction in a
    // message about one ticket is that ticket's, unless it says it stands (three reviewers read it as
    // a one-ticket instruction).
    const ticket = TICKET.test(head);
    const msgPaths = long ? [] : mentionedPaths(head, input.projectRoot);
    for (const sentence of sentences(head)) {
      const found = directiveIn(sentence);
      if (!found) continue;
      const { d, text: said } = found;
      const maxWords = d.form === "modal" || d.form === "memo" ? 40 : 16; // a stated rule keeps its condition ("in cloud mode …")
      // "Don't give it a number": what "it" is lives in another turn; stored alone it would mean nothing.
      // (A modal statement names its subject before the modal — checked in modalRule — so a later "them" is that subject.)
      const stated = d.form === "modal" || d.form === "memo";
      if (
        contentWords(d.object).length === 0 ||
        d.object.split(/\s+/).length > maxWords ||
        (!stated && refersBack(d.object))
      )
        continue;
      if (long && !(d.standing && STANDING.test(sentence)) && d.form !== "use-instead" && d.form !== "prefer-over")
        continue;
      if (ticket && !STANDING.test(sentence)) continue;
      // Precision first: an instruction that does not say it stands ("don't add a README section",
      // "avoid the modal", "please use the table") is a request about the task at hand, however it is
      // phrased; a fresh reviewer read such items on unseen projects as one task stored as a rule.
      if (!d.standing) continue;
      const { key, value } = keyFor(d);
      if (key === "pref:" || key.endsWith(":")) continue;
      const paths = [...new Set([...(refusal?.call.filePaths ?? []), ...msgPaths])].filter((p) => !isAbsolute(p));
      const scope = scopeFor(sentence, key, d, paths.length > 0);
      out.push({
        type: "user_style",
        key,
        content: sentenceContent(d.form === "modal" || d.form === "memo" ? d.object : said),
        tags: [
          "preference",
          d.polarity === 1 ? "do" : "dont",
          ...(key.startsWith("pref:") ? [] : [key]),
          ...(refusal ? ["correction"] : []),
        ],
        // Importance grows with the user's emphasis ("always", "must", "IMPORTANT", "!").
        importance: Math.min(1, 0.8 + (EMPHASIS.test(sentence) ? 0.1 : 0)),
        confidence: 0.85,
        scope,
        file_paths: scope === "project" ? paths : [],
        source_episode_id: input.episodeId,
        source_event_ids: refusal ? [ev.id, refusal.call.id, refusal.result.id] : [ev.id],
        value,
        polarity: d.polarity,
        rule: "style-preferences",
      });
    }
  }
  return out;
}

export const stylePreferences: Rule = (input) => [...explicitPreferences(input), ...rejectionCorrections(input)];
