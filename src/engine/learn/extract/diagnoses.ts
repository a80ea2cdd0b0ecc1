/**
 * Rule `diagnoses`: a lesson stated in the assistant's own root-cause explanation, with or without a
 * failed command ("The issue is that `Bun.spawn` doesn't throw on non-zero exit codes", "When both
 * are provided, `repositoryUrl` wins …"). Stored as a `pitfall` tagged `diagnosis`, keyed by its
 * subject so the same lesson told again consolidates.
 *
 * Strict, because most explanations are about one episode's code:
 * - Where: the assistant's replies, and the root-cause section of an approved plan.
 * - What: one sentence with a root-cause marker ("the issue is that", "this happens because", "X wins",
 *   "X doesn't/never/only …", "X is gitignored", "X picks up …", "X requires …") about a named subject (a backticked
 *   identifier, a file, a known tool). Dropped: the assistant's own slips ("my change"), compile and
 *   type errors, before-state text ("currently", "still"), questions, hypotheses, narration, a
 *   pronoun left without its subject, and a statement a later reply dismisses.
 * - Held: a fix followed in the episode (an edit, then a passing check or a commit; the failed
 *   command it explained working afterwards; the workaround it announced working; the user confirming
 *   an edit).
 * - Lasting: about a tool or library (a CLI, a runtime API, the pre-commit hook). A statement about
 *   this project's own code is not kept (the code moves on: a reviewer found the one such lesson
 *   stored from the train sessions false nine days later), except which folders git ignores.
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { CHECK_KINDS, commandRuns, GIT_COMMIT, mainStep, sameCheck, type CommandRun } from "../../events/commands.ts";
import {
  appliedChanges,
  cleanUserText,
  isPlanMessage,
  slug,
  userMessages,
  type EngineEvent,
} from "../../events/event-view.ts";
import { capTokens } from "./distil.ts";
import { planCauseText, planFlag } from "./plan-sections.ts";

/** Tools, CLIs and libraries whose behaviour is worth knowing in any episode (lower case, as a word). */
const KNOWN_TOOLS = [
  "rtk",
  "bun",
  "deno",
  "npm",
  "pnpm",
  "yarn",
  "npx",
  "git",
  "gh",
  "github cli",
  "biome",
  "eslint",
  "prettier",
  "tsc",
  "typescript",
  "vite",
  "vitest",
  "jest",
  "playwright",
  "husky",
  "pre-commit hook",
  "docker",
  "codex cli",
  "codex",
  "cursor agent cli",
  "claude code",
  "pytest",
  "cargo",
  "sqlite",
  "postgres",
  "macos",
  "curl",
];
/** Tool names that are also English words ("go", "make"): a tool only inside backticks. */
const BACKTICKED_TOOLS = ["node", "go", "make", "cat", "sed", "grep", "uv", "pip", "python", "react"];
const alternation = (names: readonly string[]) =>
  names.map((t) => t.replace(/[-]/g, "\\-").replace(/ /g, "\\s+")).join("|");
const TOOL_RE = new RegExp(`(?:^|[^\\w.-])(${alternation(KNOWN_TOOLS)})(?![\\w-])`, "i");
const BACKTICKED_TOOL_RE = new RegExp(`\`(${alternation(BACKTICKED_TOOLS)})(?:\\s[^\`]*)?\``, "i");
/** A library's API named in backticks: `Bun.spawn`, `fs.rm`, `useEffect`, `ResizeObserver`. */
const LIBRARY_API =
  /^(?:Bun|Deno|process|fs|path|child_process|JSON|Promise|Array|Object|Date|URL|fetch|React|console|window|document|crypto|Buffer)\b|^use(?:Effect|Memo|Callback|State|Ref|LayoutEffect|Context)\b|^(?:ResizeObserver|IntersectionObserver|MutationObserver|AbortController|EventSource|WebSocket)\b/;

/** "The issue is that …", "This happens because …": the cause follows; the marker itself is dropped. */
const CAUSE_LEAD =
  /^(?:(?:so|and|but)\s+)?(?:the\s+)?(?:real\s+|actual\s+|underlying\s+)?(?:root\s+cause|issue|problem|bug|culprit|cause)\s+(?:here\s+)?(?:is|was)\s+(?:that\s+)?|^(?:this|that|it)\s+(?:happens|happened|occurs|fails|failed|breaks)\s+because\s+/i;
