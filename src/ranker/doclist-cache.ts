/**
 * Rowid lists of FTS5 matches, remembered per connection until the index may have changed (the
 * same stamp as the document frequencies, see fts-stats.ts `indexStamp`). The
 * engine answers every query of a project from one long-lived connection, and a project's tasks
 * keep naming the same modules and words, so the long doclists of its common terms are decoded
 * once instead of on every call. Bounded: the least recently used lists go first.
 */
import type { Database } from "bun:sqlite";
import { indexStamp } from "./fts-stats.ts";

const MAX_ROWIDS = 2_000_000; // 16 MB of Float64Array at most, per connection

interface Lists {
  stamp: string;
  rowids: number;
  byMatch: Map<string, Float64Array>;
}

const perConnection = new WeakMap<Database, Map<string, Lists>>();

/** The rowids `read` gives for `match` on `table`, from the cache while the index is unchanged. */
export function cachedDoclist(
  db: Database,
  table: string,
  match: string,
  read: () => Float64Array,
  maxRowids = MAX_ROWIDS,
): Float64Array {
  let tables = perConnection.get(db);
  if (!tables) perConnection.set(db, (tables = new Map()));
  const stamp = indexStamp(db, table);
  let lists = tables.get(table);
  if (!lists || lists.stamp !== stamp) tables.set(table, (lists = { stamp, rowids: 0, byMatch: new Map() }));
  const hit = lists.byMatch.get(match);
  if (hit) {
    lists.byMatch.delete(match); // most recently used last
    lists.byMatch.set(match, hit);
    return hit;
  }
  const rows = read();
  lists.byMatch.set(match, rows);
  lists.rowids += rows.length;
  for (const [key, old] of lists.byMatch) {
    if (lists.rowids <= maxRowids || key === match) break;
    lists.byMatch.delete(key);
    lists.rowids -= old.length;
  }
  return rows;
}

/** Parse a `group_concat(rowid)` string ("12,345,-7") into numbers. */
export function parseRowids(list: string | null | undefined): Float64Array {
  if (!list) return new Float64Array(0);
  let count = 1;
  for (let i = 0; i < list.length; i++) if (list.charCodeAt(i) === 44) count++;
  const out = new Float64Array(count);
  let n = 0;
  let v = 0;
  let neg = false;
  let any = false;
  for (let i = 0; i <= list.length; i++) {
    const c = i < list.length ? list.charCodeAt(i) : 44;
    if (c === 44) {
      if (any) out[n++] = neg ? -v : v;
      v = 0;
      neg = false;
      any = false;
    } else if (c === 45) neg = true;
    else {
      v = v * 10 + (c - 48);
      any = true;
    }
  }
  return n === count ? out : out.subarray(0, n);
}
