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
}

const DEFAULT_DEEP: DeepLimits = {
  maxString: DEFAULT_RAW_STRING_CHARS,
  maxTotal: DEFAULT_RAW_TOTAL_CHARS,
  maxArray: 200,
};

/** Cut every string of a JSON-like value, within a total budget (the raw layer of an event). */
export function truncateDeep<T>(value: T, limits: Partial<DeepLimits> = {}): T {
  const lim = { ...DEFAULT_DEEP, ...limits };
  let left = lim.maxTotal;
  const cutString = (s: string): string => {
    const allowed = Math.max(64, Math.min(lim.maxString, left));
    const out = s.length > allowed ? truncateText(s, allowed) : s;
    left = Math.max(0, left - Math.min(out.length, s.length));
    return out;
  };
  return mapStrings(value, cutString, { maxArray: lim.maxArray }) as T;
}

export interface MapStringsOptions {
  /** Longest array kept; the rest becomes one marker element. */
  maxArray: number;
  /** Sees every key of every object with its value, before the value is mapped. */
  onKey?: (key: string, value: unknown) => void;
}

/** A copy of a JSON-like value with every string passed through `str` and long arrays capped (marked). */
export function mapStrings(value: unknown, str: (s: string) => string, opts: MapStringsOptions): unknown {
  if (typeof value === "string") return str(value);
  if (Array.isArray(value)) {
    const n = Math.min(value.length, opts.maxArray);
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = mapStrings(value[i], str, opts);
    if (value.length > n) out.push(`…[${value.length - n} more items truncated]…`);
    return out;
  }
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k in src) {
      if (!Object.hasOwn(src, k)) continue;
      const v = src[k];
      opts.onKey?.(k, v);
      out[k] = typeof v === "string" || (v !== null && typeof v === "object") ? mapStrings(v, str, opts) : v;
    }
    return out;
  }
  return value;
}