/** A statement of how a named thing behaves, always (not what it did once). */
const BEHAVIOUR =
  /\b(?:wins|take?s? precedence|prioriti[sz]es\b.*\bover|overrides?|(?:does not|doesn't|do not|don't|never|won't|will not|cannot|can't)\s+[a-z]{3,}|only\s+[a-z]{3,}s\b|always\s+[a-z]{3,}s\b|is\s+(?:gitignored|ignored by git|not (?:a )?valid|filtering|intercepting|rewriting|swallowing)|(?:filters|intercepts|rewrites|swallows)\s+(?:the\s+)?(?:output|stdout|stderr|arguments)|picks?\s+up|(?:runs?|lints?|checks?)\s+(?:lint\s+)?on\s+the\s+(?:entire|whole)|returns?\s+a\s+new\s+\w+\s+on\s+every|has\s+no\s+`?[\w-]+`?\s+subcommand|(?:are|is)\s+only\s+(?:created|generated|built|written)\s+(?:during|by|when)|(?:now\s+)?requires\s+(?:an?\s+|explicit\s+)?[a-z]{3,})\b/i;

const QUESTION = /\?\s*$/;
const HEDGE =
  /\b(?:maybe|might|possibly|perhaps|probably|i think|i suspect|could be|likely|not sure|seems?|appears? to|looks like|may|guess|hypothes\w*|suspect|presumably|if so)\b/i;
/** The assistant's own slips and this episode's own changes. */
const SLIP =
  /\b(?:i|we)\s+(?:forgot|missed|broke|introduced|added|wrote|changed|removed|just|accidentally|didn't|did not|made)\b|\b(?:my|our)\s+(?:change|changes|edit|edits|code|mistake|fix|bad|typo|commit)\b|\bwe just\b|\bthe (?:new|newly added) code\b/i;
/** Text about the code before the change (false once the fix is in). */
const BEFORE_STATE =
  /\b(?:currently|still|the current (?:code|implementation|version|logic|behaviou?r)|previously|right now|at the moment|as it stands|at present|existing code|used to)\b/i;
/** "Line 46 — …", "`README.md:108`", "(lines ~189-215)": a place in today's code, about to change. */
const CODE_LOCATION = /\blines?\s+~?\d+|\.[a-z]{1,5}:\d+/i;
/** Compile, type and syntax errors: fixed by the next edit, not lessons. */
const COMPILE =
  /\bTS\d{4}\b|\b(?:type|compile|compilation|syntax|typescript|lint) errors?\b|\bunused (?:import|variable)s?\b|\bmissing import\b|\bcannot find name\b|\bis not assignable\b/i;
const NARRATION =
  /^(?:(?:now|ok(?:ay)?|so|first|next|then|great|perfect)[,!.]?\s+)*(?:let me|let's|i'll|i will|i'm going|i need|we need|we should|i can|we can|i see|i found|i understand|looking at|here's|here is)\b/i;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our|us)\b/i;
