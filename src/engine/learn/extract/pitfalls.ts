/**
 * Rule `pitfalls`: a check (test, lint, type check, build, migration, install) that FAILED and then,
 * in the same episode, PASSED after a change. Stores what failed, where, the cause as far as the
 * text shows it, and the fix. A failure never followed by a green run of the same check is not a
 * pitfall; explanations given before a later failed attempt were abandoned hypotheses and are not used.
 * Only a lesson that lasts is a memory at once (hard-won, non-obvious cause, or remarked on by the
 * user); a routine failure fixed at once carries a recurrence gate (lint failures keyed by their rule),
 * and a test brought in line with the change is never one.
 */
import { isAbsolute, relative } from "node:path";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { commandRuns, failureLines, mainStep, sameCheck, type CommandRun } from "../../events/commands.ts";
import {
  appliedChanges,
  cleanUserText,
  clip,
  isPlanMessage,
  rejectedCalls,
  slug,
  userMessages,
  type EngineEvent,
} from "../../events/event-view.ts";
import { capTokens } from "./distil.ts";

const PITFALL_KINDS = new Set([
  "test",
  "lint",
  "typecheck",
  "build",
  "migrate",
  "generate",
  "install",
  "format",
  "dev",
]);
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

interface FixStory {
  cause: { text: string; id: string } | null;
  fix: { text: string; id: string } | null;
}

/**
 * Cause and fix of a resolved failure. The cause: a causal sentence after the last failure, else the
 * declarative explanation given right before a fix that worked (the diagnosis). The fix: what the
 * assistant said it would do (unless the user refused it), else its closing summary once green,
 * else the user's steering correction, else the diff summary.
 */
