/**
 * The Porter (1980) stemmer, written to give the same stems as SQLite's FTS5 `porter` tokenizer
 * (ASCII lower-case words of 3..64 characters are stemmed, anything else passes through), so that
 * the ranker can reason about terms exactly as the index stores them: de-duplicate query terms,
 * say which terms matched, pick feedback terms.
 */
const MAX_STEMMED = 64;

function isConsonantAt(w: string, i: number): boolean {
  const c = w[i];
  if (c === "a" || c === "e" || c === "i" || c === "o" || c === "u") return false;
  if (c === "y") return i === 0 ? true : !isConsonantAt(w, i - 1);
  return true;
}

/** Porter's m: the number of vowel-consonant sequences in w[0, end). */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonantAt(w, i)) i++;
  while (i < end) {
    while (i < end && !isConsonantAt(w, i)) i++;
    if (i >= end) break;
    while (i < end && isConsonantAt(w, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonantAt(w, i)) return true;
  return false;
}

/** *o: w[0, end) ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonantAt(w, end - 1) || isConsonantAt(w, end - 2) || !isConsonantAt(w, end - 3)) return false;
  const c = w[end - 1];
  return c !== "w" && c !== "x" && c !== "y";
}

/** Replace `suffix` by `to` when the stem before it has measure > minM. */
function replaceIf(w: string, suffix: string, to: string, minM: number): string | null {
  if (!w.endsWith(suffix) || w.length <= suffix.length) return null;
  const stemEnd = w.length - suffix.length;
  return measure(w, stemEnd) > minM ? w.slice(0, stemEnd) + to : w;
}

function firstRule(w: string, rules: ReadonlyArray<readonly [string, string]>, minM: number): string {
  for (const [suffix, to] of rules) {
    const r = replaceIf(w, suffix, to, minM);
    if (r !== null) return r;
  }
  return w;
}

function step1a(w: string): string {
  if (!w.endsWith("s")) return w;
  if (w.endsWith("sses") && w.length > 4) return w.slice(0, -2);
  if (w.endsWith("ies") && w.length > 3) return w.slice(0, -2);
  if (w.endsWith("ss")) return w;
  return w.slice(0, -1);
}

function step1b(w: string): string {
  if (w.endsWith("eed") && w.length > 3) return measure(w, w.length - 3) > 0 ? w.slice(0, -1) : w;
  let cut: string | null = null;
  if (w.endsWith("ed") && w.length > 2 && hasVowel(w, w.length - 2)) cut = w.slice(0, -2);
  else if (w.endsWith("ing") && w.length > 3 && hasVowel(w, w.length - 3)) cut = w.slice(0, -3);
  if (cut === null) return w;
  if (cut.length > 2 && (cut.endsWith("at") || cut.endsWith("bl") || cut.endsWith("iz"))) return `${cut}e`;
  const last = cut[cut.length - 1]!;
  if (cut.length > 1 && last === cut[cut.length - 2] && !"aeioulsz".includes(last)) {
    return cut.slice(0, -1);
  }
  if (measure(cut, cut.length) === 1 && endsCvc(cut, cut.length)) return `${cut}e`;
  return cut;
}

function step1c(w: string): string {
  return w.endsWith("y") && hasVowel(w, w.length - 1) ? `${w.slice(0, -1)}i` : w;
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ["ational", "ate"],
  ["tional", "tion"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["izer", "ize"],
  ["logi", "log"],
  ["bli", "ble"],
  ["alli", "al"],
  ["entli", "ent"],
  ["eli", "e"],
  ["ousli", "ous"],
  ["ization", "ize"],
  ["ation", "ate"],
  ["ator", "ate"],
  ["alism", "al"],
  ["iveness", "ive"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["aliti", "al"],
  ["iviti", "ive"],
  ["biliti", "ble"],
];
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ["icate", "ic"],
  ["ative", ""],
  ["alize", "al"],
  ["iciti", "ic"],
  ["ical", "ic"],
  ["ful", ""],
  ["ness", ""],
];
const STEP4 = [
  "al",
  "ance",
  "ence",
  "er",
  "ic",
  "able",
  "ible",
  "ant",
  "ement",
  "ment",
  "ent",
  "ion",
  "ou",
  "ism",
  "ate",
  "iti",
  "ous",
  "ive",
  "ize",
];

/** Rules of steps 2 and 3 are keyed by the penultimate letter, so at most one suffix is tried. */
function ruleStep(w: string, rules: ReadonlyArray<readonly [string, string]>): string {
  const matching = rules.filter(([s]) => w.endsWith(s) && w.length > s.length);
  if (matching.length === 0) return w;
  return firstRule(w, [matching[0]!], 0);
}

function step4(w: string): string {
  for (const suffix of longestFirst(STEP4)) {
    if (!w.endsWith(suffix) || w.length <= suffix.length) continue;
    const stemEnd = w.length - suffix.length;
    if (suffix === "ion" && !(w[stemEnd - 1] === "s" || w[stemEnd - 1] === "t")) return w;
    return measure(w, stemEnd) > 1 ? w.slice(0, stemEnd) : w;
  }
  return w;
}

let sortedStep4: string[] | null = null;
function longestFirst(list: string[]): string[] {
  sortedStep4 ??= [...list].sort((a, b) => b.length - a.length);
  return sortedStep4;
}

function step5(w: string): string {
  let out = w;
  if (out.endsWith("e")) {
    const m = measure(out, out.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(out, out.length - 1))) out = out.slice(0, -1);
  }
  if (out.length > 1 && out.endsWith("ll") && measure(out, out.length - 1) > 1) out = out.slice(0, -1);
  return out;
}

/** The stem FTS5's porter tokenizer stores for one lower-case token. */
export function porterStem(token: string): string {
  if (token.length < 3 || new TextEncoder().encode(token).length > MAX_STEMMED) return token;
  let w = step1a(token);
  w = step1b(w);
  w = step1c(w);
  w = ruleStep(w, STEP2);
  w = ruleStep(w, STEP3);
  w = step4(w);
  return step5(w);
}
