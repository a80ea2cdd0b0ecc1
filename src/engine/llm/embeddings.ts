/**
 * Embeddings client and vector codec: any OpenAI-compatible `POST {base_url}/embeddings` (Ollama,
 * llama.cpp server, OpenAI). Vectors live in `memory_items.embedding` as
 * `[u32 version=1][u32 fnv1a(content)][f32 × dims]` (little-endian), so an item whose content changed
 * since it was embedded is embedded again. Storing vectors is the write path's job
 * (learn/embedding-backfill.ts); the read path only reads them (retrieve/rank/vectors.ts).
 */
import { ofetch } from "ofetch";
import { z } from "zod";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { ConfigError } from "../../shared/errors.ts";
import type { MemoryItem } from "../../sql/memory-items.ts";

/** Turns texts into vectors (one per text, same order). */
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
      if (rows.length !== texts.length)
        throw new Error(`${url} returned ${rows.length} embeddings for ${texts.length} inputs`);
      return rows.map((r) => Float32Array.from(r.embedding));
    },
  };
}

/** The embedder configured by `embeddings.*`, or undefined when the provider is `none`. */
export function embedderFromConfig(
  cfg: Pick<
    ConfigValues,
    "embeddings.provider" | "embeddings.base_url" | "embeddings.model" | "embeddings.api_key_env"
  >,
): Embedder | undefined {
  if (cfg["embeddings.provider"] === "none") return undefined;
  if (!cfg["embeddings.base_url"])
    throw new ConfigError(
      "embeddings.provider is set but embeddings.base_url is empty. Set it, e.g. `sqrl config set embeddings.base_url http://127.0.0.1:11434/v1`.",
    );
  const envName = cfg["embeddings.api_key_env"];
  const apiKey = envName ? process.env[envName] : undefined;
  return openAiCompatibleEmbedder({
    baseUrl: cfg["embeddings.base_url"],
    model: cfg["embeddings.model"],
    ...(apiKey ? { apiKey } : {}),
  });
}

// ---- codec ------------------------------------------------------------------------------------

/** 32-bit FNV-1a of a text: the stamp that tells a current vector from a stale one. */
export function fnv1a(text: string): number {
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

/** A stored vector and the hash of the text it was made from. */
export interface StoredVector {
  vector: Float32Array;
  textHash: number;
}

/** The stored vector and its text hash, or undefined for an empty or foreign blob. */
export function decodeStoredVector(blob: Uint8Array | null): StoredVector | undefined {
  if (!blob || blob.byteLength < 12 || (blob.byteLength - 8) % 4 !== 0) return undefined;
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (view.getUint32(0, true) !== 1) return undefined;
  const copy = new Uint8Array(blob.byteLength - 8);
  copy.set(blob.subarray(8));
  return { vector: new Float32Array(copy.buffer), textHash: view.getUint32(4, true) };
}

/** The stored vector, if it was made from `text` (else undefined: stale or foreign format). */
export function decodeEmbedding(blob: Uint8Array | null, text?: string): Float32Array | undefined {
  const stored = decodeStoredVector(blob);
  if (!stored || (text !== undefined && stored.textHash !== fnv1a(text))) return undefined;
  return stored.vector;
}
