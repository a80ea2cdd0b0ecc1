/**
 * The candidate pool: the rows the ranker rescores in JS (BM25 × coverage over their bodies).
 * Two ways to propose it:
 *
 * - `rank`: FTS5's own ordering, `MATCH 'a OR b OR …' ORDER BY rank LIMIT pool`. FTS5 computes
 *   bm25() for every matching row (a docsize look-up and a position-list walk each, ~1 µs a row),
 *   so the cost grows with the summed document frequency of the terms: fine in a small store,
 *   ~15 ms for four terms in 5 % of 100,000 items, several times that for a long task description.
 * - `coverage`: rows by covered IDF mass — the coverage factor of the final score — without
 *   scoring every match. Doclists are read as rowid lists (~0.12 µs a row), rarest term first,
 *   with MaxScore pruning (see coveragePool) so that the long doclists of common terms are mostly
 *   skipped or only probed among the rows that can still make the pool. The result holds every
 *   row whose coverage beats the pool-th best (between `pool` and POOL_CAP_FACTOR × `pool` rows);
 *   when one term set is larger than the room left, FTS5's bm25 picks among it (the order `rank`
 *   would give those rows), over its newest GROUP_RANK_WINDOW rows at most.
 *   Measured against an exhaustive scan, this pool finds the relevance formula's top items at
 *   least as well as `rank` does (bench/retrieval.ts, docs/benchmarks.md; LoCoMo unchanged).
 *
 * `auto` (the default) uses `rank` while the terms' summed document frequency stays under
 * RANK_ROW_BUDGET (a store of a few thousand items, a LoCoMo conversation) and `coverage` above it.
 */
import type { Database, Statement } from "bun:sqlite";
import { docTerms, stemMatcher } from "./bm25.ts";
import { cachedDoclist, parseRowids } from "./doclist-cache.ts";
import { bodies, bodyRows } from "./fts-bodies.ts";
import { matchExpression } from "./fts-query.ts";
import { groupRows, Masks, poolThreshold, popcount, type Group } from "./term-masks.ts";
import type { Candidate, PoolSource, PoolStrategy, PoolTerm } from "./types.ts";

export type { Candidate, PoolSource, PoolStrategy, PoolTerm } from "./types.ts";

/** Summed document frequency above which `auto` switches from `rank` to `coverage`. */
export const RANK_ROW_BUDGET = 1000;

export function chooseStrategy(strategy: PoolStrategy, terms: readonly PoolTerm[]): "rank" | "coverage" {
  if (strategy !== "auto") return strategy;
  let rows = 0;
  for (const t of terms) rows += t.df;
  return rows <= RANK_ROW_BUDGET ? "rank" : "coverage";
}

export function fetchPool(
  db: Database,
  src: PoolSource,
  terms: readonly PoolTerm[],
  pool: number,
  strategy: PoolStrategy = "auto",
): Candidate[] {
  if (terms.length === 0 || pool <= 0) return [];
  return chooseStrategy(strategy, terms) === "rank"
    ? rankPool(
        db,
        src,
        terms.map((t) => t.word),
        pool,
      )
    : coveragePool(db, src, terms, pool);
}

function rankPool(db: Database, src: PoolSource, words: readonly string[], pool: number): Candidate[] {
  const match = matchExpression(words);
  if (!match) return [];
  return db
    .query(
      `SELECT ${src.idColumn} AS id, ${src.bodyColumn} AS body FROM ${src.table} WHERE ${src.table} MATCH ? ORDER BY rank LIMIT ?`,
    )
    .all(match, pool) as Candidate[];
}

// ---- coverage pool ------------------------------------------------------------------------------

/** Term sets are bit masks: at most this many terms propose candidates (the rarest ones). */
const MAX_MASK_TERMS = 30;

/**
 * Rows by covered IDF mass (MaxScore). Doclists are read rarest term first. Once the pool-th best
 * row's mass so far exceeds the total weight of the terms not yet read (`rest`), a row holding only
 * unread terms can no longer make the pool: from then on only the `contenders` (rows whose mass so
 * far + rest reaches that threshold) are followed. The threshold is raised with the exact coverage
 * of the best contenders (read from the bodies the rescoring needs anyway), and each further term
 * is only probed among the contenders (FTS5 `"term" AND (…)` seeks in its long doclist instead of
 * reading it), which lowers `rest` and prunes again. As soon as at most POOL_CAP_FACTOR × pool
 * contenders remain they are the pool: a superset of the rows whose full coverage beats the
 * pool-th best, whose exact scores come from the rescoring.
 */
