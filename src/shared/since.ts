/**
 * "Since when" as people and models write it, for the timeline: an ISO date or time
 * (`2025-11-24`, `2025-11-24T10:00:00Z`), `today`, `yesterday`, `N <unit>s ago`, `last|past N <unit>s`,
 * `last <unit>`, or a short span (`3d`, `12h`, `2w`). Anything else is refused with the forms that
 * work: a timeline must never answer "nothing recorded" because it misread the question.
 */
import { UsageError } from "./errors.ts";

const UNIT_MS: Record<string, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
};
const SHORT_UNIT: Record<string, string> = {
  m: "minute",
  min: "minute",
  h: "hour",
  d: "day",
  w: "week",
  mo: "month",
  y: "year",
};
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

export const SINCE_FORMS =
  '"2025-11-24", "2025-11-24T10:00:00Z", "today", "yesterday", "2 days ago", "last week", "3d"';

function startOfLocalDay(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

function unitOf(word: string): string | undefined {
  const w = word.toLowerCase().replace(/s$/, "");
  return UNIT_MS[w] ? w : SHORT_UNIT[w];
}

/** The instant `text` names, as an ISO UTC timestamp; a UsageError when it names none. */
export function parseSince(text: string, nowMs: number = Date.now()): string {
  const t = text.trim().toLowerCase();
  const iso = (ms: number) => new Date(ms).toISOString();
  if (ISO.test(text.trim())) {
    const ms = Date.parse(text.trim().replace(" ", "T"));
    if (Number.isFinite(ms)) return iso(ms);
  }
  if (t === "today") return iso(startOfLocalDay(nowMs));
  if (t === "yesterday") return iso(startOfLocalDay(startOfLocalDay(nowMs) - 1));
  let m =
    /^(\d+)\s*([a-z]+)\s+ago$/.exec(t) ?? /^(?:last|past)\s+(\d+)\s*([a-z]+)$/.exec(t) ?? /^(\d+)\s*([a-z]+)$/.exec(t);
  if (m) {
    const unit = unitOf(m[2]!);
    if (unit) return iso(nowMs - Number(m[1]) * UNIT_MS[unit]!);
  }
  m = /^(?:last|past|a|one)\s+([a-z]+)(?:\s+ago)?$/.exec(t);
  if (m) {
    const unit = unitOf(m[1]!);
    if (unit) return iso(nowMs - UNIT_MS[unit]!);
  }
  throw new UsageError(
    `since: "${text.length > 40 ? `${text.slice(0, 40)}…` : text}" is not a time sqrl understands. Use ${SINCE_FORMS}.`,
    "bad_since",
  );
}
