/**
 * The one token counter behind every budget. Three counters, picked by `tokens.counter` in config:
 * - `accurate` (default): a calibrated estimator. It splits text exactly like the o200k BPE
 *   pre-tokenizer does (the regex below), then prices each piece from a table fitted against the real
 *   o200k tokenizer on the fixture transcripts (`bun run bench tokens fit`). BPE never merges across
 *   pieces, so only the per-piece price is estimated. Within a few % of o200k on code, prose, logs and
 *   JSON (see docs/benchmarks.md), microseconds per call, no start-up cost.
 * - `o200k`: the real tokenizer of `gpt-tokenizer`, exact, but loading its tables takes ~0.5 s and
 *   ~70 MB, so it is loaded lazily on first use; if it fails to load sqrl falls back to `accurate`
 *   and says so once in the log.
 * - `chars4`: the seed's ceil(chars / 4) (undercounts logs and JSON by 40–48 %).
 */
import { log } from "./log.ts";

export type CounterName = "accurate" | "o200k" | "chars4";

export interface TokenCounter {
  /** The counter actually in use (after any fallback). */
  readonly name: CounterName;
  count(text: string): number;
  /** The count when it is at most `limit`; otherwise some number above `limit` (stops early on big texts). */
  countUpTo(text: string, limit: number): number;
}

/** The o200k pre-tokenizer split (same pattern as tiktoken / gpt-tokenizer). */
const SPLIT =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** Piece classes of the price table. */
export const PIECE_CLASSES = [
  "lower",
  "cap",
  "upper",
  "sp_lower",
  "sp_cap",
  "sp_upper",
  "p_word",
  "slash_word",
  "dash_word",
  "esc_word",
  "odd",
  "sp_odd",
  "nonascii",
  "punct",
  "sp_punct",
  "space",
  "newline",
  "digits",
] as const;
type PieceClass = (typeof PIECE_CLASSES)[number];
const MAX_LEN = 24;

/**
 * Letters that do not look like a word (ids, hashes, base64): several capitals before lower case,
 * no vowel in a longer run, or four consonants in a row. BPE splits these much more finely.
 */
function oddWord(word: string): boolean {
  if (word.length < 3 || word === word.toUpperCase()) return false;
  if (/^[A-Z]{2,}[a-z]/.test(word) && word.length <= 12) return true;
  const w = word.toLowerCase();
  if (!/[aeiouy]/.test(w)) return true;
  return /[bcdfghjklmnpqrstvwxz]{4,}/.test(w) && !/(tch|str|ght|nst|rst|ngth|mpl|ndl|rtl|ckl)/.test(w);
}

/** Class and length (in UTF-16 units, capped) of one pre-tokenizer piece. */
export function classifyPiece(piece: string): [PieceClass, number] {
  const len = Math.min(piece.length, MAX_LEN);
  const c0 = piece.charCodeAt(0);
  if (c0 >= 48 && c0 <= 57) return ["digits", len];
  let ascii = true;
  let allSpace = true;
  let newline = false;
  for (let i = 0; i < piece.length; i++) {
    const c = piece.charCodeAt(i);
    if (c > 127) ascii = false;
    if (c === 10 || c === 13) newline = true;
    else if (c !== 32 && c !== 9 && c !== 11 && c !== 12) allSpace = false;
  }
  if (allSpace && ascii) return [newline ? "newline" : "space", len];
  if (!ascii) return /^\s+$/.test(piece) ? [/[\r\n]/.test(piece) ? "newline" : "space", len] : ["nonascii", len];
  const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const leadLen = isLetter(c0) ? 0 : 1;
  if (leadLen === 1 && !isLetter(piece.charCodeAt(1))) return [c0 === 32 ? "sp_punct" : "punct", len];
  let end = leadLen;
  while (end < piece.length && isLetter(piece.charCodeAt(end))) end++;
  const word = piece.slice(leadLen, end);
  if (oddWord(word)) return [c0 === 32 ? "sp_odd" : "odd", len];
  const lower = word === word.toLowerCase();
  const upper = !lower && word.length > 1 && word === word.toUpperCase();
  const kase = lower ? "lower" : upper ? "upper" : "cap";
  if (leadLen === 0) return [kase, len];
  if (c0 === 32) return [`sp_${kase}` as PieceClass, len];
  // The lead character matters: `/path` and `-flag` split more than `.method`, `_name` or `(arg`.
  return [c0 === 47 ? "slash_word" : c0 === 45 ? "dash_word" : c0 === 92 ? "esc_word" : "p_word", len];
}

/**
 * Mean o200k tokens of a piece by class and length 1..24 (index 0 unused; beyond 24 the last step
 * is extrapolated). Fitted with `bun run bench tokens fit` on the fixture transcripts.
 */
