/**
 * Rule `pitfalls`: a check (test, lint, type check, build, migration, install) that FAILED and then,
 * in the same episode, PASSED after a change. Stores what failed, where, the cause the session stated,
 * and the fix. A failure never followed by a green run of the same check is not a pitfall, nor is one
 * whose cause the session never stated (a lint rule aside: the linter states it); explanations given
 * before a later failed attempt were abandoned hypotheses and are not used, and a cause or fix
 * sentence that names nothing the failure shows is from an unrelated nearby sentence, not its story.
 * Only a lesson that lasts is a memory at once (hard-won, non-obvious cause, or remarked on by the
 * user); a routine failure fixed at once carries a recurrence gate (lint failures keyed by their rule),
 * and a test brought in line with the change is never one.
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { commandRuns, failureLines, type CommandRun } from "../../events/commands.ts";
import { appliedChanges, clip, slug, type EngineEvent } from "../../events/event-view.ts";
import { capTokens } from "./distil.ts";
import { describeCommand, findChains, isCommit, PITFALL_KINDS, type Chain } from "./pitfalls/chains.ts";
import {
  errorPaths,
  errorSignature,
  languageOf,
  namesThrowawayPath,
  shorten,
  signatureLine,
  stop,
} from "./pitfalls/failure-text.ts";
import { aboutFailure, fixStory } from "./pitfalls/fix-story.ts";
import { lastingReason } from "./pitfalls/lasting.ts";
import { lintLesson, lintRuleOf } from "./pitfalls/lint-rule.ts";

/** The output near its first error line (what the failure shows), not the whole log. */
function aroundFailure(output: string): string {
  const first = failureLines(output, 1)[0];
  const at = first ? output.indexOf(first) : -1;
  return at < 0 ? output.slice(0, 1200) : output.slice(Math.max(0, at - 600), at + 1200);
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
  const story = fixStory(events, from, firstFix, c.pass.ev);
  const fixFiles = [...new Set(fixChanges.flatMap((e) => e.filePaths))];
  // A cause must name something the failure itself shows (its command, its error lines and what is
  // around them), a fix something of the failure or of the change that fixed it; else the sentence was
  // taken from an unrelated nearby remark and is not this failure's story. The error's surroundings,
  // not the whole output: a long log shares a word with anything.
  const failed = [c.first.ev.command, aroundFailure(c.first.ev.output), aroundFailure(c.lastFail.ev.output)].join("\n");
  const changed = [
    ...fixFiles,
    ...fixChanges.map((e) => e.content.diff_summary ?? ""),
    ...fixCommands.map((r) => r.ev.command),
  ].join("\n");
  const cause = story.cause && aboutFailure(story.cause.text, failed) ? story.cause : null;
  const fix = story.fix && aboutFailure(story.fix.text, `${failed}\n${changed}`) ? story.fix : null;
  const lintFailure = c.first.kind === "lint" && lintRuleOf(`${c.first.ev.output}\n${c.lastFail.ev.output}`) !== null;
  // Precision first: a failure whose cause the session never stated is not a lesson (a lint rule's
  // cause is the rule, which the linter itself states).
  if (!cause && !lintFailure) return null;
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
  // A cause or fix about a generated name ("`rm -rf tmp/clones/agents-eval-DtKspd/`") is one
  // instance's cleanup: two reviewers rejected it as an incident log (issue 26, session 9). It stays
  // findable as history; the lasting lesson is the model's to word.
  if (namesThrowawayPath(`${cause?.text ?? ""}\n${fixWhat}`)) return null;
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
    // A routine failure fixed at once is a lesson only when another episode runs into it again. So is
    // a lint rule's, however hard it was: the linter states the rule and its message each time it fires,
    // and a fresh reviewer rejected a first-seen lint lesson as restating the error (unseen entireio
    // holdout, issue 26); what the user said about it (no ignore directive) is a rule of its own.
    ...(lasting && !lintRule
      ? {}
      : {
          gate: lintRule
            ? { kind: "lint_rule" as const, signature: lintRule.toLowerCase() }
            : { kind: "pitfall" as const, signature: `${c.first.kind}:${slug(sig, 8) || keyTail}` },
        }),
  };
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

export const pitfalls: Rule = (input) => {
  const events = input.events; // subagent runs count too: their failures and fixes are real
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected" && r.outcome !== "unknown");
  const changes = appliedChanges(events);
  const { chains } = findChains(runs);
  return chains.map((c) => chainCandidate(input, events, changes, runs, c)).filter((c): c is Candidate => c !== null);
};
