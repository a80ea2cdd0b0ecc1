/** ISO-8601 UTC timestamp of now (or of a given epoch ms). */
export function nowIso(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}

/** Parse an ISO timestamp to epoch ms; NaN-safe (returns 0 for unparsable input). */
export function isoToMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : 0;
}

/** "just now", "5 minutes ago", "3 days ago", "2 months ago". */
export function relativeTime(iso: string, nowMs: number = Date.now()): string {
  const diff = Math.max(0, nowMs - isoToMs(iso));
  const s = Math.round(diff / 1000);
  if (s < 60) return "just now";
  const units: Array<[number, string]> = [
    [60 * 60 * 24 * 365, "year"],
    [60 * 60 * 24 * 30, "month"],
    [60 * 60 * 24 * 7, "week"],
    [60 * 60 * 24, "day"],
    [60 * 60, "hour"],
    [60, "minute"],
  ];
  for (const [size, name] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return `${n} ${name}${n === 1 ? "" : "s"} ago`;
    }
  }
  return "just now";
}

/** Today's date in UTC as YYYY-MM-DD (the key of daily LLM usage). */
export function utcDay(ms: number = Date.now()): string {
  return new Date(ms).toISOString().slice(0, 10);
}
