/**
 * What an event may keep before it is stored: every string cut to its limit, every secret
 * redacted (redact.ts), the raw source record bounded (truncate.ts). Nothing leaves here unsanitized.
 */
import type { EventContent } from "../event.ts";
import { isSecretKey, redactDeep, redactText, secretFlags } from "./redact.ts";
import {
  DEFAULT_OUTPUT_CHARS,
  DEFAULT_RAW_STRING_CHARS,
  DEFAULT_RAW_TOTAL_CHARS,
  mapStrings,
  truncateDeep,
  truncateText,
} from "./truncate.ts";

/** Longest user/assistant text kept whole (pasted logs are cut like tool output). */
export const MAX_TEXT_CHARS = 32_000;
/** Extra characters kept before redaction so a secret at a cut point is still recognised whole. */
const REDACT_SLACK = 256;
const MAX_COMMAND_CHARS = 4000;
const MAX_INPUT_STRING = 2000;
const MAX_INPUT_TOTAL = 12_000;
/** Array items kept by the precut (marked beyond) and by the final cut. */
const PRECUT_MAX_ARRAY = 400;
const FINAL_MAX_ARRAY = 200;

/**
 * Cut, then redact, then cut to the final size: no secret is ever written, outputs stay bounded.
 * 1. every string is cut to its final limit plus some slack (a secret at a cut point stays whole);
 *    in the raw record, a long copy of a normalized field (a tool's output repeated in the result
 *    block and in toolUseResult.stdout) becomes a reference to that field;
 * 2. a cheap scan of those strings (and of secret-named keys) decides whether anything can look
 *    like a secret (most events cannot) — only then every string goes through the redactor;
 * 3. the final cut.
 *
 * Most events hold nothing that can look like a secret: `sanitizeFast` does all three steps in one
 * walk for them and hands the rare suspect event to `sanitizeCareful` (the same steps one by one).
 */
export function sanitizeContent(content: EventContent, opts: { envFile: boolean }): EventContent {
  if (opts.envFile) return sanitizeCareful(content, opts);
  const clean = new CleanStrings();
  return sanitizeFast(content, clean) ?? sanitizeCareful(content, opts, clean);
}

/**
 * Strings of this event the scan already found clean (exact contents, so a cut copy is scanned on
 * its own). An event holds many of its strings twice (a tool's input in `input` and in the raw
 * record, an answer's text in `text` and in its raw block), and the careful path redacts strings the
 * fast path already scanned. Looked up by length, then `===` (the same parsed string is one object:
 * a pointer compare), never hashed: hashing every long string cost more than the scans it saved
 * (bench file, 30,283 events: 29 M characters hashed to skip 3.7 M characters of scan).
 */
class CleanStrings {
  private readonly lengths: number[] = [];
  private readonly strings: string[] = [];

  has(v: string): boolean {
    const n = v.length;
    for (let i = 0; i < this.lengths.length; i++) if (this.lengths[i] === n && this.strings[i] === v) return true;
    return false;
  }

  add(v: string): void {
    if (this.lengths.length >= MEMO_MAX_STRINGS) return;
    this.lengths.push(v.length);
    this.strings.push(v);
  }
}

/** Shorter strings are scanned again (a scan of them costs about what a lookup does). */
const MEMO_MIN_CHARS = 64;
/** Bounds a lookup (an event with thousands of long strings falls back to scanning them). */
const MEMO_MAX_STRINGS = 64;

/** `secretFlags(v) === 0`, remembered for long strings. */
function scansClean(v: string, clean: CleanStrings): boolean {
  if (v.length < MEMO_MIN_CHARS) return secretFlags(v) === 0;
  if (clean.has(v)) return true;
  if (secretFlags(v) !== 0) return false;
  clean.add(v);
  return true;
}

/** A string too long to keep whole that holds a private key: it is redacted whole before any cut. */
function keyBeyondCut(v: string): boolean {
  return v.includes("PRIVATE KEY");
}

/** A string that a raw record repeats from a normalized field (long ones only). */
interface SameAs {
  value: string;
  ref: string;
}

function sameFields(content: EventContent): SameAs[] {
  const same: SameAs[] = [];
  for (const k of ["output", "text", "command"] as const) {
    const v = content[k];
    if (typeof v === "string" && v.length >= 200 && !same.some((x) => x.value === v))
      same.push({ value: v, ref: `[same as ${k}]` });
  }
  return same;
}

function sameRef(same: readonly SameAs[], v: string): string | undefined {
  for (const x of same) if (x.value.length === v.length && x.value === v) return x.ref;
  return undefined;
}