/** A later reply that says the explanation was wrong. */
const DISMISSAL =
  /\b(?:(?:was|is)(?: not|n't) (?:it|the (?:issue|problem|cause|culprit|reason))|not the (?:issue|problem|cause|culprit)|ruled out|that's not it|red herring|i was wrong|turns out (?:that )?(?:wasn't|isn't)|actually,? (?:the|that|it) (?:issue|problem|cause) (?:is|was))\b/i;
/** A pronoun that needs the transcript ("it just sets the exit code", "so it catches those too"). */
const DANGLING = /\b(?:it|its|they|them|their|these|those|this|that one|both|either|here|above|below)\b/i;
/** A user reply that confirms the fix worked. */
const CONFIRM =
  /^(?:yes|yep|great|perfect|thanks|thank you|that works|works|it works|nice|good|commit|lgtm|ok(?:ay)?)\b/i;
/** The list that completes "X is not a valid value": "The valid values are `a`, `b`, `c`." */
const VALID_VALUES =
  /^the (?:only )?(?:valid|allowed|accepted|supported) (?:values|options|modes|choices) are\b[^.]*`[^`]+`/i;
/** "Let me bypass it.": the next command is the workaround. */
const WORKAROUND = /^(?:now\s+)?let me (?:bypass|work around|avoid|skip)\b/i;

interface Statement {
  text: string;
  ev: EngineEvent;
  /** Sentence that followed in the same reply (for a workaround: "Let me bypass it."). */
  next: string;
  /** Its paragraph hedges ("… may not be found because: 1. Git hooks don't source `.bashrc`"). */
  hedged: boolean;
  /** From a plan: the flag its change section passes ("Add `--trust` to the base args …"). */
  flag?: string;
}

/** Markdown removed: code blocks, headings, bullets, bold and italics, links. */
function plain(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, "\n")
    .replace(/^\s*\|.*\|\s*$/gm, "\n")
    .replace(/^\s*#{1,6}\s+.*$/gm, "\n")
    .replace(/^\s*(?:[-*•]|\d+[.)])\s+/gm, "")
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/(?<![*\w])\*([^*\n]+)\*(?![*\w])/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1");
}

function sentences(text: string): string[] {
  return plain(text)
    .split(/(?<=[.!?])\s+(?=[A-Z`"(])|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function statements(events: readonly EngineEvent[]): Statement[] {
  const out: Statement[] = [];
  const push = (text: string, ev: EngineEvent, flag?: string) => {
    // A paragraph is one thought: a hedge anywhere in it makes each of its sentences a hypothesis
    // (a plan's bold "root cause" followed by "… may not be found because:" and a list was a guess the
    // session never confirmed).
    for (const para of text.replace(/```[\s\S]*?```/g, "\n\n").split(/\n\s*\n/)) {
      const hedged = HEDGE.test(plain(para));
      const ss = sentences(para);
      ss.forEach((s, i) => out.push({ text: s, ev, next: ss[i + 1] ?? "", hedged, flag }));
    }
  };
  for (const ev of events) {
    if (ev.sidechain) continue;
    if (ev.type === "assistant_response") push(ev.text, ev);
    else if (ev.type === "user_message") {
      const t = cleanUserText(ev.text);
      if (isPlanMessage(t)) push(planCauseText(t), ev, planFlag(t));
    }
  }
  return out;
}

/** Backticked names and file names in a sentence. */
function namesIn(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(/`([^`\n]{2,80})`/g)) out.push(m[1]!.replace(/\(\)$/, "").trim());
  for (const m of s.matchAll(
    /(?:^|[\s(])((?:[\w@.-]+\/)*[\w-]+\.(?:tsx?|jsx?|mjs|cjs|json|ya?ml|toml|md|py|go|rs|sh|css|sql|lock))\b/g,
  ))
    out.push(m[1]!);
  return [...new Set(out)];
}

/** Lead-ins that announce a diagnosis without being one: "Now I understand the issue.", "The error is clear:". */
const ANNOUNCE =
  /^(?:(?:now|ok(?:ay)?|so|ah)[,!.]?\s+)?(?:i (?:see|understand|found) the (?:issue|problem|bug)|the (?:error|issue|problem|cause) is (?:clear|simple|obvious)|found (?:it|the (?:issue|problem|bug)))\s*[.:!—-]?\s*/i;

/** The lesson's text: the cause lead and the clauses needing the transcript dropped; null when nothing stands alone. */
export function lessonText(raw: string): string | null {
  const s = raw.replace(ANNOUNCE, "").replace(CAUSE_LEAD, "").trim();
  // Clauses: keep those up to the first that leans on a pronoun, on the episode, or on a second subject.
  const clauses = s.split(
    /\s+(?=[—–]\s)|(?<=[;,])\s+(?=(?:so|and|but|which|because|causing)\b)|(?<=;)\s+|\s+(?=and the\b)/,
  );
  const kept: string[] = [clauses[0]!];
  let consequenceCut = false;
  for (const c of clauses.slice(1)) {
    const body = c.replace(/^[—–,;]\s*/, "");
    if (/^(?:and|so|but|causing|which)\b/i.test(body) || DANGLING.test(body) || FIRST_PERSON.test(body)) {
      consequenceCut = /^(?:so|causing|which means|meaning)\b/i.test(body);
      break;
    }
    kept.push(c);
  }
  let text = kept
    .join(" ")
    .replace(/[\s,;:—–-]+$/, "")
    // "now requires": new to the session's author, a standing fact for the reader.
    .replace(/\bnow (requires)\b/i, "$1")
    .replace(
      /\b(is|are) (filtering|intercepting|rewriting|swallowing)\b/i,
      (_m, be: string, v: string) => `${v.replace(/ing$/, be === "is" ? "s" : "")}`,
    )
    .trim();
  if (!text || DANGLING.test(text.replace(/`[^`]*`/g, " "))) return null;
  // "The pre-commit hook runs lint on the entire codebase, so it catches those too": the lesson was the
  // consequence, which needs the transcript; what is left says nothing wrong or surprising (two
  // reviewers rejected it as missing the point). A limit or a negation stands on its own.
  if (consequenceCut && !/\b(?:not|never|only|always|wins|invalid|no|gitignored|ignored)\b|n't\b/i.test(text))
    return null;
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!]$/.test(text) ? text : `${text}.`;
}