function coveragePool(db: Database, src: PoolSource, all: readonly PoolTerm[], pool: number): Candidate[] {
  // The rarest terms (highest weight) carry the masks; a query longer than that is rare.
  const terms = [...all]
    .filter((t) => t.df > 0)
    .sort((a, b) => b.weight - a.weight || a.df - b.df)
    .slice(0, MAX_MASK_TERMS);
  if (terms.length === 0) return [];
  const unread: number[] = terms.map(() => 0);
  for (let i = terms.length - 2; i >= 0; i--) unread[i] = unread[i + 1]! + terms[i + 1]!.weight;
  const cap = pool * POOL_CAP_FACTOR;
  const masks = new Masks();
  try {
    const list = db.query<{ ids: string | null }, [string]>(
      `SELECT group_concat(rowid) AS ids FROM ${src.table} WHERE ${src.table} MATCH ?`,
    );
    let readMass = 0;
    for (let i = 0; i < terms.length; i++) {
      readDoclist(db, src, list, terms[i]!.word, 1 << i, masks);
      readMass += terms[i]!.weight;
      const rest = unread[i]!;
      if (rest <= 0 || masks.touched.length < pool || readMass <= rest) continue;
      const groups = groupRows(masks, terms.slice(0, i + 1));
      const threshold = poolThreshold(groups, pool);
      if (threshold > rest)
        return followContenders(db, src, list, terms, unread, i, groups, threshold, pool, cap, masks);
    }
    return fill(db, src, groupRows(masks, terms), terms, pool, cap);
  } finally {
    masks.clear();
  }
}

/** The contender phase of coveragePool, entered after reading terms[0..read]. */
function followContenders(
  db: Database,
  src: PoolSource,
  list: Statement<{ ids: string | null }, [string]>,
  terms: readonly PoolTerm[],
  unread: readonly number[],
  read: number,
  groups: readonly Group[],
  start: number,
  pool: number,
  cap: number,
  masks: Masks,
): Candidate[] {
  const c = new Contenders(terms, groups, start, unread[read]!);
  c.prune(unread[read]!, pool);
  if (c.size() <= cap) return c.finish(db, src);
  // Raise the threshold with the exact coverage of the best `pool` contenders.
  const matcher = src.matcher ?? stemMatcher(terms.map((t) => t.stem));
  const leaders = bodyRows(db, src, c.best(pool));
  for (const [r, cand] of leaders) {
    const doc = docTerms(cand.body ?? "", matcher);
    let m = 0;
    terms.forEach((t, i) => {
      if (doc.tf.has(t.stem)) m |= 1 << i;
    });
    c.know(r, m, { ...cand, terms: { matcher, doc } });
  }
  c.prune(unread[read]!, pool);
  for (let j = read + 1; j < terms.length; j++) {
    if (c.size() <= cap) return c.finish(db, src);
    const within = containedIn(c.groups, terms.slice(0, j));
    // Probe among the contenders when that is cheaper than reading the term's own doclist (a row
    // walked by the probe costs about twice a row read, measured on the bench stores).
    if (within && within.cost * PROBE_ROW_COST <= terms[j]!.df)
      readDoclist(db, src, list, `${matchExpression([terms[j]!.word])} AND (${within.expr})`, 1 << j, masks, true);
    else readDoclist(db, src, list, terms[j]!.word, 1 << j, masks);
    c.split(1 << j, masks);
    c.prune(unread[j]!, pool);
  }
  if (c.size() <= cap) return c.finish(db, src);
  // Every term is known for the contenders: whole term sets, best first, as without pruning.
  return fill(db, src, c.allGroups(), terms, pool, cap, c.knownCandidates());
}

const EPS = 1e-9;
const PROBE_ROW_COST = 2;

/**
 * Rows that can still make the pool, by term set so far, and the threshold they must reach (a
 * lower bound of the pool-th best coverage). Rows whose bodies were read have an exact term set
 * (`known`) and no longer need probing.
 */
class Contenders {
  threshold: number;
  groups: Group[];
  private known = new Map<number, { mask: number; candidate: Candidate }>();
  /** Known rows not yet removed from their groups. */
  private fresh = false;
  private readonly massCache = new Map<number, number>();