// prettier-ignore
const PRICE: Record<PieceClass, number[]> = {
  lower: [
    0, 1, 1, 1.16, 1.05, 1.14, 1.16, 1.12, 1.16, 1.32, 1.93, 1.2, 1.47, 2.65, 3.2, 3.8, 4.05, 4.3, 4.55, 4.8, 5.05, 5.3,
    5.55, 5.8, 6.05,
  ],
  cap: [
    0, 1, 1.2, 1.29, 1.13, 1.09, 1.11, 1.15, 1.36, 1.62, 1.09, 1.35, 1.08, 2.56, 6, 6.25, 8.17, 8.42, 8.67, 8.92, 9.17,
    10, 11.67, 11.67, 11.92,
  ],
  upper: [
    0, 1, 1.06, 1.87, 1.42, 2.42, 2.29, 3.92, 2.79, 2.91, 3.16, 1.92, 5.22, 6.4, 6.65, 6.9, 7.15, 8, 8.25, 8.5, 8.75, 9,
    9.25, 11.5, 11.75,
  ],
  sp_lower: [
    0, 1, 1, 1, 1, 1.01, 1.01, 1.03, 1.02, 1.11, 1.07, 1.07, 1.13, 1.13, 1.1, 1.21, 1.25, 2, 2.25, 2.5, 2.75, 3, 3.25,
    3.5, 3.75,
  ],
  sp_cap: [
    0, 1, 1, 1, 1, 1.02, 1.05, 1.07, 1.11, 1.31, 1.26, 1.17, 1.31, 1.39, 1.32, 1.31, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5,
    3.75, 4,
  ],
  sp_upper: [
    0, 1, 1.25, 1, 1.03, 1.07, 1.35, 1.15, 1.75, 2.02, 1.5, 2.22, 2.47, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5, 5.75, 6, 6.25,
    6.5, 6.75,
  ],
  p_word: [
    0, 1, 1.24, 1.11, 1.13, 1.3, 1.27, 1.47, 1.19, 1.31, 1.86, 1.66, 1.68, 2.17, 2.12, 2, 5, 5.25, 5.5, 5.75, 6, 6.25,
    6.5, 6.75, 7,
  ],
  slash_word: [
    0, 1, 1, 1.57, 1.86, 1.57, 1.77, 2.83, 2.63, 2.55, 2.24, 2.43, 1.42, 2.51, 4.77, 5.02, 5.27, 5.52, 5.77, 6.02, 6.27,
    6.52, 6.77, 7.02, 7.27,
  ],
  dash_word: [
    0, 1, 1, 1.78, 1.84, 1.51, 1.45, 1.51, 1.32, 2.05, 2.68, 1.66, 2.6, 2.36, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4,
    4.25, 4.5,
  ],
  esc_word: [
    0, 1, 1, 1.25, 2, 2.1, 2.22, 2.16, 2.15, 2.38, 2.76, 2.8, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5,
    5.75, 6,
  ],
  odd: [
    0, 1, 1.25, 1.7, 1.87, 2.71, 3.5, 3.81, 4.2, 4.34, 1.91, 2.39, 2.42, 6.07, 4.1, 7.89, 8.14, 8.39, 8.64, 8.89, 10.5,
    10.75, 11, 11.25, 11.5,
  ],
  sp_odd: [
    0, 1, 1.25, 1.5, 1.05, 1.75, 1, 1.28, 1.69, 1.47, 1.79, 1, 1.33, 2.58, 1, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3,
    3.25,
  ],
  nonascii: [
    0, 1, 1.61, 2.21, 3.09, 3.55, 4.3, 4.69, 6.25, 6.78, 5.36, 9.29, 9.35, 10.11, 10.31, 11.12, 12.41, 12.5, 14.43,
    14.4, 15.73, 15.98, 12.84, 20, 10.58,
  ],
  punct: [
    0, 1, 1, 1.13, 1.39, 1.74, 2.25, 3.39, 3.43, 4.01, 4.78, 2.34, 2.59, 5.18, 5.43, 7, 5, 5.25, 5.5, 5.75, 6, 5, 5.25,
    5.5, 5.75,
  ],
  sp_punct: [
    0, 1, 1, 1.02, 1.36, 1.36, 2.15, 2.06, 2.62, 3.08, 3.33, 5, 5.29, 4, 4.25, 4.04, 4.29, 4.54, 4.79, 2, 2.25, 2, 2,
    3.62, 4,
  ],
  space: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1.25, 1.5],
  newline: [
    0, 1, 1, 1, 1, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5, 5.75,
  ],
  digits: [
    0, 1, 1, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 4.75, 5, 5.25, 5.5, 5.75, 6,
    6.25,
  ],
};

/** Prices of pieces already seen (pieces repeat: words, indentation, punctuation). */
const priceMemo = new Map<string, number>();

function piecePrice(piece: string): number {
  let price = priceMemo.get(piece);
  if (price === undefined) {
    price = computePrice(piece);
    if (priceMemo.size >= 50_000) priceMemo.clear();
    priceMemo.set(piece, price);
  }
  return price;
}

function computePrice(piece: string): number {
  const [cls, len] = classifyPiece(piece);
  const row = PRICE[cls] ?? PRICE.lower;
  const base = row[len] ?? 1;
  if (piece.length <= MAX_LEN) return base;
  const step = Math.max(0.05, base - (row[MAX_LEN - 1] ?? base));
  return base + step * (piece.length - MAX_LEN);
}

