/**
 * Embedding backfill, on the write path after extraction: store vectors for the project's items that
 * lack a current one (no vector yet, or made from older content), the items just written first, then
 * the newest. Bounded per call; a project's backlog is worked off over successive batches. The read
 * path never stores vectors (retrieve/rank/vectors.ts reads them).
 */
import type { Database } from "bun:sqlite";
import { log as rootLog } from "../../shared/log.ts";
import { getMemoryItem } from "../../sql/memory-items.ts";
import { decodeEmbedding, type Embedder, embeddingText, encodeEmbedding } from "../llm/embeddings.ts";

const log = rootLog.child({ service: "learn" });

/** Most items embedded per call. */
export const MAX_EMBEDDED_PER_CALL = 64;

/**
 * Embed and store vectors for up to MAX_EMBEDDED_PER_CALL items of `projectId`: `touched` (items
 * this batch wrote, whose content may have changed) and then items with no vector, newest first.
 * Returns how many were stored. An unreachable provider is logged, never thrown: extraction stands.
 */
export async function backfillEmbeddings(
  db: Database,
  projectId: string,
  embedder: Embedder,
  touched: readonly string[] = [],
): Promise<number> {
  const unembedded = (
    db
      .query(
        `SELECT id FROM memory_items WHERE project_id = ? AND deleted = 0 AND embedding IS NULL ORDER BY updated_at DESC LIMIT ?`,
      )
      .all(projectId, MAX_EMBEDDED_PER_CALL) as Array<{ id: string }>
  ).map((r) => r.id);
  const todo: Array<{ id: string; text: string }> = [];
  for (const id of new Set([...touched, ...unembedded])) {
    if (todo.length >= MAX_EMBEDDED_PER_CALL) break;
    const item = getMemoryItem(db, id);
    if (!item || item.deleted || item.project_id !== projectId) continue;
    const text = embeddingText(item);
    if (!decodeEmbedding(item.embedding, text)) todo.push({ id, text });
  }
  if (todo.length === 0) return 0;
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(todo.map((t) => t.text));
  } catch (err) {
    log.warn(
      `embeddings unavailable (${err instanceof Error ? err.message : String(err)}); ${todo.length} memories stay without vectors until the next batch`,
    );
    return 0;
  }
  const stmt = db.query("UPDATE memory_items SET embedding = ? WHERE id = ?");
  db.transaction(() => {
    todo.forEach((t, i) => stmt.run(encodeEmbedding(vectors[i]!, t.text), t.id));
  }).immediate();
  return todo.length;
}