  constructor(
    private readonly terms: readonly PoolTerm[],
    groups: readonly Group[],
    start: number,
    rest: number,
  ) {
    this.threshold = start;
    this.groups = groups.filter((g) => g.mass + rest >= start - EPS).map((g) => ({ ...g, rows: [...g.rows] }));
  }

  massOf(m: number): number {
    let v = this.massCache.get(m);
    if (v === undefined) {
      v = 0;
      for (let i = 0; i < this.terms.length; i++) if (m & (1 << i)) v += this.terms[i]!.weight;
      this.massCache.set(m, v);
    }
    return v;
  }

  size(): number {
    let n = this.known.size;
    for (const g of this.groups) n += g.rows.length;
    return n;
  }

  /** Record a row's exact term set (read from its body); it leaves its group. */
  know(row: number, mask: number, candidate: Candidate): void {
    this.known.set(row, { mask, candidate });
    this.fresh = true;
  }

  /** After a term was probed: split every group by whether its rows hold the term. */
  split(bit: number, masks: Masks): void {
    const next = new Map<number, Group>();
    for (const g of this.groups) {
      for (const r of g.rows) {
        if (this.known.has(r)) continue;
        const m = g.mask | (masks.get(r) & bit);
        let h = next.get(m);
        if (!h) next.set(m, (h = { mask: m, mass: this.massOf(m), rows: [] }));
        h.rows.push(r);
      }
    }
    this.groups = [...next.values()];
  }

  /** Raise the threshold from what is known, then drop rows that cannot reach it with `rest` more. */
  prune(rest: number, pool: number): void {
    if (this.fresh) for (const g of this.groups) g.rows = g.rows.filter((r) => !this.known.has(r));
    this.fresh = false;
    const levels: Array<[number, number]> = this.groups.map((g) => [g.mass, g.rows.length]);
    for (const k of this.known.values()) levels.push([this.massOf(k.mask), 1]);
    levels.sort((a, b) => b[0] - a[0]);
    let seen = 0;
    for (const [mass, n] of levels) {
      seen += n;
      if (seen >= pool) {
        this.threshold = Math.max(this.threshold, mass);
        break;
      }
    }
    const floor = this.threshold - EPS;
    this.groups = this.groups.filter((g) => g.rows.length > 0 && g.mass + rest >= floor);
    for (const [r, k] of this.known) if (this.massOf(k.mask) < floor) this.known.delete(r);
  }

  /** The `n` rows with the highest coverage so far. */
  best(n: number): number[] {
    const out: number[] = [];
    for (const g of [...this.groups].sort((a, b) => b.mass - a.mass || a.mask - b.mask)) {
      for (const r of g.rows) {
        if (out.length >= n) return out;
        out.push(r);
      }
    }
    return out;
  }

  knownCandidates(): Map<number, Candidate> {
    return new Map([...this.known].map(([r, k]) => [r, k.candidate]));
  }

  /** Groups and known rows together, by term set, best first. */
  allGroups(): Group[] {
    const byMask = new Map<number, Group>(this.groups.map((g) => [g.mask, { ...g, rows: [...g.rows] }]));
    for (const [r, k] of this.known) {
      let g = byMask.get(k.mask);
      if (!g) byMask.set(k.mask, (g = { mask: k.mask, mass: this.massOf(k.mask), rows: [] }));
      g.rows.push(r);
    }
    return [...byMask.values()].sort((a, b) => b.mass - a.mass || a.mask - b.mask);
  }

  /** The bodies of every remaining contender. */
  finish(db: Database, src: PoolSource): Candidate[] {
    const out: Candidate[] = [...this.known.values()].map((k) => k.candidate);
    const rows = this.groups.flatMap((g) => g.rows);
    const fetched = bodyRows(db, src, rows);
    for (const r of rows) {
      const c = fetched.get(r);
      if (c) out.push(c);
    }
    return out;
  }
}

/** Sets a term's bit on every row its doclist (or a ready MATCH expression) holds. */
function readDoclist(
  db: Database,
  src: PoolSource,
  list: Statement<{ ids: string | null }, [string]>,
  word: string,
  bit: number,
  masks: Masks,
  expression = false,
): void {
  const match = expression ? word : matchExpression([word]);
  if (!match) return;
  const rows = cachedDoclist(db, src.table, match, () => parseRowids(list.get(match)?.ids));
  for (let i = 0; i < rows.length; i++) masks.add(rows[i]!, bit);
}

