/**
 * What the repository already tells every agent is not stored again from sessions. A recipe or a
 * command habit read from what ran ("To verify a change: `mise run fmt` → `mise run lint` → `mise run
 * test`", "Uses bun as the package manager (e.g. `bun run test`)") whose every command the guidance
 * files already name (CLAUDE.md, AGENTS.md, .cursor/rules, CONTRIBUTING, the README…) adds nothing: the
 * agent reads those files at the start of each session, and a fresh reviewer rejected six such items
 * as repeats of CLAUDE.md's "Before every commit" section and the README's task list. What the user
 * said stays (it meets the file's own rule on its key), and so do lessons, which say what went wrong.
 */
import { log } from "../../../shared/log.ts";
import type { Candidate } from "../extract/candidate.ts";
import { repoGuidanceText } from "../extract/repo-instructions.ts";

/** Read from what ran, not said: recipes (but the pre-commit hook, which meets its file on its key) and command habits. */
function readFromRuns(c: Candidate): boolean {
  return (c.type === "recipe" && c.key !== "recipe:pre-commit") || c.rule.startsWith("style-habits");
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

export function withoutWhatRepoSays(projectRoot: string, cands: readonly Candidate[]): Candidate[] {
  if (!cands.some(readFromRuns)) return [...cands];
  const says = repoGuidanceText(projectRoot);
  if (!says) return [...cands];
  return cands.filter((c) => {
    if (!readFromRuns(c)) return true;
    const cmds = commandsOf(c.content);
    const known = cmds.length > 0 && cmds.every((cmd) => named(says, cmd));
    if (known) log.debug(`not stored, the repository's guidance files already name its commands: ${c.key}`);
    return !known;
  });
}
