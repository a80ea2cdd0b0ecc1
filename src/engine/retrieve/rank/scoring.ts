/**
 * The relevance model shared by task_context, search and the pitfalls view (reference §5.5):
 *   score = 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path_match
 * similarity is absolute (not relative to the best hit), so a threshold on it can abstain: it is the
 * IDF-weighted share of the query's informative terms that the item contains (stemmed like the FTS5
 * index), optionally blended with embedding cosine.
 */
import type { Database } from "bun:sqlite";
import type { MemoryType } from "../../../shared/api.ts";
import { isoToMs, relativeTime } from "../../../shared/time.ts";
import { searchBody, type MemoryItem } from "../../../sql/memory-items.ts";
import { collectionStats, documentFrequencies } from "../../../ranker/fts-stats.ts";
import { analyzeQuery, bodyStems, foldToken, stemCached } from "../../../ranker/query.ts";
import { identifiersIn } from "../../../shared/code-tokens.ts";
import { TYPE_NOUN } from "../render/markdown.ts";
import { originOf } from "../render/origin.ts";

export const WEIGHTS = { similarity: 0.6, importance: 0.2, recency: 0.1, path: 0.1 } as const;

/** Recency halves every this many days since the item was last confirmed (updated_at). */
export const RECENCY_HALF_LIFE_DAYS = 30;

const DAY_MS = 86_400_000;

export function ageDays(iso: string, nowMs: number): number {
  return Math.max(0, (nowMs - isoToMs(iso)) / DAY_MS);
}

export function recencyScore(iso: string, nowMs: number): number {
  return 0.5 ** (ageDays(iso, nowMs) / RECENCY_HALF_LIFE_DAYS);
}

// ---- path match -------------------------------------------------------------------------------

function norm(p: string): string {
  return p.replace(/\\/g, "/").replace(/^\.\//, "").replace(/\/+$/, "");
}

function dirOf(p: string): string {
  const i = p.lastIndexOf("/");
  return i < 0 ? "" : p.slice(0, i);
}

/** First two segments for src/lib/packages/apps-style trees, else the first one. */
export function moduleOf(p: string): string {
  const parts = norm(p).split("/");
  if (parts.length <= 1) return "";
  const container = /^(src|lib|libs|packages|apps|app|pkg|internal|cmd|crates|services|test|tests)$/.test(parts[0]!);
  return container && parts.length > 2 ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * How closely an item's paths match the active/scope paths: 1 same file (or the item lies inside a
 * scope folder), 0.7 same folder, 0.4 same module, 0 otherwise; plus which active paths matched.
 */
export function pathMatch(
  itemPaths: readonly string[],
  activePaths: readonly string[],
): { score: number; matched: string[] } {
  let best = 0;
  const matched = new Set<string>();
  for (const rawA of activePaths) {
    const a = norm(rawA);
    if (!a) continue;
    for (const rawI of itemPaths) {
      const i = norm(rawI);
      let s = 0;
      if (i === a || i.startsWith(`${a}/`) || a.startsWith(`${i}/`)) s = 1;
      else if (dirOf(i) !== "" && dirOf(i) === dirOf(a)) s = 0.7;
      else if (moduleOf(i) !== "" && moduleOf(i) === moduleOf(a)) s = 0.4;
      if (s > 0) matched.add(rawA);
      best = Math.max(best, s);
    }
  }
  return { score: best, matched: [...matched] };
}

// ---- similarity -------------------------------------------------------------------------------

/** Words that say nothing about which memory is relevant (English function words, task verbs). */
const STOP = new Set(
  // English function words
  (
    "a about above after again against all also am an and any are as at be because been before being below " +
    "between both but by can could did do does doing down during each few for from further had has have having " +
    "he her here hers herself him himself his how i if in into is it its itself just me more most my myself no " +
    "nor not now of off on once only or other our ours ourselves out over own same she should so some such than " +
    "that the their theirs them themselves then there these they this those through to too under until up very " +
    "was we were what when where which while who whom why will with would you your yours yourself yourselves " +
    "shall may might must let lets cannot dont doesnt isnt wont every via etc " +
    // words of any task that say nothing about which memory applies
    "add adding added make making made new create creating created implement implementing update updating " +
    "updated change changes changing changed fix fixing fixed write writing get getting use using used need " +
    "needs want wants work working thing things stuff something way one two good better best please help " +
    "code task tasks sure look try trying"
  ).split(" "),
);

/**
 * Words of one meaning in a coding project's memory: a task asking for "working notes" is about the
 * memory that says where "working documentation" lives. Small on purpose (each group is a set of
 * near-synonyms that never tell memories apart from each other); without an embedder this is the
 * only bridge between the words a task uses and the words a memory was written with.
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ["notes", "note", "docs", "doc", "documentation", "document", "wiki"],
  ["config", "configuration", "settings", "setting"],
  ["bug", "defect"],
];
const SYNONYMS = new Map<string, string[]>();
for (const group of SYNONYM_GROUPS) {
  const stems = [...new Set(group.map((w) => stemCached(w)))];
  for (const w of group)
    SYNONYMS.set(
      stemCached(w),
      stems.filter((s) => s !== stemCached(w)),
    );
}

export interface QueryTerm {
  /** The query's word (expanded code token), for reasons. */
  word: string;
  stem: string;
  weight: number;
  /** Stems of the same meaning (SYNONYM_GROUPS): an item containing any of them matches the term. */
  alts: string[];
  /** Words of those stems, for the lexical candidate query. */
  altWords: string[];
  /**
   * Part of an identifier no memory mentions (a function name, a ticket id, a commit hash): it can
   * only add to an item's coverage when matched, never count against the items that match the rest.
   */
  optional: boolean;
}