/**
 * An FTS5 expression matching the rows of the given term sets (and any other row holding one of
 * those sets or more): the OR of the minimal sets' ANDs, with the rows FTS5 walks to evaluate it
 * (per clause, the doclist of its rarest term). Null when it would have too many clauses.
 */
function containedIn(groups: readonly Group[], terms: readonly PoolTerm[]): { expr: string; cost: number } | null {
  const minimal: number[] = [];
  for (const m of groups.map((g) => g.mask).sort((a, b) => popcount(a) - popcount(b) || a - b)) {
    if (!minimal.some((k) => (m & k) === k)) minimal.push(m);
  }
  if (minimal.length > MAX_CONTENDER_CLAUSES || minimal.includes(0)) return null;
  let cost = 0;
  const clauses = minimal.map((m) => {
    const words: string[] = [];
    let rarest = Number.POSITIVE_INFINITY;
    terms.forEach((t, i) => {
      if (m & (1 << i)) {
        words.push(matchExpression([t.word])!);
        rarest = Math.min(rarest, t.df);
      }
    });
    cost += rarest;
    return words.length > 1 ? `(${words.join(" AND ")})` : words[0]!;
  });
  return { expr: clauses.join(" OR "), cost };
}

const MAX_CONTENDER_CLAUSES = 12;

/** Whole term sets, best first, until the pool is full; an overflowing set gives its best rows. */
function fill(
  db: Database,
  src: PoolSource,
  groups: readonly Group[],
  terms: readonly PoolTerm[],
  pool: number,
  cap: number,
  prefetched?: ReadonlyMap<number, Candidate>,
): Candidate[] {
  const chosen: number[] = [];
  for (const g of groups) {
    const room = pool - chosen.length;
    if (room <= 0) break;
    if (g.rows.length <= room || chosen.length + g.rows.length <= cap) {
      chosen.push(...g.rows);
      continue;
    }
    chosen.push(...bestOfGroup(db, src, terms, g, room));
    break;
  }
  if (!prefetched) return bodies(db, src, chosen);
  const fetched = bodyRows(
    db,
    src,
    chosen.filter((r) => !prefetched.has(r)),
  );
  return chosen.flatMap((r) => {
    const c = prefetched.get(r) ?? fetched.get(r);
    return c ? [c] : [];
  });
}

/** Upper bound of the pool, as a multiple of `pool`, when whole term sets are taken at once. */
export const POOL_CAP_FACTOR = 2;

/** Rows of one overflowing term set ranked by FTS5 at most: the newest ones (a recency window). */
const GROUP_RANK_WINDOW = 2000;

/**
 * The `room` rows of one term set FTS5 ranks best: bm25 over the AND of the set's terms (which
 * also matches rows holding more terms, skipped here). A set of more than GROUP_RANK_WINDOW rows is
 * ranked over its newest GROUP_RANK_WINDOW rows only (a rowid range FTS5 seeks to), which bounds
 * the cost; the rows left out tie with the others on coverage.
 */
function bestOfGroup(db: Database, src: PoolSource, terms: readonly PoolTerm[], g: Group, room: number): number[] {
  const words = terms.filter((_, i) => g.mask & (1 << i)).map((t) => t.word);
  const match = words.length > 0 ? words.map((w) => matchExpression([w])).join(" AND ") : null;
  if (!match) return g.rows.slice(0, room);
  const window =
    g.rows.length > GROUP_RANK_WINDOW ? [...g.rows].sort((a, b) => b - a).slice(0, GROUP_RANK_WINDOW) : g.rows;
  const members = new Set(window);
  const floor = g.rows.length > GROUP_RANK_WINDOW ? window[window.length - 1]! : Number.MIN_SAFE_INTEGER;
  const out: number[] = [];
  const stmt = db.query<{ r: number }, [string, number]>(
    `SELECT rowid AS r FROM ${src.table} WHERE ${src.table} MATCH ? AND rowid >= ? ORDER BY rank`,
  );
  for (const row of stmt.iterate(match, floor)) {
    if (!members.has(row.r)) continue;
    out.push(row.r);
    if (out.length >= room) break;
  }
  return out;
}