const OWNER_TOOL_RE = new RegExp(`\\b(?:for|of|by|in) (?:the )?(${alternation(KNOWN_TOOLS)})(?![\\w-])`, "i");

/**
 * The subject the lesson is about: a library API named first; a known tool that is the subject
 * (named before what is said of it, or its owner: "… value for the Codex CLI"); else the first named thing.
 */
function subjectOf(text: string): { name: string; general: boolean } | null {
  const names = namesIn(text);
  // `Bun.spawn` is the library; "the `useEffect`" is one call of it in this code.
  const first = names[0];
  if (first && LIBRARY_API.test(first) && !new RegExp(`\\bthe \`${escapeRe(first)}`, "i").test(text))
    return { name: first, general: true };
  const marker = BEHAVIOUR.exec(text);
  const head = marker ? text.slice(0, marker.index) : text;
  // A backticked command counts by its first word (`bun run build` names bun).
  const tool =
    TOOL_RE.exec(head.replace(/`[^`]*`/g, (m) => ` ${m.slice(1, -1).split(/\s+/)[0]} `)) ??
    BACKTICKED_TOOL_RE.exec(head) ??
    OWNER_TOOL_RE.exec(text);
  if (tool) return { name: tool[1]!.toLowerCase().replace(/\s+/g, " "), general: true };
  return names[0] ? { name: names[0], general: false } : null;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Key: the subject and what is said of it ("pre-commit hook" + "picks up"), so one lesson told again meets itself. */
function keyOf(subject: string, text: string): string {
  const said = BEHAVIOUR.exec(text)?.[0] ?? "";
  const words = slug(said.replace(/\b(?:the|a|an|on|of|to|in)\b/gi, " "), 3);
  return `pitfall:diagnosis:${slug(subject, 4) || "behaviour"}${words ? `:${words}` : ""}`.slice(0, 110);
}

/**
 * Diagnoses another rule already tells: the failed-check pitfall quotes the same sentence as its
 * cause ("`git commit` was blocked … Cause: The pre-commit hook runs `bun test` which picks up …").
 */
export function withoutRestatedDiagnoses(cands: readonly Candidate[]): Candidate[] {
  const others = cands.filter((c) => c.rule !== "diagnoses").map((c) => c.content.toLowerCase());
  return cands.filter(
    (c) => c.rule !== "diagnoses" || !others.some((o) => o.includes(c.content.replace(/[.!]$/, "").toLowerCase())),
  );
}

/** A run that worked: judged passing, or exit code 0 unless its output was cut by a pipe (`| tail` always exits 0). */
function worked(r: CommandRun): boolean {
  return r.outcome === "pass" || (r.ev.exitCode === 0 && !/\|\s*(?:tail|head|grep)\b/.test(r.ev.command));
}

/** The same check, or the same program and subcommand (`git commit`, `git add`, `gh api`), flags aside. */
function sameProgram(a: CommandRun, b: CommandRun): boolean {
  if (sameCheck(a, b)) return true;
  const head = (r: CommandRun) =>
    (mainStep(r)?.text ?? r.ev.command)
      .split(/\s+/)
      .filter((w) => !w.startsWith("-"))
      .slice(0, 2)
      .join(" ");
  return head(a) === head(b);
}

/**
 * Did the diagnosis hold? An edit then a check or commit that worked; a failed command it explained
 * working afterwards (the same check, or the same program and subcommand: the commit landing); a workaround it announced that worked; or the
 * user confirming an edit. The evidence's event ids, or null.
 */
function held(
  st: Statement,
  events: readonly EngineEvent[],
  runs: readonly CommandRun[],
  changes: readonly EngineEvent[],
): { ids: string[]; workaround?: CommandRun } | null {
  const at = st.ev.ms;
  // A workaround announced next ("Let me bypass it.") and the command that then worked.
  if (WORKAROUND.test(st.next)) {
    const next = runs.find((r) => r.ev.ms > at);
    if (next && worked(next)) return { ids: [next.ev.id], workaround: next };
  }
  const isCommit = (r: CommandRun) => GIT_COMMIT.test(r.ev.command);
  const edit = changes.find((e) => e.ms >= at);
  if (edit) {
    // A formatter rewrites files and proves nothing about the cause (a plan's guess was "held" by `gofmt -w .`).
    const proof = runs.find(
      (r) => r.ev.ms > edit.ms && worked(r) && ((CHECK_KINDS.has(r.kind) && r.kind !== "format") || isCommit(r)),
    );
    if (proof) return { ids: [edit.id, proof.ev.id] };
  }
  // A command that failed shortly before the statement (one of the last three runs), working afterwards.
  const before = runs.filter((r) => r.ev.ms <= at).slice(-3);
  for (const failed of before.filter((r) => r.outcome === "fail")) {
    const again = runs.find((r) => r.ev.ms > at && worked(r) && sameProgram(failed, r));
    if (again) return { ids: [failed.ev.id, again.ev.id] };
  }
  const reply = userMessages(events).find((m) => m.ev.ms > at);
  if (reply && CONFIRM.test(reply.text) && changes.some((e) => e.ms > at && e.ms < reply.ev.ms))
    return { ids: [reply.ev.id] };
  return null;
}

/** A later reply in the episode says the explanation was wrong. */
function dismissedLater(st: Statement, events: readonly EngineEvent[]): boolean {
  return events.some(
    (e) => e.type === "assistant_response" && !e.sidechain && e.ms > st.ev.ms && DISMISSAL.test(e.text),
  );
}

/**
 * "RTK filters the output" says which output only in the transcript: the command run just before the
 * statement names it ("RTK filters the output of `gh api`").
 */
function filteredCommand(text: string, runs: readonly CommandRun[], at: number): string {
  if (!/\bfilter(?:s|ing) the output\b/i.test(text)) return text;
  const before = runs.filter((r) => r.ev.ms < at).pop();
  const words = before?.ev.command.split(/\s+/).filter((w) => /^[a-z][\w-]*$/.test(w)) ?? [];
  return words.length >= 2 ? text.replace(/\bthe output\b/i, `the output of \`${words.slice(0, 2).join(" ")}\``) : text;
}