export interface QueryModel {
  terms: QueryTerm[];
  /** Weight of the required terms: the denominator of coverage. */
  totalWeight: number;
}

/** The query's informative terms, stemmed and weighted by inverse document frequency (the ranker's index statistics). */
export function buildQueryModel(db: Database, text: string): QueryModel {
  // The ranker's own query analysis (code-aware split, folding, its stop words, one term per stem),
  // then the task words that never tell memories apart.
  const byStem = new Map<string, string>();
  for (const t of analyzeQuery(text)) if (!STOP.has(t.word) && !/^\d{1,2}$/.test(t.word)) byStem.set(t.stem, t.word);
  if (byStem.size === 0) return { terms: [], totalWeight: 0 };
  const altsOf = (stem: string) => SYNONYMS.get(stem) ?? [];
  const n = Math.max(1, collectionStats(db, "memory_fts")?.docs ?? 1);
  const allStems = new Set<string>();
  for (const s of byStem.keys()) for (const x of [s, ...altsOf(s)]) allStems.add(x);
  const identifiers = identifiersIn(text);
  for (const id of identifiers) allStems.add(stemCached(foldToken(id.plain)));
  const dfs = documentFrequencies(db, "memory_fts", [...allStems]); // cached until the index changes
  // Identifiers that no memory names are optional, with the parts only they brought into the query.
  const standalone = new Set(
    text
      .split(/\s+/)
      .filter((w) => identifiersIn(w).length === 0)
      .flatMap((w) => analyzeQuery(w).map((t) => t.stem)),
  );
  const optional = new Set<string>();
  const unitWeight = new Map<string, number>();
  for (const id of identifiers) {
    const plainStem = stemCached(foldToken(id.plain));
    if ((dfs.get(plainStem) ?? 0) > 0) continue;
    const partStems = id.parts.map((p) => stemCached(foldToken(p))).filter((s) => s !== plainStem);
    for (const s of partStems) if (!standalone.has(s)) optional.add(s);
    // The name itself stays one required term; a long foreign name (two or more parts no memory
    // contains either) is stronger evidence of a foreign topic and counts as two.
    const foreignParts = partStems.filter((s) => !/^\d+$/.test(s) && (dfs.get(s) ?? 0) === 0).length;
    unitWeight.set(plainStem, Math.min(2, Math.max(1, foreignParts)));
  }
  // A query made only of unknown identifiers keeps them all required (nothing else to match on).
  if ([...byStem.keys()].every((s) => optional.has(s))) optional.clear();
  const terms: QueryTerm[] = [];
  for (const [s, w] of byStem) {
    const alts = altsOf(s);
    const df = [s, ...alts].reduce((a, x) => a + (dfs.get(x) ?? 0), 0);
    // BM25's idf, kept positive; a term no item contains counts like a rare one.
    const idf = Math.log(1 + (n - Math.max(df, 1) + 0.5) / (Math.max(df, 1) + 0.5));
    const altWords =
      SYNONYM_GROUPS.find((g) => g.some((x) => stemCached(x) === s))?.filter((x) => stemCached(x) !== s) ?? [];
    // An optional part is weak evidence (a word inside some other name): half the weight of a word of the task.
    terms.push({
      word: w,
      stem: s,
      weight: Math.max(0.05, idf) * (optional.has(s) ? 0.5 : (unitWeight.get(s) ?? 1)),
      alts,
      altWords,
      optional: optional.has(s),
    });
  }
  return { terms, totalWeight: terms.reduce((a, t) => a + (t.optional ? 0 : t.weight), 0) };
}

const itemStemCache = new Map<string, Set<string>>();

/**
 * The stems of an item's indexed text (content, key, tags, paths, type). Cached per item id and
 * `updated_at` (every content change moves updated_at), so repeated queries do not re-tokenize.
 */