/** State of one fused walk (precut + scan + final cut) over `input` or `raw`. */
interface FastWalk {
  /** Precut length (final limit + slack). */
  pre: number;
  maxString: number;
  /** Characters left of the total budget. */
  left: number;
  same: readonly SameAs[];
  clean: CleanStrings;
  /** Something can look like a secret: the caller takes the careful path. */
  suspect: boolean;
}

/** Exactly what steps 1–3 give when nothing is suspect; undefined when something is. */
function sanitizeFast(content: EventContent, clean: CleanStrings): EventContent | undefined {
  const c: EventContent = { ...content };
  const pre = (v: string, max: number): string | undefined => {
    if (v.length > max && keyBeyondCut(v)) return undefined;
    const out = v.length > max ? truncateText(v, max) : v;
    return scansClean(out, clean) ? out : undefined;
  };
  if (typeof c.output === "string") {
    const v = pre(c.output, DEFAULT_OUTPUT_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.output = truncateText(v, DEFAULT_OUTPUT_CHARS);
  }
  if (typeof c.text === "string") {
    const v = pre(c.text, MAX_TEXT_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.text = truncateText(v, MAX_TEXT_CHARS);
  }
  if (typeof c.command === "string") {
    const v = pre(c.command, MAX_COMMAND_CHARS + REDACT_SLACK);
    if (v === undefined) return undefined;
    c.command = truncateText(v, MAX_COMMAND_CHARS);
  }
  if (typeof c.diff_summary === "string") {
    const v = pre(c.diff_summary, 1000);
    if (v === undefined) return undefined;
    c.diff_summary = v;
  }
  if (c.commit && !scansClean(c.commit.message, clean)) return undefined;
  if (c.input !== undefined) {
    const w: FastWalk = {
      pre: MAX_INPUT_STRING + REDACT_SLACK,
      maxString: MAX_INPUT_STRING,
      left: MAX_INPUT_TOTAL,
      same: [],
      clean,
      suspect: false,
    };
    c.input = fastCut(c.input, w);
    if (w.suspect) return undefined;
  }
  if (c.raw !== undefined) {
    const w: FastWalk = {
      pre: DEFAULT_RAW_STRING_CHARS + REDACT_SLACK,
      maxString: DEFAULT_RAW_STRING_CHARS,
      left: DEFAULT_RAW_TOTAL_CHARS,
      same: sameFields(content),
      clean,
      suspect: false,
    };
    c.raw = fastCut(c.raw, w);
    if (w.suspect) return undefined;
  }
  return c;
}

/**
 * The precut walk (mapStrings) and truncateDeep in one walk. Array items past the final limit are never visited: they
 * are dropped either way, and only what is kept can change under redaction.
 */
function fastCut(value: unknown, w: FastWalk): unknown {
  if (typeof value === "string") return fastString(value, w);
  if (Array.isArray(value)) return fastCutArray(value, w);
  if (value !== null && typeof value === "object") return fastCutObject(value as Record<string, unknown>, w);
  return value;
}

/** Copy on write: an array nothing in changes is returned as is (most of a raw record is kept whole). */
function fastCutArray(value: readonly unknown[], w: FastWalk): unknown {
  const n = Math.min(value.length, FINAL_MAX_ARRAY);
  let out: unknown[] | undefined = value.length > n ? value.slice(0, n) : undefined;
  for (let i = 0; i < n; i++) {
    const v = value[i];
    const cut = fastCut(v, w);
    if (w.suspect) return undefined;
    if (cut !== v) {
      out ??= value.slice(0, n);
      out[i] = cut;
    }
  }
  const precutLength = value.length > PRECUT_MAX_ARRAY ? PRECUT_MAX_ARRAY + 1 : value.length;
  if (out && precutLength > FINAL_MAX_ARRAY) out.push(`…[${precutLength - FINAL_MAX_ARRAY} more items truncated]…`);
  return out ?? value;
}

/** Copy on write, like fastCutArray; key order is kept. */
function fastCutObject(src: Record<string, unknown>, w: FastWalk): unknown {
  let out: Record<string, unknown> | undefined;
  for (const k in src) {
    if (!Object.hasOwn(src, k)) continue;
    const v = src[k];
    let cut = v;
    if (typeof v === "string") {
      if (isSecretKey(k)) {
        w.suspect = true;
        return undefined;
      }
      cut = fastString(v, w);
    } else if (v !== null && typeof v === "object") cut = fastCut(v, w);
    if (w.suspect) return undefined;
    if (cut !== v && !out) out = copyKeysBefore(src, k);
    if (out) out[k] = cut;
  }
  return out ?? src;
}

/** A new object with the own keys of `src` that come before `stop`. */
function copyKeysBefore(src: Record<string, unknown>, stop: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in src) {
    if (k === stop) break;
    if (Object.hasOwn(src, k)) out[k] = src[k];
  }
  return out;
}

function fastString(v: string, w: FastWalk): string {
  let p = v.length >= 200 ? sameRef(w.same, v) : undefined;
  if (p === undefined && v.length > w.pre && keyBeyondCut(v)) {
    w.suspect = true;
    return "";
  }
  if (p === undefined) {
    p = v.length > w.pre ? truncateText(v, w.pre) : v;
    if (!scansClean(p, w.clean)) {
      w.suspect = true;
      return "";
    }
  }
  const allowed = Math.max(64, Math.min(w.maxString, w.left));
  const out = p.length > allowed ? truncateText(p, allowed) : p;
  w.left = Math.max(0, w.left - Math.min(out.length, p.length));
  return out;
}

/** Steps 1–3 one by one: every string is redacted when anything in the event can look like a secret. */
export function sanitizeCareful(
  content: EventContent,
  opts: { envFile: boolean },
  clean: CleanStrings = new CleanStrings(),
): EventContent {
  const c: EventContent = { ...content };
  const same = new Map<string, string>();
  for (const x of sameFields(content)) same.set(x.value, x.ref);
  // 1. precut, noting whether any string (or any secret-named key) can hold a secret
  let suspect = opts.envFile;
  const pre = (v: string, max: number): string => {
    // a key block the cut would split (its BEGIN line cut away, its body kept): redact before cutting
    const whole = v.length > max && keyBeyondCut(v) ? redactText(v, { envFile: opts.envFile }) : v;
    const out = whole.length > max ? truncateText(whole, max) : whole;
    if (!suspect && (whole !== v || !scansClean(out, clean))) suspect = true;
    return out;
  };
  if (typeof c.output === "string") c.output = pre(c.output, DEFAULT_OUTPUT_CHARS + REDACT_SLACK);
  if (typeof c.text === "string") c.text = pre(c.text, MAX_TEXT_CHARS + REDACT_SLACK);
  if (typeof c.command === "string") c.command = pre(c.command, MAX_COMMAND_CHARS + REDACT_SLACK);
  if (typeof c.diff_summary === "string") c.diff_summary = pre(c.diff_summary, 1000);
  if (c.commit) pre(c.commit.message, c.commit.message.length);
  const onKey = (k: string, v: unknown) => {
    if (!suspect && typeof v === "string" && isSecretKey(k)) suspect = true;
  };
  const precut = { maxArray: PRECUT_MAX_ARRAY, onKey };
  if (c.input !== undefined) c.input = mapStrings(c.input, (v) => pre(v, MAX_INPUT_STRING + REDACT_SLACK), precut);
  if (c.raw !== undefined) {
    const rawMax = DEFAULT_RAW_STRING_CHARS + REDACT_SLACK;
    c.raw = mapStrings(c.raw, (v) => (v.length >= 200 ? same.get(v) : undefined) ?? pre(v, rawMax), precut);
  }
  // 2. redact only when something can match
  if (suspect) {
    // strings the scan found clean are returned as they are by the redactor: not scanned again
    const r = { envFile: opts.envFile, clean };
    for (const k of ["output", "text", "command", "diff_summary"] as const) {
      const v = c[k];
      if (typeof v === "string") c[k] = redactText(v, r);
    }
    if (c.commit) c.commit = { ...c.commit, message: redactText(c.commit.message, r) };
    if (c.input !== undefined) c.input = redactDeep(c.input, r);
    if (c.raw !== undefined) c.raw = redactDeep(c.raw, r);
  }
  // 3. final cut
  if (typeof c.output === "string") c.output = truncateText(c.output, DEFAULT_OUTPUT_CHARS);
  if (typeof c.text === "string") c.text = truncateText(c.text, MAX_TEXT_CHARS);
  if (typeof c.command === "string") c.command = truncateText(c.command, MAX_COMMAND_CHARS);
  if (c.input !== undefined)
    c.input = truncateDeep(c.input, {
      maxString: MAX_INPUT_STRING,
      maxTotal: MAX_INPUT_TOTAL,
      maxArray: FINAL_MAX_ARRAY,
    });
  if (c.raw !== undefined) c.raw = truncateDeep(c.raw, { maxArray: FINAL_MAX_ARRAY });
  return c;
}
