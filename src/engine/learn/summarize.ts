/**
 * The offline episode summary: 80–150 tokens built from what happened — the goal (first user
 * message), files changed, checks run and how they ended, commits — plus the episode's outcome and
 * the repo paths it touched. With an LLM configured the extractor replaces the text (same bounds).
 */
import { commandRuns, mainStep, sameCheck, type CommandRun } from "../events/commands.ts";
import {
  appliedChanges,
  cleanUserText,
  clip,
  rejectedCalls,
  userMessages,
  type EngineEvent,
} from "../events/event-view.ts";
import { estimateTokens } from "../../shared/tokens.ts";

export const SUMMARY_MIN_TOKENS = 80;
export const SUMMARY_MAX_TOKENS = 150;

export interface EpisodeDigest {
  summary: string;
  outcome: string;
  file_paths: string[];
}

function checkLabel(r: CommandRun): string {
  const s = mainStep(r) ?? r.steps[0]!;
  return s.base
    .split(/\s+/)
    .filter((w) => !w.startsWith("-"))
    .slice(0, 4)
    .join(" ");
}

interface CheckStory {
  first: CommandRun;
  failedFirst: boolean;
  /** The run that failed last before the story's current state (for "X failed, then Y passed"). */
  failedRun: CommandRun | null;
  last: CommandRun;
}

const STORY_KINDS = new Set([
  "test",
  "lint",
  "typecheck",
  "build",
  "format",
  "migrate",
  "generate",
  "install",
  "release",
]);

/** One story per check (a later run of the same check continues it, see sameCheck). */
function checkStories(runs: readonly CommandRun[]): CheckStory[] {
  const stories: CheckStory[] = [];
  for (const r of runs) {
    if (r.outcome === "rejected" || r.outcome === "unknown") continue;
    if (!STORY_KINDS.has(r.kind)) continue;
    const prev = stories.find((s) => sameCheck(s.first, r));
    if (!prev) {
      stories.push({ first: r, failedFirst: false, failedRun: null, last: r });
      continue;
    }
    if (prev.last.outcome === "fail") {
      prev.failedFirst = true;
      prev.failedRun = prev.last;
    }
    prev.last = r;
  }
  return stories;
}

function describeChecks(stories: readonly CheckStory[]): string | null {
  if (stories.length === 0) return null;
  const parts = stories.slice(0, 4).map((s) => {
    const end = s.last.outcome === "pass" ? "passed" : "failed";
    const label = clip(checkLabel(s.last), 50);
    if (!s.failedFirst || end !== "passed") return `\`${label}\` ${end}`;
    const failed = clip(checkLabel(s.failedRun ?? s.first), 50);
    return failed === label ? `\`${label}\` failed, then passed` : `\`${failed}\` failed, then \`${label}\` passed`;
  });
  return `Checks: ${parts.join("; ")}.`;
}

function outcomeOf(
  stories: readonly CheckStory[],
  commits: number,
  changes: number,
  rejected: number,
  events: readonly EngineEvent[],
): string {
  const parts: string[] = [];
  const failing = stories.filter((s) => s.last.outcome === "fail");
  if (stories.length > 0) {
    if (failing.length > 0) parts.push(`${failing.map((s) => s.last.kind).join("/")} failing (unresolved)`);
    else if (stories.some((s) => s.failedFirst)) parts.push("fixed: checks green");
    else parts.push(stories.some((s) => s.last.kind === "test") ? "tests green" : "checks green");
  }
  if (commits > 0) parts.push("committed");
  if (parts.length === 0 && changes > 0) parts.push("changes made, no checks run");
  if (rejected > 0) parts.push("user refused a step");
  const errors = events.filter((e) => e.type === "error" && !e.rejected).length;
  if (parts.length === 0)
    parts.push(errors > 0 ? "errors, nothing changed" : changes === 0 ? "discussion/exploration" : "");
  return parts.filter(Boolean).join(", ");
}

function fileList(paths: readonly string[], max: number): string {
  const shown = paths.slice(0, max).map((p) => `\`${p}\``);
  return `${shown.join(", ")}${paths.length > max ? ` and ${paths.length - max} more` : ""}`;
}

function lastAssistantResult(events: readonly EngineEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type !== "assistant_response") continue;
    const t = e.text
      .replace(/```[\s\S]*?```/g, " ")
      .replace(/[#*_>]+/g, " ")
      .trim();
    if (t.length < 20 || /^no response requested/i.test(t)) continue;
    return clip(t, 220);
  }
  return null;
}

