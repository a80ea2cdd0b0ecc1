/**
 * Collection statistics of an FTS5 table, read from the index itself so that the ranker can score
 * candidates with its own BM25 parameters in constant time per query:
 * - row count and total token count from the table's averages record (`<table>_data`, id 1: a
 *   varint row count followed by one varint token total per column — the record FTS5's own bm25()
 *   reads);
 * - document frequency per stem from a temporary `fts5vocab` table (nothing is written to the file).
 */
import type { Database } from "bun:sqlite";

export interface CollectionStats {
  /** Number of rows in the index. */
  docs: number;
  /** Average number of tokens per row (all indexed columns). */
  avgLength: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Table and column names are interpolated into SQL: only plain identifiers are accepted. */
export function assertIdentifier(name: string, what: string): void {
  if (!IDENTIFIER.test(name))
    throw new Error(`Invalid ${what} "${name}": use a plain SQL identifier (letters, digits, _).`);
}

/** Decode one SQLite varint (big-endian groups of 7 bits; the 9th byte contributes 8). */
export function readVarint(buf: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = buf[offset + i];
    if (byte === undefined) return { value, next: buf.length };
    if (i === 8) return { value: value * 256 + byte, next: offset + 9 };
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return { value, next: offset + 9 };
}

/** Row count and average row length, or null when the averages record is missing or unreadable. */
export function collectionStats(db: Database, table: string): CollectionStats | null {
  assertIdentifier(table, "table");
  const row = db.query(`SELECT block FROM ${table}_data WHERE id = 1`).get() as { block: Uint8Array | null } | null;
  if (!row?.block || row.block.length === 0) return null;
  const buf = row.block;
  const first = readVarint(buf, 0);
  const docs = first.value;
  let tokens = 0;
  let at = first.next;
  while (at < buf.length) {
    const v = readVarint(buf, at);
    tokens += v.value;
    at = v.next;
  }
  if (docs <= 0) return { docs: 0, avgLength: 0 };
  return { docs, avgLength: tokens / docs };
}

/**
 * Number of rows containing each stem (0 for stems the index does not hold). fts5vocab counts a
 * stem's rows by walking its whole doclist, so counts are remembered per connection and table
 * until the index may have changed (`indexStamp`).
 */
export function documentFrequencies(db: Database, table: string, stems: readonly string[]): Map<string, number> {
  assertIdentifier(table, "table");
  const out = new Map<string, number>();
  if (stems.length === 0) return out;
  const conn = connectionState(db);
  const stamp = indexStamp(db, table);
  let cache = conn.df.get(table);
  if (!cache || cache.stamp !== stamp || cache.counts.size > DF_CACHE_MAX) {
    cache = { stamp, counts: new Map() };
    conn.df.set(table, cache);
  }
  let stmt: ReturnType<typeof vocabStatement> | undefined;
  for (const s of stems) {
    let n = cache.counts.get(s);
    if (n === undefined) {
      stmt ??= vocabStatement(db, conn, table);
      n = stmt.get(s)?.doc ?? 0;
      cache.counts.set(s, n);
    }
    out.set(s, n);
  }
  return out;
}

const DF_CACHE_MAX = 50_000;

interface ConnectionState {
  vocab: Set<string>;
  df: Map<string, { stamp: string; counts: Map<string, number> }>;
  stamps: Map<string, ReturnType<Database["query"]>>;
}

const connections = new WeakMap<Database, ConnectionState>();

function connectionState(db: Database): ConnectionState {
  let s = connections.get(db);
  if (!s) {
    s = { vocab: new Set(), df: new Map(), stamps: new Map() };
    connections.set(db, s);
  }
  return s;
}

/**
 * Changes whenever `table`'s index may have changed: its structure record (`<table>_data` id 10,
 * FTS5's list of segments, rewritten by every insert, update and delete, from any connection) or
 * a write on this connection (`total_changes()`: what changes items without touching the index,
 * e.g. an embedding). Writes to other tables by other processes — events from the daemon, the
 * MCP trace — leave it alone, so caches keyed on it survive an agent's busy session.
 */
export function indexStamp(db: Database, table: string): string {
  assertIdentifier(table, "table");
  const conn = connectionState(db);
  let stmt = conn.stamps.get(table);
  if (!stmt)
    conn.stamps.set(
      table,
      (stmt = db.query(`SELECT (SELECT block FROM ${table}_data WHERE id = 10) AS s, total_changes() AS tc`)),
    );
  const v = stmt.get() as { s: Uint8Array | null; tc: number };
  return `${v.tc}:${v.s ? Buffer.from(v.s).toString("base64") : ""}`;
}

/** The `fts5vocab` row table over `table`, created once per connection (temp: nothing is written to the file). */
function vocabStatement(db: Database, conn: ConnectionState, table: string) {
  const vocab = `sqrl_vocab_${table}`;
  if (!conn.vocab.has(table)) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${vocab} USING fts5vocab(main, ${table}, row)`);
    conn.vocab.add(table);
  }
  return db.query<{ doc: number }, [string]>(`SELECT doc FROM temp.${vocab} WHERE term = ?`);
}
