/**
 * Lint failures as conventions (rule `pitfalls`): the rule a linter names, its own message as the
 * example, and the lesson's sentence ("Lint rule `exhaustive` ("missing cases in switch …"): …").
 */
import { clip } from "../../../events/event-view.ts";
import { shorten, stop } from "./failure-text.ts";

/**
 * A lint rule's lesson: the rule, why it fired, and the linter's own message as the example
 * ("errcheck: check every error return, e.g. …"), so a task that meets the message finds the rule.
 */
export function lintLesson(rule: string, cause: string | null, output: string, failLine: string): string {
  const example = lintMessage(rule, output);
  const why = cause
    ? shorten(cause, 150).replace(/[.!]$/, "")
    : `flagged ${failLine ? `"${clip(failLine, 80)}"` : "this code"}`;
  const quoted = example && !why.toLowerCase().includes(example.toLowerCase()) ? `"${example}"` : "";
  // "The `exhaustive` linter requires …" after "Lint rule `exhaustive`:" says the name twice: the
  // rule becomes the sentence's subject ("Lint rule `exhaustive` requires …").
  const escaped = rule.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const own = new RegExp(`^the \`?${escaped}\`? (?:linter|lint rule|rule|check)\\s+(?=[a-z])`, "i").exec(why);
  if (own) return stop(`Lint rule \`${rule}\` ${why.slice(own[0].length)}${quoted ? ` (e.g. ${quoted})` : ""}`);
  return stop(`Lint rule \`${rule}\`${quoted ? ` (${quoted})` : ""}: ${why}`);
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
