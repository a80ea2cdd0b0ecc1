/**
 * The cheap offline pre-check before an LLM extraction call (issue 25): an episode is worth the model
 * only when it holds something a teammate would learn from — a statement of the user's, a failure (a
 * command or test that failed, a tool error, a refused call), or a decision (a question the user
 * answered, a plan put to them). An episode of reads, edits and green runs alone (the rest of a task
 * after a pause, a subagent's search) goes to the offline rules, which still take its recipes and
 * habits. `llm.precheck = false` sends every episode.
 */
import { commandOutcome } from "../../events/commands.ts";
import { userMessages, type EngineEvent } from "../../events/event-view.ts";

/** Tools whose call or answer is the user deciding something. */
const DECISION_TOOLS = new Set(["AskUserQuestion", "ExitPlanMode", "request_user_input"]);

export type PrecheckSignal = "user" | "failure" | "decision";

/** What makes the episode worth a call, or [] when nothing does. */
export function precheckSignals(events: readonly EngineEvent[]): PrecheckSignal[] {
  const out = new Set<PrecheckSignal>();
  if (userMessages(events).length > 0) out.add("user");
  for (const e of events) {
    if (isFailure(e)) out.add("failure");
    if ((e.type === "tool_call" || e.type === "tool_result") && DECISION_TOOLS.has(e.tool)) out.add("decision");
  }
  return [...out];
}

/** A failed command or test, a tool error, a refused call, or an error event. */
export function isFailure(e: EngineEvent): boolean {
  if (e.type === "error") return true;
  if (e.type === "tool_result") return e.isError;
  if (e.type === "command_run" || e.type === "test_run") {
    const o = commandOutcome(e);
    return o === "fail" || o === "rejected";
  }
  return false;
}

/** Whether the episode goes to the model (true) or to the offline rules alone (false). */
export function worthTheModel(events: readonly EngineEvent[]): boolean {
  return precheckSignals(events).length > 0;
}
