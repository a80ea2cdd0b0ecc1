/**
 * Episode importance in [0, 1]: how much a later session would gain from this one. Work that changed
 * code, fixed a failing check, landed a commit or carried a user correction weighs more than reading
 * around; size helps a little. Deterministic (an LLM may refine it with its summary).
 */
import { commandRuns } from "../events/commands.ts";
import { appliedChanges, rejectedCalls, userMessages, type EngineEvent } from "../events/event-view.ts";

export function episodeImportance(all: readonly EngineEvent[]): number {
  const events = all;
  const changes = appliedChanges(events).length;
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected");
  const failedThenPassed = runs.some(
    (r, i) => r.outcome === "fail" && runs.slice(i + 1).some((s) => s.kind === r.kind && s.outcome === "pass"),
  );
  const commits = events.filter((e) => e.type === "git_commit").length;
  const corrections = rejectedCalls(events).length;
  const directives = userMessages(events).filter((m) =>
    /\b(?:always|never|don'?t|do not|prefer|instead of|stop)\b/i.test(m.text),
  ).length;
  let score = 0.15;
  if (changes > 0) score += 0.15 + 0.1 * Math.min(1, changes / 6);
  if (failedThenPassed) score += 0.2;
  if (commits > 0) score += 0.1;
  if (corrections + directives > 0) score += 0.1 + 0.05 * Math.min(2, corrections + directives - 1);
  if (runs.some((r) => r.kind === "test" && r.outcome === "pass")) score += 0.05;
  score += 0.1 * Math.min(1, events.length / 60);
  return Math.round(Math.min(1, score) * 100) / 100;
}