/**
 * The error itself named every value the statement lists: a failed run shortly before it, or the error
 * the user pasted ("[possible values: read-only, workspace-write, danger-full-access]").
 */
function errorListsValues(
  valid: string,
  events: readonly EngineEvent[],
  runs: readonly CommandRun[],
  at: number,
): boolean {
  const values = [...valid.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  const errors = [
    ...runs
      .filter((r) => r.ev.ms <= at && r.outcome === "fail")
      .slice(-3)
      .map((r) => r.ev.output),
    ...userMessages(events)
      .filter((m) => m.ev.ms <= at)
      .map((m) => m.text),
  ];
  return values.length > 0 && errors.some((t) => values.every((v) => t.includes(v)));
}

/** A folder git ignores: repository configuration, not code that moves on. */
const GITIGNORED = /\b(?:is|are) (?:gitignored|ignored by git)\b/i;

/** Why a sentence is not a lesson, or null when it may be one. */
export function rejectReason(s: string): string | null {
  if (QUESTION.test(s)) return "question";
  if (NARRATION.test(s.replace(ANNOUNCE, ""))) return "narration";
  if (HEDGE.test(s)) return "hedge";
  if (SLIP.test(s)) return "slip";
  if (BEFORE_STATE.test(s) || CODE_LOCATION.test(s)) return "before-state";
  if (COMPILE.test(s)) return "compile";
  if (!CAUSE_LEAD.test(s.replace(ANNOUNCE, "")) && !BEHAVIOUR.test(s)) return "no-marker";
  return null;
}

/** Why each statement was kept or dropped (tests and tuning read it); the rule itself passes none. */
export type DiagnosisTrace = (sentence: string, verdict: string) => void;

export function findDiagnoses(input: RuleInput, trace: DiagnosisTrace = () => {}): Candidate[] {
  const events = input.events;
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected");
  const changes = appliedChanges(events);
  const out: Candidate[] = [];
  for (const st of statements(events)) {
    const why = rejectReason(st.text) ?? (st.hedged && "hedge");
    if (why) {
      if (why !== "no-marker") trace(st.text, why);
      continue;
    }
    const text = lessonText(st.text);
    if (
      !text ||
      FIRST_PERSON.test(text) ||
      (!BEHAVIOUR.test(text) && !CAUSE_LEAD.test(st.text.replace(ANNOUNCE, "")))
    ) {
      trace(st.text, "not standalone");
      continue;
    }
    const subject = subjectOf(text);
    if (!subject) {
      trace(st.text, "no subject");
      continue;
    }
    const evidence = held(st, events, runs, changes);
    if (!evidence) {
      trace(st.text, "no fix followed");
      continue;
    }
    if (dismissedLater(st, events)) {
      trace(st.text, "dismissed later");
      continue;
    }
    if (!subject.general && !GITIGNORED.test(text)) {
      // Project code moves on: the one such lesson stored from the train sessions ("`engine.ts`
      // prioritizes `repositoryUrl` over `localPath`") was too terse for a reviewer to act on, and a
      // second reviewer found it false nine days later (engine.ts then checked localPath first).
      // What a tool or library does lasts; what this project's code does is read in the code. How git
      // treats a folder of the repo ("`priv/static/assets/` is gitignored") is configuration, and stays.
      trace(st.text, "project code");
      continue;
    }
    trace(st.text, `KEPT: ${text}`);
    let content = text;
    // "The valid values are `read-only`, `workspace-write` …" completes a "not a valid X" statement.
    let selfExplained = false;
    if (/\bnot (?:a )?valid\b/i.test(text) && VALID_VALUES.test(st.next)) {
      content = `${text} ${st.next}`;
      // The CLI's own error already listed the valid values: it explains itself the next time too, so
      // it is a lesson only when it comes back (three reviewers rejected the one-time Codex `--sandbox` value).
      selfExplained = errorListsValues(st.next, events, runs, st.ev.ms);
    }
    // "The Cursor Agent CLI requires explicit workspace trust …" says what to do only with the flag the
    // plan then passed (a reviewer rejected it without: "it can't be acted on").
    if (st.flag && /\brequires\b/i.test(text) && !text.includes(st.flag))
      content = `${text.replace(/\.$/, "")}; pass \`${st.flag}\`.`;
    if (evidence.workaround) {
      const cmd = evidence.workaround.ev.command.split(/\s+/).slice(0, 4).join(" ");
      content = `${filteredCommand(text, runs, st.ev.ms).replace(/\.$/, "")}; bypass it with \`${cmd} …\`.`;
    }
    out.push({
      type: "pitfall",
      key: keyOf(subject.name, text),
      content: capTokens(content, 70),
      tags: ["pitfall", "diagnosis"],
      importance: 0.75,
      confidence: 0.75,
      scope: "project",
      file_paths: namesIn(text).filter((n) => /\.[a-z]{1,5}$/i.test(n) && n.includes("/")),
      source_episode_id: input.episodeId,
      source_event_ids: [st.ev.id, ...evidence.ids],
      rule: "diagnoses",
      ...(selfExplained
        ? { gate: { kind: "pitfall" as const, signature: `diagnosis:${keyOf(subject.name, text)}` } }
        : {}),
    });
  }
  return out;
}

export const diagnoses: Rule = (input) => findDiagnoses(input);