/** The calibrated estimate (the `accurate` counter). */
export function estimateTokens(text: string): number {
  return estimateUpTo(text, Number.POSITIVE_INFINITY);
}

/** The estimate, stopping as soon as it passes `limit`. */
export function estimateUpTo(text: string, limit: number): number {
  if (text.length === 0) return 0;
  let sum = 0;
  SPLIT.lastIndex = 0;
  for (let m = SPLIT.exec(text); m !== null; m = SPLIT.exec(text)) {
    sum += piecePrice(m[0]);
    if (sum > limit) break;
  }
  SPLIT.lastIndex = 0;
  return Math.ceil(sum);
}

/** The seed's counter: ceil(chars / 4). */
export function chars4Tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Fit the price table: mean real tokens per (class, length) over the pieces of each group of texts,
 * every group (text kind) weighted equally so that the biggest kind does not set every price.
 */
export function fitPieceTable(
  groups: ReadonlyArray<readonly string[]>,
  encode: (s: string) => number[],
): Record<PieceClass, number[]> {
  const sum: Record<string, number[]> = {};
  const n: Record<string, number[]> = {};
  for (const c of PIECE_CLASSES) {
    sum[c] = Array(MAX_LEN + 1).fill(0);
    n[c] = Array(MAX_LEN + 1).fill(0);
  }
  for (const texts of groups) {
    const weight =
      1 /
      Math.max(
        1,
        texts.reduce((a, t) => a + t.length, 0),
      );
    for (const t of texts) {
      for (const m of t.matchAll(SPLIT)) {
        const piece = m[0];
        const [cls, len] = classifyPiece(piece);
        if (piece.length > MAX_LEN) continue;
        sum[cls]![len]! += encode(piece).length * weight;
        n[cls]![len]! += weight;
      }
    }
  }
  const minWeight = 5 / groups.reduce((a, g) => a + g.reduce((b, t) => b + t.length, 0), 0);
  const out = {} as Record<PieceClass, number[]>;
  for (const c of PIECE_CLASSES) {
    const row: number[] = [0];
    for (let len = 1; len <= MAX_LEN; len++) {
      const count = n[c]![len]!;
      // Sparse cells borrow from the previous length.
      const mean = count >= minWeight ? sum[c]![len]! / count : (row[len - 1] ?? 1) + (len > 1 ? 0.25 : 1);
      row.push(Math.round(mean * 100) / 100);
    }
    out[c] = row;
  }
  return out;
}

// ---- selection and lazy loading ---------------------------------------------------------------

const ESTIMATOR: TokenCounter = { name: "accurate", count: estimateTokens, countUpTo: estimateUpTo };
const CHARS4: TokenCounter = { name: "chars4", count: chars4Tokens, countUpTo: (s) => chars4Tokens(s) };

let o200k: Promise<TokenCounter> | undefined;
let fallbackLogged = false;

function loadO200k(): Promise<TokenCounter> {
  o200k ??= import("gpt-tokenizer/encoding/o200k_base")
    .then(
      (m): TokenCounter => ({
        name: "o200k",
        count: (s: string) => (s.length === 0 ? 0 : m.countTokens(s)),
        countUpTo: (s: string, limit: number) => {
          if (s.length === 0) return 0;
          const within = m.isWithinTokenLimit(s, Math.max(0, Math.floor(limit)));
          return within === false ? Math.floor(limit) + 1 : within;
        },
      }),
    )
    .catch((err: unknown): TokenCounter => {
      if (!fallbackLogged) {
        fallbackLogged = true;
        log.warn(
          `o200k tokenizer failed to load (${err instanceof Error ? err.message : String(err)}); counting tokens with the calibrated estimator instead.`,
        );
      }
      return ESTIMATOR;
    });
  return o200k;
}

/** The counter named in config (loads the o200k tables on first use when asked for). */
export async function loadTokenCounter(name: CounterName = "accurate"): Promise<TokenCounter> {
  if (name === "chars4") return CHARS4;
  if (name === "o200k") return loadO200k();
  return ESTIMATOR;
}

/** A counter usable synchronously: `o200k` only once loaded, else the estimator. */
export function tokenCounterSync(name: CounterName = "accurate"): TokenCounter {
  return name === "chars4" ? CHARS4 : ESTIMATOR;
}

/** The default counter (the calibrated estimator). */
export const defaultCounter: TokenCounter = ESTIMATOR;

/**
 * Share of the budget kept free when counting with the `accurate` estimator: on the real transcripts
 * its rendered answers undercount o200k by up to 3.8 % (recall of an episode full of Go and shell
 * output); 6 % holds that with room. The exact counters (o200k) need none; chars4 is a rough
 * counter by choice and is not corrected.
 */
export const ESTIMATOR_MARGIN = 0.06;

/** The count the packer fills to for a budget: the budget minus the estimator's safety margin. */
export function packLimit(budget: number, counter: Pick<TokenCounter, "name">): number {
  const b = Math.max(0, Math.floor(budget));
  return counter.name === "accurate" ? b - Math.ceil(b * ESTIMATOR_MARGIN) : b;
}
