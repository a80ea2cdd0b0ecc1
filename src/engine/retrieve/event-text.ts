/**
 * Event text for people: one line per stored event (evidence quotes in `sqrl ui`).
 */
import type { EventDTO } from "../../shared/event.ts";

/** One line of an event for people (evidence quotes in `sqrl ui`): the text, the command and exit code, or the diff summary. */
export function eventText(e: Pick<EventDTO, "event_type" | "content_json">, max = 240): string {
  let c: Record<string, unknown> = {};
  try {
    c = JSON.parse(e.content_json) as Record<string, unknown>;
  } catch {
    c = {};
  }
  const pick = (k: string) => (typeof c[k] === "string" ? (c[k] as string) : "");
  const raw =
    (e.event_type === "command_run" || e.event_type === "test_run") && pick("command")
      ? `$ ${pick("command")} (exit ${String(c.exit_code ?? "?")})`
      : pick("text") || pick("diff_summary") || pick("command") || pick("tool") || pick("output");
  const one = raw.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