export function itemStems(
  item: Pick<MemoryItem, "content" | "key" | "tags" | "file_paths" | "type"> & { id?: string; updated_at?: string },
): Set<string> {
  const cacheKey = item.id && item.updated_at ? `${item.id}|${item.updated_at}` : undefined;
  const hit = cacheKey ? itemStemCache.get(cacheKey) : undefined;
  if (hit) return hit;
  const out = new Set(bodyStems(searchBody(item)));
  if (cacheKey) {
    if (itemStemCache.size >= 50_000) itemStemCache.delete(itemStemCache.keys().next().value!);
    itemStemCache.set(cacheKey, out);
  }
  return out;
}

/** The query's informative words as one string (what the ranker is asked for). */
export function informativeQuery(model: QueryModel): string {
  return model.terms.flatMap((t) => [t.word, ...t.altWords]).join(" ");
}

/** The stems of words the ranker reported as matched in an item (no re-tokenizing of the item). */
export function stemsOfWords(words: readonly string[]): Set<string> {
  return new Set(words.map(stemCached));
}

/**
 * IDF-weighted share of the query's terms found in the item, 0..1, and the words that matched. A
 * term matches through its own stem or a synonym's; an optional term (an identifier no memory
 * names) joins the denominator only when the item matches it, so it can raise coverage, never sink it.
 */
export function termCoverage(model: QueryModel, stems: Set<string>): { score: number; matched: QueryTerm[] } {
  if (model.terms.length === 0) return { score: 0, matched: [] };
  const matched = model.terms.filter((t) => stems.has(t.stem) || t.alts.some((a) => stems.has(a)));
  const got = matched.reduce((a, t) => a + t.weight, 0);
  const total = model.totalWeight + matched.reduce((a, t) => a + (t.optional ? t.weight : 0), 0);
  return { score: total === 0 ? 0 : got / total, matched };
}

// ---- the formula and its explanation -----------------------------------------------------------

export interface ScoreParts {
  similarity: number;
  importance: number;
  recency: number;
  path: number;
}

export function combine(p: ScoreParts): number {
  return (
    WEIGHTS.similarity * p.similarity +
    WEIGHTS.importance * p.importance +
    WEIGHTS.recency * p.recency +
    WEIGHTS.path * p.path
  );
}

export interface Explained {
  matchedTerms: readonly QueryTerm[];
  matchedPaths: readonly string[];
  cosine?: number;
}

/** What the reason says of where an item comes from (render/origin.ts), after its noun. */
const ORIGIN_SUFFIX: Record<string, string> = {
  stated: ", as you said it",
  edited: ", in your words",
  imported: ", imported",
  learned: ", learned from your sessions",
};

/** A one-sentence reason built from what actually matched, saying where the item comes from. */
export function explain(
  item: Pick<MemoryItem, "type" | "importance" | "updated_at" | "tags" | "content"> &
    Partial<Pick<MemoryItem, "file_paths" | "extractor">>,
  parts: ScoreParts,
  why: Explained,
  nowMs: number,
): string {
  const bits: string[] = [];
  const words = [...why.matchedTerms]
    .sort((a, b) => b.weight - a.weight)
    .slice(0, 4)
    .map((t) => t.word);
  if (words.length > 0) bits.push(`Mentions ${words.join(", ")}`);
  if (why.cosine !== undefined && why.cosine >= 0.5) bits.push(`semantically close (cosine ${why.cosine.toFixed(2)})`);
  if (why.matchedPaths.length > 0)
    bits.push(`${parts.path >= 1 ? "touches" : "is near"} ${why.matchedPaths.slice(0, 2).join(", ")}`);
  const age = ageDays(item.updated_at, nowMs);
  const when = age <= 14 ? `, updated ${relativeTime(item.updated_at, nowMs)}` : "";
  const weight = item.importance >= 0.8 ? "high-importance " : "";
  const lead = bits.length > 0 ? `${bits.join("; ")}. ` : "";
  const origin = originOf(item);
  if (origin.kind === "repo_file" || origin.kind === "manifest") {
    // The project's own files said it: a rule there is the project's, not the user's style.
    const noun = item.type === "user_style" ? "project rule" : TYPE_NOUN[item.type as MemoryType];
    return `${lead}A ${weight}${noun} from ${origin.source ?? "the repository's files"}${when}.`;
  }
  const noun = `${weight}${TYPE_NOUN[item.type as MemoryType]}`;
  // "Your style preference", never "A your style preference".
  const phrase =
    (noun.startsWith("your ")
      ? `Your ${noun.slice(5)}`
      : noun.includes("your ")
        ? `Your ${noun.replace("your ", "")}`
        : `A ${noun}`) + (ORIGIN_SUFFIX[origin.kind] ?? "");
  return `${lead}${phrase}${when}.`;
}
