/**
 * The pitfall gate's judgement (issue 14): why a fixed failure is worth remembering on its own — the
 * user remarked on it, it was hard-won, its cause is not obvious — or why it waits for recurrence,
 * or is never a lesson (a test brought in line with the change).
 */
import { isPlanMessage, userMessages, type EngineEvent } from "../../../events/event-view.ts";
import type { Chain } from "./chains.ts";

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
export function lastingReason(
  events: readonly EngineEvent[],
  c: Chain,
  text: string,
  fixFiles: readonly string[],
  fixedByCommand: boolean,
): "routine" | string | null {
  const msgs = userMessages(events).filter(
    (m) => m.ev.ms > c.first.ev.ms && m.ev.ms < c.pass.ev.ms && !isPlanMessage(m.text),
  );
  // "The test was checking for the old text", or only test files changed: a test brought in line with
  // the change — routine, however long it took, and whatever the user said meanwhile ("fix the test,
  // the code is right" steers the fix; it does not make the updated expectation a lesson).
  if (ROUTINE_CAUSE.test(text)) return "routine";
  if (fixFiles.length > 0 && fixFiles.every((f) => TEST_FILE.test(f)) && !fixedByCommand) return "routine";
  if (msgs.length > 0) return "user-remarked";
  if (c.attempts >= 3) return "hard-won";
  if (c.pass.ev.ms - c.first.ev.ms >= 10 * 60_000) return "hard-won";
  if (NON_OBVIOUS.test(text) || fixedByCommand) return "non-obvious";
  const sourceFixed = fixFiles.some((f) => !TEST_FILE.test(f));
  if (c.first.kind === "test" && RUNTIME_ERROR.test(text) && sourceFixed) return "non-obvious";
  return null;
}
