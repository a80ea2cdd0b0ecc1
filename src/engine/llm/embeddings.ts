import type { Database } from "bun:sqlite";
import { ofetch } from "ofetch";
import { z } from "zod";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { ConfigError } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import type { MemoryItem } from "../../sql/memory-items.ts";

/**
 * Optional embeddings for hybrid similarity: any OpenAI-compatible `POST {base_url}/embeddings`
 * (Ollama, llama.cpp server, OpenAI). Vectors live in `memory_items.embedding` as
 * `[u32 version=1][u32 fnv1a(content)][f32 × dims]` (little-endian), so an item whose content changed
 * since it was embedded is embedded again.
 */
export interface Embedder {
  readonly model: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

const EmbeddingsAnswer = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int().optional() })),
});

export interface OpenAiEmbedderOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

export function openAiCompatibleEmbedder(opts: OpenAiEmbedderOptions): Embedder {
  const url = `${opts.baseUrl.replace(/\/+$/, "")}/embeddings`;
  return {
    model: opts.model,
    async embed(texts) {
      if (texts.length === 0) return [];
      const raw = await ofetch(url, {
        method: "POST",
        body: { model: opts.model, input: texts },
        headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
        retry: 0,
        timeout: opts.timeoutMs ?? 10_000,
      });
      const parsed = EmbeddingsAnswer.safeParse(raw);
      if (!parsed.success) throw new Error(`${url} did not answer with {data: [{embedding: number[]}]}`);
      const rows = [...parsed.data.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (rows.length !== texts.length) throw new Error(`${url} returned ${rows.length} embeddings for ${texts.length} inputs`);
      return rows.map((r) => Float32Array.from(r.embedding));
    },
  };
}

/** The embedder configured by `embeddings.*`, or undefined when the provider is `none`. */
export function embedderFromConfig(cfg: Pick<ConfigValues, "embeddings.provider" | "embeddings.base_url" | "embeddings.model" | "embeddings.api_key_env">): Embedder | undefined {
  if (cfg["embeddings.provider"] === "none") return undefined;
  if (!cfg["embeddings.base_url"]) throw new ConfigError("embeddings.provider is set but embeddings.base_url is empty. Set it, e.g. `sqrl config set embeddings.base_url http://127.0.0.1:11434/v1`.");
  const envName = cfg["embeddings.api_key_env"];
  const apiKey = envName ? process.env[envName] : undefined;
  return openAiCompatibleEmbedder({ baseUrl: cfg["embeddings.base_url"], model: cfg["embeddings.model"], ...(apiKey ? { apiKey } : {}) });
}

// ---- storage ----------------------------------------------------------------------------------

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function embeddingText(item: Pick<MemoryItem, "type" | "key" | "content" | "tags">): string {
  return `${item.type} ${item.key}: ${item.content}${item.tags.length > 0 ? ` [${item.tags.join(", ")}]` : ""}`;
}

export function encodeEmbedding(vec: Float32Array, text: string): Uint8Array {
  const buf = new ArrayBuffer(8 + vec.length * 4);
  const view = new DataView(buf);
  view.setUint32(0, 1, true);
  view.setUint32(4, fnv1a(text), true);
  new Float32Array(buf, 8).set(vec);
  return new Uint8Array(buf);
}

/** The stored vector, if it was made from `text` (else undefined: stale or foreign format). */
export function decodeEmbedding(blob: Uint8Array | null, text?: string): Float32Array | undefined {
  if (!blob || blob.byteLength < 12 || (blob.byteLength - 8) % 4 !== 0) return undefined;
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (view.getUint32(0, true) !== 1) return undefined;
  if (text !== undefined && view.getUint32(4, true) !== fnv1a(text)) return undefined;
  const copy = new Uint8Array(blob.byteLength - 8);
  copy.set(blob.subarray(8));
  return new Float32Array(copy.buffer);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

// ---- use at query time ----------------------------------------------------------------------------

/** Most items embedded per request (the rest are embedded by later requests). */
const MAX_NEW_PER_REQUEST = 64;

/**
 * Vectors for `items`: stored ones when still current, the missing ones embedded now (bounded) and
 * stored. An unreachable provider is logged and yields no vectors (lexical scoring carries on).
 */
export async function itemVectors(db: Database, items: readonly MemoryItem[], embedder: Embedder): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  const missing: MemoryItem[] = [];
  for (const item of items) {
    const v = decodeEmbedding(item.embedding, embeddingText(item));
    if (v) out.set(item.id, v);
    else if (missing.length < MAX_NEW_PER_REQUEST) missing.push(item);
  }
  if (missing.length === 0) return out;
  try {
    const texts = missing.map(embeddingText);
    const vecs = await embedder.embed(texts);
    const stmt = db.query("UPDATE memory_items SET embedding = ? WHERE id = ?");
    db.transaction(() => {
      missing.forEach((item, i) => {
        out.set(item.id, vecs[i]!);
        stmt.run(encodeEmbedding(vecs[i]!, texts[i]!), item.id);
      });
    })();
    resetVectorIndex(db);
  } catch (err) {
    log.warn(`embeddings unavailable (${err instanceof Error ? err.message : String(err)}); using lexical similarity only`);
  }
  return out;
}

/**
 * Embed up to MAX_NEW_PER_REQUEST valid items that have no vector yet (newest first), so that
 * vector search can reach items no lexical query has proposed. Bounded per request; a project's
 * backlog is worked off over successive requests.
 */
export async function backfillEmbeddings(db: Database, projectId: string, embedder: Embedder, load: (ids: string[]) => MemoryItem[]): Promise<number> {
  const ids = (db.query(`SELECT id FROM memory_items WHERE project_id = ? AND deleted = 0 AND embedding IS NULL ORDER BY updated_at DESC LIMIT ?`).all(projectId, MAX_NEW_PER_REQUEST) as Array<{ id: string }>).map((r) => r.id);
  if (ids.length === 0) return 0;
  const before = ids.length;
  const got = await itemVectors(db, load(ids), embedder);
  return Math.min(before, got.size);
}

/** The query's vector, or undefined when the provider fails. */
export async function queryVector(embedder: Embedder, text: string): Promise<Float32Array | undefined> {
  try {
    return (await embedder.embed([text]))[0];
  } catch (err) {
    log.warn(`embeddings unavailable (${err instanceof Error ? err.message : String(err)}); using lexical similarity only`);
    return undefined;
  }
}

interface VectorIndex {
  version: number;
  ids: string[];
  vectors: Float32Array[];
}
const indexes = new WeakMap<Database, VectorIndex>();

/**
 * Items nearest to `query` by cosine among all stored vectors of the project (kept in memory per
 * connection, reloaded when another connection commits — `PRAGMA data_version`).
 */
export function vectorCandidates(db: Database, projectId: string, query: Float32Array, limit: number): Map<string, number> {
  const version = (db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  let idx = indexes.get(db);
  if (!idx || idx.version !== version) {
    const rows = db.query(`SELECT id, embedding FROM memory_items WHERE project_id = ? AND deleted = 0 AND embedding IS NOT NULL`).all(projectId) as Array<{ id: string; embedding: Uint8Array }>;
    idx = { version, ids: [], vectors: [] };
    for (const r of rows) {
      const v = decodeEmbedding(r.embedding);
      if (v && v.length === query.length) {
        idx.ids.push(r.id);
        idx.vectors.push(v);
      }
    }
    indexes.set(db, idx);
  }
  const scored = idx.ids.map((id, i) => [id, cosine(query, idx!.vectors[i]!)] as const);
  scored.sort((a, b) => b[1] - a[1]);
  return new Map(scored.slice(0, limit));
}

/** Forget the in-memory vectors of a connection (after this connection stored new ones). */
export function resetVectorIndex(db: Database): void {
  indexes.delete(db);
}
