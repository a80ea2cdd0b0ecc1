/**
 * Query processing shared by every lexical search in sqrl (search_memory, task context, episode
 * search, the LoCoMo bench): code-aware splitting (the same expandCodeTokens the index bodies were
 * written with), lower-casing and diacritic folding like FTS5's unicode61, stop-word removal, and
 * de-duplication by Porter stem (the stem FTS5's `porter` tokenizer stores).
 */
import { expandCodeTokens } from "../shared/code-tokens.ts";
import { porterStem } from "./porter.ts";
import { isStopWord } from "./stop-words.ts";

export interface QueryTerm {
  /** The query's word as typed (expanded and lower-cased): what FTS5 is asked to match. */
  word: string;
  /** Its stem, as stored in the index. */
  stem: string;
}

/** Lower-case, strip diacritics (unicode61's remove_diacritics), keep letters and digits. */
export function foldToken(token: string): string {
  return token
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();
}

/**
 * Tokens of an indexed body (or any text already passed through expandCodeTokens) exactly as the
 * FTS5 `porter unicode61` tokenizer stores them: split on anything but letters and digits, folded,
 * stemmed. The index's document length is the length of this array.
 */
export function bodyStems(body: string): string[] {
  const out: string[] = [];
  for (const raw of body.split(/[^\p{L}\p{N}\p{M}]+/u)) {
    if (raw.length === 0) continue;
    out.push(stemCached(foldToken(raw)));
  }
  return out;
}

/** The query's informative terms in order of appearance, one per stem, stop words removed. */
export function analyzeQuery(query: string): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const raw of expandCodeTokens(query).split(" ")) {
    const word = foldToken(raw);
    if (word.length < 2 || isStopWord(word)) continue;
    const stem = stemCached(word);
    if (seen.has(stem)) continue;
    seen.add(stem);
    terms.push({ word, stem });
  }
  return terms;
}

const memo = new Map<string, string>();
/** porterStem with a bounded memo (bodies repeat the same words constantly). */
export function stemCached(word: string): string {
  let s = memo.get(word);
  if (s === undefined) {
    s = porterStem(word);
    if (memo.size >= 50_000) memo.clear();
    memo.set(word, s);
  }
  return s;
}
