/**
 * Markdown pieces shared by the read endpoints: one list line per memory, grouped by kind, with a
 * relative time. Short on purpose — every character here is a token the model pays for.
 */
import type { MemoryType } from "../../../shared/api.ts";
import { relativeTime } from "../../../shared/time.ts";

/** Group headings by memory type, in the order groups are shown (what can go wrong first). */
export const TYPE_HEADINGS: Record<MemoryType, string> = {
  pitfall: "### Pitfalls",
  user_style: "### Your style",
  project_fact: "### Project facts",
  recipe: "### Recipes",
};

/** What a type is called in reasons. */
export const TYPE_NOUN: Record<MemoryType, string> = {
  pitfall: "known pitfall",
  user_style: "your style preference",
  project_fact: "project fact",
  recipe: "recipe",
};

/** A list item: continuation lines indented, surrounding blank space removed. */
export function listItem(text: string): string {
  const lines = text
    .trim()
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l, i, all) => l.length > 0 || (i > 0 && all[i - 1]!.length > 0));
  return `- ${lines.map((l, i) => (i === 0 ? l : `  ${l}`)).join("\n")}`;
}

/**
 * An episode's summary followed by its outcome, stated once: the offline summaries already end
 * with "Outcome: …", so it is appended only when the summary does not say it.
 */
export function summaryWithOutcome(summary: string, outcome: string): string {
  const s = summary.trim();
  const o = outcome.trim();
  if (!o || statesOutcome(s, o)) return s;
  return `${s.replace(/\.?$/, ".")} Outcome: ${o}.`;
}

/** Does the summary already say "Outcome: <outcome>"? */
export function statesOutcome(summary: string, outcome: string): boolean {
  return summary.toLowerCase().includes(`outcome: ${outcome.trim().toLowerCase()}`);
}

/** "src/a.ts, src/b.ts +2" */
export function shortPaths(paths: readonly string[], max = 2): string {
  if (paths.length === 0) return "";
  const head = paths.slice(0, max).join(", ");
  return paths.length > max ? `${head} +${paths.length - max}` : head;
}

export interface LineSource {
  content: string;
  file_paths?: readonly string[];
  updated_at: string;
}

/** `- <content> (<paths> · 3 days ago)` */
export function memoryLine(item: LineSource, nowMs: number, opts: { paths?: boolean } = {}): string {
  const notes: string[] = [];
  if (opts.paths !== false && item.file_paths && item.file_paths.length > 0) notes.push(shortPaths(item.file_paths));
  notes.push(relativeTime(item.updated_at, nowMs));
  return listItem(`${item.content.trim()} (${notes.join(" · ")})`);
}

/** Collapse whitespace to single spaces (summaries shown on one line). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