/** Join sentences while the summary stays within the token ceiling; stop once past the floor. */
function assemble(required: string[], extras: string[]): string {
  let text = "";
  const push = (s: string): boolean => {
    const next = text ? `${text} ${s}` : s;
    if (estimateTokens(next) > SUMMARY_MAX_TOKENS) {
      const room = SUMMARY_MAX_TOKENS - estimateTokens(text) - 2;
      if (room > 12) text = text ? `${text} ${clipToTokens(s, room)}` : clipToTokens(s, room);
      return false;
    }
    text = next;
    return true;
  };
  for (const s of required) if (!push(s)) return text;
  for (const s of extras) {
    if (estimateTokens(text) >= SUMMARY_MIN_TOKENS) break;
    if (!push(s)) break;
  }
  return text;
}

function clipToTokens(s: string, tokens: number): string {
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTokens(clip(s, mid)) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return clip(s, Math.max(1, lo));
}

/** The prompt a subagent was given (the first "user" record of a sidechain), for episodes made only of subagent work. */
function subagentTask(events: readonly EngineEvent[]): string | null {
  for (const e of events) {
    if (e.type !== "user_message" || !e.sidechain) continue;
    const t = cleanUserText(e.text);
    if (t) return t;
  }
  return null;
}

/** Summary, outcome and touched paths of an episode, from its events alone. */
export function offlineDigest(all: readonly EngineEvent[]): EpisodeDigest {
  const events = all;
  const msgs = userMessages(events);
  const changes = appliedChanges(events);
  const runs = commandRuns(events);
  const stories = checkStories(runs);
  const commits = events.filter((e) => e.type === "git_commit");
  const rejected = rejectedCalls(events).length;
  const changed = [...new Set(changes.flatMap((e) => e.filePaths))];
  const touched = [...new Set([...changed, ...events.flatMap((e) => e.filePaths)])].filter((p) => !p.startsWith("/"));
  const outcome = outcomeOf(stories, commits.length, changes.length, rejected, events);

  const required: string[] = [];
  const earlier = events.filter((e) => e.type === "session_summary" && e.text.trim().length > 0);
  if (msgs[0]) required.push(`Goal: "${clip(msgs[0].text, 170)}"`);
  else if (subagentTask(events)) required.push(`Subagent task: "${clip(subagentTask(events)!, 170)}"`);
  else if (earlier.length > 0)
    required.push(
      `Earlier context: ${earlier
        .slice(0, 4)
        .map((e) => `"${clip(e.text, 80)}"`)
        .join("; ")}.`,
    );
  else if (commits[0])
    required.push(
      `Git: ${commits.length} commit${commits.length === 1 ? "" : "s"}, first "${clip(commits[0].content.commit?.message.split("\n")[0] ?? "", 80)}".`,
    );
  if (changed.length > 0) required.push(`Changed ${fileList(changed, 4)}.`);
  const checks = describeChecks(stories);
  if (checks) required.push(checks);
  if (outcome) required.push(`Outcome: ${outcome}.`);

  const extras: string[] = [];
  if (msgs.length > 1)
    extras.push(
      `Then asked: ${msgs
        .slice(1, 3)
        .map((m) => `"${clip(m.text, 90)}"`)
        .join("; ")}.`,
    );
  const result = lastAssistantResult(events);
  if (result) extras.push(`Result: ${result}`);
  const reads = [...new Set(events.filter((e) => e.type === "tool_call").flatMap((e) => e.filePaths))].filter(
    (p) => !changed.includes(p) && !p.startsWith("/"),
  );
  if (reads.length > 0) extras.push(`Read ${fileList(reads, 3)}.`);
  const other = runs
    .filter((r) => r.outcome !== "rejected" && (r.kind === "other" || r.kind === "dev" || r.kind === "git"))
    .slice(0, 2);
  if (other.length > 0) extras.push(`Ran ${other.map((r) => `\`${clip(r.ev.command, 50)}\``).join(", ")}.`);
  if (required.length === 0) required.push(`${events.length} events from ${all[0]?.source ?? "a session"}.`);
  return { summary: assemble(required, extras), outcome, file_paths: touched.slice(0, 50) };
}
