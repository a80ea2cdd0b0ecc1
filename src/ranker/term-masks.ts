/**
 * Term sets of candidate rows as bit masks (bit i: the row holds the pool's i-th term), grouped by
 * set with the IDF mass each set covers: the bookkeeping of the coverage pool (pool.ts).
 */
import type { PoolTerm } from "./types.ts";

/** Rows held in the typed mask array; beyond this rowid a Map takes over. */
const MAX_DENSE_ROWID = 1 << 22;

let dense = new Uint32Array(1 << 16);

/** Per-row term masks: a reusable typed array for ordinary rowids, a Map for huge ones. */
export class Masks {
  readonly touched: number[] = [];
  private readonly sparse = new Map<number, number>();

  add(rowid: number, bit: number): void {
    if (rowid >= 0 && rowid < MAX_DENSE_ROWID) {
      if (rowid >= dense.length) {
        let size = dense.length;
        while (size <= rowid) size *= 2;
        const grown = new Uint32Array(Math.min(size, MAX_DENSE_ROWID));
        grown.set(dense);
        dense = grown;
      }
      if (dense[rowid] === 0) this.touched.push(rowid);
      dense[rowid] = dense[rowid]! | bit;
      return;
    }
    const cur = this.sparse.get(rowid);
    if (cur === undefined) this.touched.push(rowid);
    this.sparse.set(rowid, (cur ?? 0) | bit);
  }

  get(rowid: number): number {
    return rowid >= 0 && rowid < MAX_DENSE_ROWID ? dense[rowid]! : (this.sparse.get(rowid) ?? 0);
  }

  /** Zero the shared array again (it is reused by the next query). */
  clear(): void {
    for (const r of this.touched) if (r >= 0 && r < MAX_DENSE_ROWID) dense[r] = 0;
    this.touched.length = 0;
    this.sparse.clear();
  }
}

export interface Group {
  mask: number;
  mass: number;
  rows: number[];
}

/** Rows by term set, best covered first. */
export function groupRows(masks: Masks, terms: readonly PoolTerm[]): Group[] {
  const groups = new Map<number, Group>();
  for (const r of masks.touched) {
    const m = masks.get(r);
    let g = groups.get(m);
    if (!g) {
      let mass = 0;
      for (let i = 0; i < terms.length; i++) if (m & (1 << i)) mass += terms[i]!.weight;
      g = { mask: m, mass, rows: [] };
      groups.set(m, g);
    }
    g.rows.push(r);
  }
  return [...groups.values()].sort((a, b) => b.mass - a.mass || a.mask - b.mask);
}

/** Covered mass of the pool-th best row (0 when fewer rows). */
export function poolThreshold(groups: readonly Group[], pool: number): number {
  let n = 0;
  for (const g of groups) {
    n += g.rows.length;
    if (n >= pool) return g.mass;
  }
  return 0;
}

/** Number of terms in a set. */
export function popcount(m: number): number {
  let n = 0;
  for (let x = m; x !== 0; x &= x - 1) n++;
  return n;
}
