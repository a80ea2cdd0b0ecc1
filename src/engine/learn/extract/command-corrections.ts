/**
 * Rule `command-corrections`: a command that failed and was replaced, with no file changed in
 * between, by a different command that did the same job and succeeded — `rtk bun run test` fails
 * with "unrecognized subcommand 'bun'", `bun run test` passes. The lesson is the way that works.
 * Only a usage error of a tool (unknown subcommand, option or value; command not found) is one: the
 * tool's own output states the cause. Any other failure replaced by another form of the command is a
 * guess at what went wrong (`git commit` failing in a hook's test run, then `git commit --no-verify`
 * "fixing" it by skipping the hook), so it is not stored, not even on recurrence.
 */
import type { Candidate, Rule } from "./candidate.ts";
import { commandRuns, failureLines, type CommandRun } from "../../events/commands.ts";
import { appliedChanges, clip, slug } from "../../events/event-view.ts";

/** How far the replacement may come after the failure. */
const WINDOW_MS = 5 * 60_000;
const WINDOW_RUNS = 4;
const USAGE_ERROR =
  /\b(?:unrecognized (?:subcommand|option|argument|command)|unknown (?:option|command|subcommand|flag|argument)|invalid (?:value|option|argument|choice)|illegal option|command not found|no such (?:option|command|subcommand)|not a valid (?:option|command)|unexpected argument|usage:)/i;

function words(cmd: string): string[] {
  return cmd
    .replace(/\s*\|\s*(?:head|tail|grep|less|cat|wc)\b.*$/, "")
    .replace(/\s+\d?>&\d|\s+\d?>\s*\/dev\/null/g, "")
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/** Does `inner` stand inside `outer` as a run of consecutive words? */
function containsRun(outer: readonly string[], inner: readonly string[]): boolean {
  for (let i = 0; i + inner.length <= outer.length; i++) if (inner.every((w, j) => outer[i + j] === w)) return true;
  return false;
}

/**
 * Is `b` the same job as `a` done another way? One command is the other with a wrapper dropped or
 * added (`rtk bun run test` → `bun run test`), or the same program and arguments with other flags
 * (`cat -A f` → `cat -v f`). Another command that merely shares words (`bun run lint:fix`) is not.
 */
export function sameJob(a: string, b: string): boolean {
  const wa = words(a);
  const wb = words(b);
  if (wa.join(" ") === wb.join(" ") || wa.length === 0 || wb.length === 0) return false;
  const [short, long] = wa.length <= wb.length ? [wa, wb] : [wb, wa];
  if (short.length >= 2 && long.length - short.length <= 2 && containsRun(long, short)) return true;
  const args = (ws: readonly string[]) => ws.filter((w) => !w.startsWith("-")).join(" ");
  return wa[0] === wb[0] && wa.length > 1 && args(wa) === args(wb);
}

function firstErrorLine(run: CommandRun): string {
  const lines = failureLines(run.ev.output, 1);
  const line =
    lines[0] ??
    run.ev.output
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => /error|fail|unknown|invalid|not found|usage/i.test(l)) ??
    "";
  return clip(line, 100);
}

export const commandCorrections: Rule = (input) => {
  // A usage error is a failure whatever the exit code says (`rtk bun run test 2>&1 | tail` exits 0).
  const usageError = (r: CommandRun) => USAGE_ERROR.test(r.ev.output.slice(0, 600));
  const runs = commandRuns(input.events).filter((r) => r.outcome !== "rejected");
  const changes = appliedChanges(input.events);
  const out: Candidate[] = [];
  const seen = new Set<string>();
  runs.forEach((bad, i) => {
    if (!usageError(bad)) return;
    const error = clip(
      bad.ev.output
        .split(/\r?\n/)
        .find((l) => USAGE_ERROR.test(l))!
        .trim(),
      100,
    );
    if (!error || /<tool_use_error>|sibling tool call/i.test(bad.ev.output)) return; // a parallel call's failure, not this command's
    for (const good of runs.slice(i + 1, i + 1 + WINDOW_RUNS)) {
      if (good.ev.ms - bad.ev.ms > WINDOW_MS) break;
      if (changes.some((c) => c.ms > bad.ev.ms && c.ms < good.ev.ms)) break; // a file changed: a fix, not a correction
      if (!sameJob(bad.ev.command, good.ev.command) || usageError(good)) continue;
      if (good.outcome !== "pass" && firstErrorLine(good) === error) continue;
      const badCmd = clip(words(bad.ev.command).join(" "), 70);
      const goodCmd = clip(words(good.ev.command).join(" "), 70);
      const signature = `${slug(badCmd, 3)}|${slug(error.replace(/['"`][^'"`]*['"`]/g, ""), 6)}`;
      if (seen.has(signature)) return;
      seen.add(signature);
      out.push({
        type: "pitfall",
        key: `pitfall:command:${slug(badCmd, 4)}`.slice(0, 110),
        content: `\`${badCmd}\` fails (${error.replace(/\.$/, "")}); run \`${goodCmd}\` instead.`,
        tags: ["pitfall", "command", "tooling"],
        importance: 0.7,
        confidence: 0.75,
        scope: "project",
        file_paths: [],
        source_episode_id: input.episodeId,
        source_event_ids: [bad.ev.id, good.ev.id],
        rule: "command-corrections",
      });
      return;
    }
  });
  return out;
};
