/**
 * Bounded storage of tool outputs and raw records. A cut string keeps its head (and a little of its
 * tail, where errors and test summaries live) around a marker that says how much was left out.
 */

export const DEFAULT_OUTPUT_CHARS = 4000;
export const DEFAULT_RAW_STRING_CHARS = 1000;
export const DEFAULT_RAW_TOTAL_CHARS = 8000;

export function truncationMarker(omitted: number): string {
  return `…[truncated ${omitted} chars]…`;
}

/** Cut `s` to about `max` characters: 3/4 head, 1/4 tail, marker between. */
export function truncateText(s: string, max: number = DEFAULT_OUTPUT_CHARS): string {
  if (s.length <= max) return s;
  const tail = Math.floor(max / 4);
  const head = max - tail;
  return `${s.slice(0, head)}${truncationMarker(s.length - head - tail)}${s.slice(s.length - tail)}`;
}

export interface DeepLimits {
  /** Longest single string kept whole. */
  maxString: number;
  /** Total characters of strings kept across the whole value; later strings shrink to a marker. */
  maxTotal: number;
  /** Longest array kept; the rest is replaced by one marker element. */
  maxArray: number;
  /**
   * Applied to every string after a first cut to `maxString + slack` and before the final cut
   * (redaction: a secret at the cut point is still seen whole, nothing past the cut is kept).
   */
  transform?: (s: string) => string;
  slack: number;
  /** Cut to `maxString + slack` before `transform` (default); false when `transform` bounds the work itself. */
  precut: boolean;
}

const DEFAULT_DEEP: DeepLimits = { maxString: DEFAULT_RAW_STRING_CHARS, maxTotal: DEFAULT_RAW_TOTAL_CHARS, maxArray: 200, slack: 256, precut: true };

/** Cut every string of a JSON-like value, within a total budget (the raw layer of an event). */
export function truncateDeep<T>(value: T, limits: Partial<DeepLimits> = {}): T {
  const lim = { ...DEFAULT_DEEP, ...limits };
  const budget = { left: lim.maxTotal };
  return cut(value, lim, budget) as T;
}

function cut(value: unknown, lim: DeepLimits, budget: { left: number }): unknown {
  if (typeof value === "string") {
    const allowed = Math.max(64, Math.min(lim.maxString, budget.left));
    let s = value;
    if (lim.transform) s = lim.transform(lim.precut && s.length > allowed + lim.slack ? truncateText(s, allowed + lim.slack) : s);
    const out = s.length > allowed ? truncateText(s, allowed) : s;
    budget.left = Math.max(0, budget.left - Math.min(out.length, value.length));
    return out;
  }
  if (Array.isArray(value)) {
    const kept = value.slice(0, lim.maxArray).map((v) => cut(v, lim, budget));
    if (value.length > lim.maxArray) kept.push(`…[${value.length - lim.maxArray} more items truncated]…`);
    return kept;
  }
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k in src) {
      if (!Object.hasOwn(src, k)) continue;
      const v = src[k];
      out[k] = typeof v === "string" || (v !== null && typeof v === "object") ? cut(v, lim, budget) : v;
    }
    return out;
  }
  return value;
}
