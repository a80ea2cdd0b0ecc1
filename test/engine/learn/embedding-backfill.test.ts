/**
 * The embedding backfill runs on the write path: after process_events extracts memories, their
 * vectors are stored in data.db (a real local OpenAI-compatible server answers); an unreachable
 * provider leaves extraction standing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { decodeEmbedding, embeddingText, openAiCompatibleEmbedder } from "../../../src/engine/llm/embeddings.ts";
import { currentItems } from "../../../src/sql/memory-items.ts";
import { fixtureEvents, request, sandbox } from "./helpers.ts";

let server: ReturnType<typeof Bun.serve>;
let calls = 0;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { input: string[] };
      calls++;
      return Response.json({ data: body.input.map((t, index) => ({ index, embedding: [t.length, 1, 0.5] })) });
    },
  });
});
afterAll(() => server.stop(true));

describe("embedding backfill after extraction", () => {
  test("memories written by process_events get current vectors; a second batch embeds nothing new", async () => {
    const b = sandbox();
    try {
      const embedder = openAiCompatibleEmbedder({ baseUrl: `http://127.0.0.1:${server.port}`, model: "len" });
      const events = fixtureEvents("pitfall-fixed", b.root);
      await processEvents(request(b.root, events), b.deps({ embedder, now: () => Date.parse("2026-06-01T00:00:00Z") }));
      const items = currentItems(b.db, b.root);
      expect(items.length).toBeGreaterThan(0);
      for (const item of items)
        expect(decodeEmbedding(item.embedding, embeddingText(item))).toEqual(
          Float32Array.from([embeddingText(item).length, 1, 0.5]),
        );
      const before = calls;
      await processEvents(request(b.root, events), b.deps({ embedder }));
      expect(calls).toBe(before);
    } finally {
      b.cleanup();
    }
  });

  test("an unreachable provider leaves the extracted memories in place, without vectors", async () => {
    const b = sandbox();
    try {
      const embedder = openAiCompatibleEmbedder({ baseUrl: "http://127.0.0.1:9", model: "x", timeoutMs: 500 });
      await processEvents(request(b.root, fixtureEvents("pitfall-fixed", b.root)), b.deps({ embedder }));
      const items = currentItems(b.db, b.root);
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((i) => i.embedding === null)).toBe(true);
    } finally {
      b.cleanup();
    }
  });
});
