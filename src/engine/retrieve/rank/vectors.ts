/**
 * Vector similarity for the read path. Stored vectors are read into memory once per connection and
 * kept while `PRAGMA data_version` (commits by other connections: the write path's embedding
 * backfill) and `total_changes()` (writes on this connection) both hold, so no one has to reset
 * anything. Items without a current stored vector are embedded in memory only: reads never write
 * (the write path stores vectors, learn/embedding-backfill.ts).
 */
import type { Database } from "bun:sqlite";
import { log as rootLog } from "../../../shared/log.ts";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { decodeStoredVector, type Embedder, embeddingText, fnv1a } from "../../llm/embeddings.ts";
import { loadItems } from "./candidates.ts";

const log = rootLog.child({ service: "retrieve" });

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function unavailable(err: unknown): void {
  log.warn(
    `embeddings unavailable (${err instanceof Error ? err.message : String(err)}); using lexical similarity only`,
  );
}

/** The query's vector, or undefined when the provider fails. */
export async function queryVector(embedder: Embedder, text: string): Promise<Float32Array | undefined> {
  try {
    return (await embedder.embed([text]))[0];
  } catch (err) {
    unavailable(err);
    return undefined;
  }
}

interface VectorIndex {
  stamp: string;
  projectId: string;
  ids: string[];
  vectors: Float32Array[];
  byId: Map<string, { vector: Float32Array; textHash: number }>;
  /** Valid items with no stored vector yet, newest first (the write path has not reached them). */
  unembedded: string[];
}
const indexes = new WeakMap<Database, VectorIndex>();

/** Changes when anything may have been committed to the file since the last look. */
function stampOf(db: Database): string {
  const v = db.query("SELECT (SELECT data_version FROM pragma_data_version()) AS dv, total_changes() AS tc").get() as {
    dv: number;
    tc: number;
  };
  return `${v.dv}:${v.tc}`;
}

/** The project's stored vectors, from memory while the file is unchanged. */
function vectorIndex(db: Database, projectId: string): VectorIndex {
  const stamp = stampOf(db);
  let idx = indexes.get(db);
  if (idx && idx.stamp === stamp && idx.projectId === projectId) return idx;
  const rows = db
    .query(`SELECT id, embedding FROM memory_items WHERE project_id = ? AND deleted = 0 ORDER BY updated_at DESC`)
    .all(projectId) as Array<{
    id: string;
    embedding: Uint8Array | null;
  }>;
  idx = { stamp, projectId, ids: [], vectors: [], byId: new Map(), unembedded: [] };
  for (const r of rows) {
    const v = decodeStoredVector(r.embedding);
    if (!v) {
      if (r.embedding === null) idx.unembedded.push(r.id);
      continue;
    }
    idx.ids.push(r.id);
    idx.vectors.push(v.vector);
    idx.byId.set(r.id, v);
  }
  indexes.set(db, idx);
  return idx;
}

/** Most items embedded in memory per request (the write path stores vectors over time). */
const MAX_NEW_PER_REQUEST = 64;
/** Newest unembedded items a request looks at for vector candidates. */
const UNEMBEDDED_WINDOW = 256;
/** Vectors made on the read path, by model and text, so that a repeated request does not embed again. */
const transient = new Map<string, Float32Array>();
const TRANSIENT_MAX = 4_096;

/**
 * Vectors for `items`: stored ones while still current; the others from memory or embedded now
 * (at most MAX_NEW_PER_REQUEST), never stored. An unreachable provider is logged and yields no
 * vectors for them (lexical scoring carries on).
 */
export async function itemVectors(
  db: Database,
  projectId: string,
  items: readonly MemoryItem[],
  embedder: Embedder,
): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  const idx = vectorIndex(db, projectId);
  const missing: Array<{ id: string; text: string; key: string }> = [];
  for (const item of items) {
    const text = embeddingText(item);
    const stored = idx.byId.get(item.id);
    if (stored && stored.textHash === fnv1a(text)) {
      out.set(item.id, stored.vector);
      continue;
    }
    const key = `${embedder.model}\u0000${text}`;
    const known = transient.get(key);
    if (known) out.set(item.id, known);
    else if (missing.length < MAX_NEW_PER_REQUEST) missing.push({ id: item.id, text, key });
  }
  if (missing.length === 0) return out;
  try {
    const vecs = await embedder.embed(missing.map((m) => m.text));
    if (transient.size + missing.length > TRANSIENT_MAX) transient.clear();
    missing.forEach((m, i) => {
      out.set(m.id, vecs[i]!);
      transient.set(m.key, vecs[i]!);
    });
  } catch (err) {
    unavailable(err);
  }
  return out;
}

/**
 * Items nearest to `query` by cosine: all stored vectors of the project, plus the newest items the
 * write path has not embedded yet (embedded in memory), so that vector search reaches items no
 * lexical query proposes.
 */
export async function vectorCandidates(
  db: Database,
  projectId: string,
  embedder: Embedder,
  query: Float32Array,
  limit: number,
): Promise<Map<string, number>> {
  const idx = vectorIndex(db, projectId);
  const scored: Array<readonly [string, number]> = [];
  idx.ids.forEach((id, i) => {
    const v = idx.vectors[i]!;
    if (v.length === query.length) scored.push([id, cosine(query, v)] as const);
  });
  if (idx.unembedded.length > 0) {
    const pending = loadItems(db, projectId, idx.unembedded.slice(0, UNEMBEDDED_WINDOW));
    for (const [id, v] of await itemVectors(db, projectId, pending, embedder))
      if (v.length === query.length) scored.push([id, cosine(query, v)] as const);
  }
  scored.sort((a, b) => b[1] - a[1]);
  return new Map(scored.slice(0, limit));
}