function fixStory(events: readonly EngineEvent[], from: number, firstFix: EngineEvent, pass: EngineEvent): FixStory {
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

function toRepoPath(p: string, root: string): string | null {
  if (!isAbsolute(p)) return p.replace(/^\.\//, "");
  const rel = relative(root, p);
  return rel.startsWith("..") || isAbsolute(rel) ? null : rel;
}

function errorPaths(lines: readonly string[], root: string): string[] {
  const out: string[] = [];
  for (const l of lines) {
    for (const m of l.matchAll(/([\w@~./-]+\.[A-Za-z]{1,5}):\d+/g)) {
      const p = toRepoPath(m[1]!, root);
      if (p && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

function errorSignature(line: string): string {
  return line
    .replace(/[\w@~./-]+\.[A-Za-z]{1,5}:\d+(?::\d+)?:?/g, " ")
    .replace(/`[^`]*`|"[^"]*"|'[^']*'|\[[^\]]*\]|\([^)]*\)/g, " ")
    .replace(/\b\d+(?:\.\d+)?\b/g, " ")
    .replace(/^(?:error|fail(?:ed)?|---)\W*/i, "")
    .trim();
}

/** What names the error best: from an `…Error`/`…Exception` name to the end of its line when there is one, else the first line. */
function signatureLine(lines: readonly string[]): string | undefined {
  const failedTest = lines.find((l) => /^(?:\(fail\)|✗|×\s*\S+\s*>|FAIL\b|--- FAIL)/.test(l));
  if (failedTest) return failedTest;
  for (const l of lines) {
    const m = /\b[A-Za-z_]\w*(?:Error|Exception)\b.*$/.exec(l);
    if (m) return m[0];
  }
  return lines[0];
}

/** At most `max` characters, cut at a clause boundary (", so", ";", " — ") rather than mid-phrase when one is near. */
function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const cut = Math.max(
    head.lastIndexOf(", so "),
    head.lastIndexOf("; "),
    head.lastIndexOf(" — "),
    head.lastIndexOf(", which "),
    head.lastIndexOf(", and "),
  );
  return cut > max * 0.4 ? head.slice(0, cut) : clip(text, max);
}

/** End a clause with a full stop unless it already ends with punctuation (possibly inside a closing quote). */
function stop(s: string): string {
  return /[.!?…]["'”)]?$/.test(s) ? s : `${s}.`;
}

function describeCommand(run: CommandRun): string {
  const s = mainStep(run);
  return clip(s ? s.text : run.ev.command, 90);
}

interface Chain {
  first: CommandRun;
  lastFail: CommandRun;
  pass: CommandRun;
  attempts: number;
}

/** A `git commit` is a check too when hooks run: a failed commit blocked by its pre-commit hook, then a commit that lands. */
function isCommit(r: CommandRun): boolean {
  return /\bgit\s+commit\b/.test(r.ev.command);
}

function sameRun(a: CommandRun, b: CommandRun): boolean {
  return isCommit(a) || isCommit(b) ? isCommit(a) && isCommit(b) : sameCheck(a, b);
}

function findChains(runs: readonly CommandRun[]): { chains: Chain[]; unresolved: CommandRun[] } {
  const used = new Set<CommandRun>();
  const chains: Chain[] = [];
  const unresolved: CommandRun[] = [];
  for (let i = 0; i < runs.length; i++) {
    const f = runs[i]!;
    if (used.has(f) || f.outcome !== "fail" || !(PITFALL_KINDS.has(f.kind) || isCommit(f))) continue;
    let lastFail = f;
    let attempts = 1;
    let pass: CommandRun | null = null;
    used.add(f);
    for (let j = i + 1; j < runs.length; j++) {
      const r = runs[j]!;
      if (!sameRun(f, r)) continue;
      used.add(r);
      if (r.outcome === "fail") {
        lastFail = r;
        attempts++;
      } else if (r.outcome === "pass") {
        pass = r;
        break;
      }
    }
    if (pass) chains.push({ first: f, lastFail, pass, attempts });
    else unresolved.push(f);
  }
  return { chains, unresolved };
}

/** Commands that can be the fix themselves (generate the migration, install the package, apply it). */
const FIX_COMMAND_KINDS = new Set(["install", "migrate", "generate"]);
/** Commands that fix by themselves without being a check: a formatter or `--fix` run, a clean-up of leftovers or caches. */
const CLEANUP = /(?:^|\s)(?:rm\s+-r?f?r?\s+\S|git\s+clean\b|git\s+checkout\s+--\s|\S*cache\s+clean\b)/;
/** A formatter or `--fix` run fixes lint and format findings, not a failing test or build. */
const LINT_FIXER = /(?:^|\s)(?:[\w-]+:fix\b|--fix\b|--write\b)/;
const fixes = (kind: string, command: string) =>
  CLEANUP.test(command) || ((kind === "lint" || kind === "format") && LINT_FIXER.test(command));

function chainCandidate(
  input: RuleInput,
  events: readonly EngineEvent[],
  changes: readonly EngineEvent[],
  runs: readonly CommandRun[],
  c: Chain,
): Candidate | null {
  const from = c.lastFail.ev.ms;
  const to = c.pass.ev.ms;
  const fixChanges = changes.filter((e) => e.ms >= from && e.ms <= to);
  const fixCommands = runs.filter(
    (r) =>
      r.ev.ms > from &&
      r.ev.ms < to &&
      (FIX_COMMAND_KINDS.has(r.kind) || fixes(c.first.kind, r.ev.command)) &&
      r.outcome === "pass",
  );
  if (fixChanges.length === 0 && fixCommands.length === 0) return null; // passed without a change: flaky or environmental, not a lesson
  const lines = failureLines(c.first.ev.output, 2);
  const lastLines = lines.length > 0 ? lines : failureLines(c.lastFail.ev.output, 2);
  const firstFix = fixChanges[0] ?? fixCommands[0]!.ev;
  const { cause, fix } = fixStory(events, from, firstFix, c.pass.ev);
  const fixFiles = [...new Set(fixChanges.flatMap((e) => e.filePaths))];
  const where = [...new Set([...errorPaths(lastLines, input.projectRoot), ...fixFiles])].slice(0, 8);
  const cmd = isCommit(c.first) ? "git commit" : describeCommand(c.first);
  // The line that names the error best (an `…Error` line), else the first that is not a log timestamp.
  // Log timestamps and source excerpts ("89 | throw new Error(…)") tell a reader nothing on their own.
  const telling = lastLines.filter((l) => !/^\[\d{1,2}:\d{2}|^\[[A-Z][\w-]*\]|^\d+\s*\|/.test(l));
  const failLine = isCommit(c.first)
    ? ""
    : (telling.find((l) => /\b[A-Za-z_]\w*(?:Error|Exception)\b/.test(l)) ?? telling[0] ?? "").replace(
        /^[×✖✘!]\s*/,
        "",
      );
  const parts = [
    stop(
      isCommit(c.first)
        ? "`git commit` was blocked by the pre-commit hook"
        : `\`${cmd}\` failed${failLine ? `: ${clip(failLine, 80)}` : ""}`,
    ),
  ];
  if (cause) parts.push(`Cause: ${stop(shorten(cause.text, 150).replace(/[.!]$/, ""))}`);
  const ran = fixCommands.map((r) => `\`${clip(r.ev.command, 60)}\``).join(", then ");
  const fixWhat = fixChanges.length === 0 && fixCommands.length > 0 ? `ran ${ran}` : (fix?.text ?? "");
  // A fix told in the first person about "them"/"it" ("We can list them explicitly") needs the
  // transcript to make sense: the lesson is told without it rather than with a dangling sentence.
  const fixStandsAlone =
    fixWhat.length > 0 &&
    fixWhat.length <= 160 &&
    !/\b(?:it|them|this|these|those|that one)\b/i.test(
      fixWhat.replace(/^(?:we can|i'll|i will|we'll|let me|let's)\s+/i, ""),
    );
  const FIRST_PERSON = /^(?:we can|i'll|i will|we'll|let me|let's)\s+/i;
  const fixText = FIRST_PERSON.test(fixWhat)
    ? fixWhat.replace(FIRST_PERSON, "").replace(/^./, (ch) => ch.toUpperCase())
    : fixWhat;
  if (fixStandsAlone)
    parts.push(
      `Fix${fixFiles.length > 0 ? ` (${fixFiles.slice(0, 2).join(", ")})` : ""}: ${stop(fixText.replace(/[.!]$/, ""))}`,
    );
  const sigLine = signatureLine(telling.length > 0 ? telling : lastLines); // log timestamps make no signature
  const sig = sigLine ? errorSignature(sigLine) : "";
  const keyTail = slug(sig, 5) || slug(fixFiles[0]?.split("/").pop() ?? cmd, 3) || "failure";
  const evidence = [
    c.first.ev.id,
    c.lastFail.ev.id,
    ...fixChanges.map((e) => e.id),
    ...fixCommands.map((r) => r.ev.id),
    c.pass.ev.id,
  ];
  if (cause) evidence.push(cause.id);
  if (fix && fixChanges.length > 0) evidence.push(fix.id);
  const lintRule = c.first.kind === "lint" ? lintRuleOf(`${c.first.ev.output}\n${c.lastFail.ev.output}`) : null;
  const lasting = lastingReason(events, c, `${cause?.text ?? ""} ${fixWhat}`, fixFiles, fixCommands.length > 0);
  if (lasting === "routine") return null; // a test brought in line with the change: never a lesson, not even on recurrence
  return {
    type: "pitfall",
    key: lintRule
      ? `pitfall:lint-rule:${slug(lintRule, 4)}`.slice(0, 110)
      : `pitfall:${c.first.kind}:${keyTail}`.slice(0, 110),
    // A lint rule's lesson is its cause; the fix of one episode ("POST /x now awaits …") is that episode's.
    content: capTokens(
      lintRule
        ? lintLesson(lintRule, cause?.text ?? null, `${c.first.ev.output}\n${c.lastFail.ev.output}`, failLine)
        : parts.join(" "),
      90,
    ),
    tags: [
      "pitfall",
      c.first.kind,
      ...(lasting ? [lasting] : []),
      ...new Set(where.map(languageOf).filter((l): l is string => l !== null)),
    ],
    importance: c.attempts > 1 ? 0.85 : 0.8,
    confidence: lastLines.length > 0 && (fixChanges.length > 0 || fixCommands.length > 0) ? 0.8 : 0.65,
    scope: "project",
    file_paths: where,
    source_episode_id: input.episodeId,
    source_event_ids: [...new Set(evidence)],
    rule: "pitfalls",
    // A routine failure fixed at once is a lesson only when another episode runs into it again.
    ...(lasting
      ? {}
      : {
          gate: lintRule
            ? { kind: "lint_rule" as const, signature: lintRule.toLowerCase() }
            : { kind: "pitfall" as const, signature: `${c.first.kind}:${slug(sig, 8) || keyTail}` },
        }),
  };
}

/**
 * A lint rule's lesson: the rule, why it fired, and the linter's own message as the example
 * ("errcheck: check every error return, e.g. …"), so a task that meets the message finds the rule.
 */
function lintLesson(rule: string, cause: string | null, output: string, failLine: string): string {
  const example = lintMessage(rule, output);
  const why = cause
    ? shorten(cause, 150).replace(/[.!]$/, "")
    : `flagged ${failLine ? `"${clip(failLine, 80)}"` : "this code"}`;
  const eg = example && !why.toLowerCase().includes(example.toLowerCase()) ? ` ("${example}")` : "";
  return stop(`Lint rule \`${rule}\`${eg}: ${why}`);
}

/** The linter's message for `rule`, without its location, rule tag or list of names: "missing cases in switch of type agent.AgentType". */
export function lintMessage(rule: string, output: string): string | null {
  const lines = output.split(/\r?\n/);
  const at = lines.findIndex((l) => l.includes(rule) && /:\d+(?::\d+)?:?\s/.test(l));
  if (at < 0) return null;
  const ruleTag = new RegExp(`\\s*\\(?${rule.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\)?`);
  let msg = lines[at]!.replace(/^.*?[\w./-]+:\d+(?::\d+)?:?\s+/, "") // path:line:col:
    .replace(ruleTag, "")
    .replace(/[━─]+/g, "")
    .replace(/^(?:error|warning|warn)(?::|\s{2,})\s*/i, "")
    .trim();
  if (msg.length < 8) {
    // Biome prints the rule on the location line and the message on the next one ("✖ This hook …").
    const next = lines.slice(at + 1, at + 4).find((l) => /^\s*[✖×!]\s+\S/.test(l));
    msg = next ? next.replace(/^\s*[✖×!]\s+/, "").trim() : "";
  }
  msg = msg.replace(/:\s+[^:]*$/, "").trim(); // "…: agent.AgentTypeClaudeCode, agent.AgentTypeUnknown"
  if (msg.length > 90) msg = msg.split(/,\s+/)[0]!;
  return msg.length >= 8 && msg.length <= 90 ? msg : null;
}

/**
 * The key a failed run's pitfall would be stored under (as chainCandidate names it), so a later
 * failure can be matched to a stored pitfall: the same error coming back (learn/outcomes.ts).
 */
export function failureKey(run: CommandRun): string | null {
  if (run.outcome !== "fail" || !PITFALL_KINDS.has(run.kind)) return null;
  const lines = failureLines(run.ev.output, 2);
  const telling = lines.filter((l) => !/^\[\d{1,2}:\d{2}|^\[[A-Z][\w-]*\]|^\d+\s*\|/.test(l));
  const lintRule = run.kind === "lint" ? lintRuleOf(run.ev.output) : null;
  if (lintRule) return `pitfall:lint-rule:${slug(lintRule, 4)}`.slice(0, 110);
  const sigLine = signatureLine(telling.length > 0 ? telling : lines);
  const tail = sigLine ? slug(errorSignature(sigLine), 5) : "";
  return tail ? `pitfall:${run.kind}:${tail}`.slice(0, 110) : null;
}

/** Where a lint failure names its rule: `lint/suspicious/noEmptyBlockStatements`, `@typescript-eslint/no-floating-promises`, `(errcheck)`. */
export function lintRuleOf(output: string): string | null {
  const m =
    /\b(lint\/[a-z]+\/[a-zA-Z]+)\b/.exec(output) ??
    /(@[\w-]+\/[a-z][\w-]+)\s*$/m.exec(output) ??
    /\s{2,}((?:[a-z]+-)+[a-z]+|[a-z]+\/[a-z][\w-]+)\s*$/m.exec(output) ??
    /\((errcheck|exhaustive|govet|staticcheck|unused|ineffassign|gosec|revive|gocritic|unparam|nilerr|errorlint|wrapcheck|goconst|gocyclo|dupl|misspell|lll|whitespace|godot|nolintlint|prealloc)\)/.exec(
      output,
    ) ??
    /\b(use[A-Z]\w+|no[A-Z]\w+)\b/.exec(output);
  return m ? m[1]! : null;
}

/** Causes that no reader of the code alone would guess: environment, configuration, ordering, concurrency, tooling, data. */
const NON_OBVIOUS =
  /\b(?:env(?:ironment)?(?: var(?:iable)?s?)?|\.env\b|config(?:uration)?|tsconfig|settings|version|node_modules|lock ?file|cache[ds]?|port\b|permissions?|timeout|timed out|race|concurren\w*|deadlock|order(?:ing)?|sequence|migrations?|schema|database|docker|network|locale|timezone|encoding|flaky|leftover|stale|gitignore|(?:pre-?commit|git) hook|\bci\b|platform|macos|windows|sandbox|not running|daemon|server is|credentials?|path (?:is|was)|working directory|cwd)\b/i;
const ROUTINE_CAUSE =
  /\b(?:checking for the old|expect(?:s|ed|ing)? the old|old (?:text|wording|snapshot|expectation|value|message)|snapshot (?:is )?(?:out of date|outdated)|update(?:d)? the (?:test|snapshot|expectation)s?)\b/i;
const RUNTIME_ERROR =
  /\b(?:TypeError|ReferenceError|RangeError|panic|nil pointer|NullPointerException|segmentation fault|AttributeError|KeyError|IndexError)\b/;
const TEST_FILE = /(?:^|\/)(?:test|tests|__tests__|spec)\/|\.(?:test|spec)\.[a-z]+$|_test\.[a-z]+$/;

/**
 * Why a fixed failure is worth remembering on its own; null when it is a routine compile, type or
 * lint error fixed at once (it waits for recurrence); "routine" for a test brought in line with the
 * change (never a lesson).
 */
function lastingReason(
  events: readonly EngineEvent[],
  c: Chain,
  text: string,
  fixFiles: readonly string[],
  fixedByCommand: boolean,
): "routine" | string | null {
  const msgs = userMessages(events).filter(
    (m) => m.ev.ms > c.first.ev.ms && m.ev.ms < c.pass.ev.ms && !isPlanMessage(m.text),
  );
  if (msgs.length > 0) return "user-remarked";
  // "The test was checking for the old text", or only test files changed: a test brought in line with
  // the change — routine, however long it took.
  if (ROUTINE_CAUSE.test(text)) return "routine";
  if (fixFiles.length > 0 && fixFiles.every((f) => TEST_FILE.test(f)) && !fixedByCommand) return "routine";
  if (c.attempts >= 3) return "hard-won";
  if (c.pass.ev.ms - c.first.ev.ms >= 10 * 60_000) return "hard-won";
  if (NON_OBVIOUS.test(text) || fixedByCommand) return "non-obvious";
  const sourceFixed = fixFiles.some((f) => !TEST_FILE.test(f));
  if (c.first.kind === "test" && RUNTIME_ERROR.test(text) && sourceFixed) return "non-obvious";
  return null;
}

export function languageOf(path: string): string | null {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  const map: Record<string, string> = {
    ts: "typescript",
    tsx: "typescript",
    js: "javascript",
    jsx: "javascript",
    mjs: "javascript",
    cjs: "javascript",
    py: "python",
    go: "go",
    rs: "rust",
    rb: "ruby",
    ex: "elixir",
    exs: "elixir",
    java: "java",
    kt: "kotlin",
    swift: "swift",
    cs: "csharp",
    php: "php",
    c: "c",
    h: "c",
    cpp: "cpp",
    cc: "cpp",
    scala: "scala",
    sql: "sql",
    vue: "vue",
    svelte: "svelte",
    dart: "dart",
    zig: "zig",
    lua: "lua",
    sh: "shell",
  };
  return ext ? (map[ext] ?? null) : null;
}

export const pitfalls: Rule = (input) => {
  const events = input.events; // subagent runs count too: their failures and fixes are real
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected" && r.outcome !== "unknown");
  const changes = appliedChanges(events);
  const { chains } = findChains(runs);
  return chains.map((c) => chainCandidate(input, events, changes, runs, c)).filter((c): c is Candidate => c !== null);
};
