import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeEmbedding, embedderFromConfig, embeddingText, openAiCompatibleEmbedder } from "../../../src/engine/llm/embeddings.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { SearchQuery, TaskContextRequest } from "../../../src/shared/api.ts";
import { getMemoryItem } from "../../../src/sql/memory-items.ts";
import { addItem, tempProject } from "./helpers.ts";

/**
 * A real HTTP server speaking the OpenAI `/v1/embeddings` protocol with a tiny concept model:
 * words of one concept group share a dimension, so "sign-in" and "login" are close.
 */
const CONCEPTS = [["login", "sign", "signin", "session", "authenticate"], ["invoice", "billing", "charge", "payment"], ["deploy", "release", "ship"]];
function embed(text: string): number[] {
  const v = Array(CONCEPTS.length + 1).fill(0);
  for (const w of text.toLowerCase().split(/[^a-z]+/)) {
    const i = CONCEPTS.findIndex((g) => g.includes(w));
    v[i < 0 ? CONCEPTS.length : i] += i < 0 ? 0.05 : 1;
  }
  return v;
}

let server: ReturnType<typeof Bun.serve>;
const requests: Array<{ model: string; input: string[]; auth: string | null }> = [];
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/embeddings") return new Response("no", { status: 404 });
      const body = (await req.json()) as { model: string; input: string[] };
      requests.push({ ...body, auth: req.headers.get("authorization") });
      return Response.json({ object: "list", data: body.input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })), model: body.model });
    },
  });
});
afterAll(() => server.stop(true));

describe("embeddings (OpenAI-compatible /v1/embeddings)", () => {
  test("hybrid similarity finds a memory that shares no word with the task, and stores its vector", async () => {
    const p = tempProject();
    try {
      const now = Date.now();
      const login = addItem(p.db, p.root, { type: "pitfall", key: "login_csrf", content: "Login form posts need the CSRF header or the session is dropped.", importance: 0.6 }, now);
      addItem(p.db, p.root, { type: "pitfall", key: "invoice", content: "Invoice PDFs render with the wrong currency symbol.", importance: 0.9 }, now);
      const embedder = openAiCompatibleEmbedder({ baseUrl: `http://127.0.0.1:${server.port}/v1`, model: "concepts", apiKey: "k123" });
      const offline = retrievalContext(p.db, p.root, { nowMs: now });
      const withEmb = retrievalContext(p.db, p.root, { nowMs: now, embedder });
      const req = TaskContextRequest.parse({ project_id: p.root, task_description: "users cannot sign in since yesterday" });
      expect((await taskContext(offline, req)).has_relevant_memory).toBe(false);
      const r = await taskContext(withEmb, req);
      expect(r.selected_memories.map((m) => m.key)).toEqual(["login_csrf"]);
      expect(r.selected_memories[0]!.reason).toContain("semantically close");
      const stored = getMemoryItem(p.db, login.id)!;
      expect(decodeEmbedding(stored.embedding, embeddingText(stored))).toEqual(Float32Array.from(embed(embeddingText(stored))));
      expect(requests.at(-1)!.model).toBe("concepts");
      expect(requests.some((x) => x.auth === "Bearer k123")).toBe(true);
      const s = await searchMemory(withEmb, SearchQuery.parse({ project_id: p.root, query: "authenticate" }));
      expect(s.results[0]!.key).toBe("login_csrf");
    } finally {
      p.cleanup();
    }
  });

  test("an unreachable provider leaves lexical scoring working", async () => {
    const p = tempProject();
    try {
      addItem(p.db, p.root, { type: "pitfall", key: "k", content: "Invoice totals round twice.", importance: 0.6 }, Date.now());
      const embedder = openAiCompatibleEmbedder({ baseUrl: "http://127.0.0.1:9/v1", model: "x", timeoutMs: 500 });
      const r = await taskContext(retrievalContext(p.db, p.root, { embedder }), TaskContextRequest.parse({ project_id: p.root, task_description: "invoice totals round twice" }));
      expect(r.selected_memories.map((m) => m.key)).toEqual(["k"]);
    } finally {
      p.cleanup();
    }
  });

  test("config: provider none means no embedder", () => {
    expect(embedderFromConfig({ "embeddings.provider": "none", "embeddings.base_url": "", "embeddings.model": "m", "embeddings.api_key_env": "" })).toBeUndefined();
    expect(embedderFromConfig({ "embeddings.provider": "openai_compatible", "embeddings.base_url": "http://127.0.0.1:11434/v1", "embeddings.model": "nomic", "embeddings.api_key_env": "" })!.model).toBe("nomic");
  });
});
