/**
 * What the repository already tells every agent is not stored again from sessions, whatever the item's
 * kind. The agent reads its guidance (CLAUDE.md, AGENTS.md, skills, the docs they link to: see
 * learn/repo-guidance.ts) at the start of each session; a fresh reviewer rejected repeats of it as the
 * largest group of noise (six items repeating CLAUDE.md's "Before every commit" section and the README's
 * task list in one round). Two tests, either one enough:
 * - an item read from what ran (a recipe, a command habit, a manifest's command fact) whose every
 *   backticked command the guidance already names ("To verify a change: `mise run fmt` → `mise run
 *   lint` → `mise run test`" against a "Before Every Commit" list naming all three);
 * - any item most of whose content words one passage of the guidance holds, words weighted by their
 *   rarity in the guidance (repo-guidance.ts `restatesGuidance`): a user's rule the CLAUDE.md already
 *   states, a fact its architecture section gives, a lesson it already warns about.
 * What the guidance does not say stays: a lesson about a failure keeps the words the guidance lacks
 * (the error, the cause), so it does not pass for a repeat. A user-scope preference (how the person
 * works in any repository) stays too: this repository's files do not reach the others.
 */
import { log } from "../../../shared/log.ts";
import type { Candidate } from "../extract/candidate.ts";
import { repoGuidance, restatesGuidance, type Guidance } from "../repo-guidance.ts";

/** Read from what ran or from a manifest, not said: recipes (but the pre-commit hook, whose commands the hook file states), command habits, command facts. */
function readFromRuns(c: Candidate): boolean {
  return (
    (c.type === "recipe" && c.key !== "recipe:pre-commit") ||
    c.rule.startsWith("style-habits") ||
    (c.rule === "project-manifests" && /_command$/.test(c.key))
  );
}

/** The backticked commands of a text, as the guidance text is kept (lower case, single spaces). */
function commandsOf(content: string): string[] {
  return [...content.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.toLowerCase().replace(/\s+/g, " ").trim());
}

/**
 * A command line the text names, as words of its own (`mise run test` is named by "`mise run test:ci`").
 * A single word (`make`, `just`) is not a command line: prose says "make sure" without naming it.
 */
function named(text: string, cmd: string): boolean {
  if (!cmd.includes(" ")) return false;
  const at = (from: number): boolean => {
    const i = text.indexOf(cmd, from);
    if (i < 0) return false;
    const before = text[i - 1] ?? " ";
    const after = text[i + cmd.length] ?? " ";
    return (!/[\w-]/.test(before) && !/[\w-]/.test(after)) || at(i + 1);
  };
  return at(0);
}

/**
 * A heading about the pre-commit hook ("Pre-commit Hook", "Git hooks", "Husky"; not a "Before Every Commit" checklist, which is what to run by hand). The hook
 * recipe names the commands the hook file runs (`bun test src/`), the guidance the scripts that run them
 * (`bun run test`), so no command or passage matches; yet a reviewer rejected the hook recipe as "exactly
 * what CLAUDE.md's Pre-commit Hook section says" (unseen packmind holdout, issue 26).
 */
const HOOK_HEADING = /\bpre-?commit\b|\bgit hooks?\b|\bhusky\b/i;

/** A command habit's purpose: the word a command line for it carries (`bun run test`, `mise run lint`). */
const HABIT_PURPOSE: Record<string, RegExp> = {
  test_command: /\btest(?::[\w-]+)?\b/,
  lint_command: /\blint(?::[\w-]+)?\b/,
  typecheck_command: /\b(?:typecheck|type-check|tsc)\b/,
  format_command: /\b(?:fmt|format)\b/,
};

/**
 * The guidance names a command line for what this habit does. A habit learned from runs names the
 * command that ran (`bun test`, the body of the script), the guidance the script (`bun run test`): a
 * reviewer rejected the habit as a repeat of CLAUDE.md's commands either way (unseen holdout, issue 26).
 */
function namesCommandFor(g: Guidance, c: Candidate): boolean {
  const purpose = c.rule.startsWith("style-habits") ? HABIT_PURPOSE[c.key] : undefined;
  if (!purpose) return false;
  return [...g.text.matchAll(/`([^`]{3,80})`/g)].some((m) => m[1]!.includes(" ") && purpose.test(m[1]!));
}

/** Why the guidance already holds this item, or null when it does not. */
export function whyRepoSays(g: Guidance, c: Candidate): "commands" | "passage" | "section" | null {
  if (c.key === "recipe:pre-commit" && g.headings.some((h) => HOOK_HEADING.test(h.text))) return "section";
  if (namesCommandFor(g, c)) return "commands";
  if (readFromRuns(c)) {
    // A habit is its first command ("Runs tests with `mise run test`; single tests: `…`", "Uses bun as
    // the package manager (e.g. `bun run test`, …)"): the rest are examples of it.
    const all = commandsOf(c.content);
    const cmds = c.rule.startsWith("style-habits") ? all.slice(0, 1) : all;
    if (cmds.length > 0 && cmds.every((cmd) => named(g.text, cmd))) return "commands";
  }
  return restatesGuidance(g, c.content) ? "passage" : null;
}

export function withoutWhatRepoSays(projectRoot: string, cands: readonly Candidate[]): Candidate[] {
  if (cands.length === 0) return [];
  const g = repoGuidance(projectRoot);
  if (g.files.length === 0) return [...cands];
  return cands.filter((c) => {
    // How the person works in any repository (user scope) is not this repository's to say.
    if (c.scope === "user") return true;
    const why = whyRepoSays(g, c);
    if (why) log.debug(`not stored, the repository's guidance already says it (${why}): ${c.key}`);
    return why === null;
  });
}
