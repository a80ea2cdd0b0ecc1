/**
 * Embeddings against a real local OpenAI-compatible server: hybrid similarity on the read path
 * (vectors made in memory, never stored), the backfill on the write path (vectors stored), and the
 * proof that task_context and search leave data.db untouched with embeddings configured.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backfillEmbeddings } from "../../../src/engine/learn/embedding-backfill.ts";
import {
  decodeEmbedding,
  embedderFromConfig,
  embeddingText,
  openAiCompatibleEmbedder,
} from "../../../src/engine/llm/embeddings.ts";
import { startEngineServer } from "../../../src/engine/server.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { SearchQuery, TaskContextRequest } from "../../../src/shared/api.ts";
import { addProject } from "../../../src/shared/projects.ts";
import { getMemoryItem } from "../../../src/sql/memory-items.ts";
import { addItem, tempProject } from "./helpers.ts";

/**
 * A real HTTP server speaking the OpenAI `/v1/embeddings` protocol with a tiny concept model:
 * words of one concept group share a dimension, so "sign-in" and "login" are close.
 */
const CONCEPTS = [
  ["login", "sign", "signin", "session", "authenticate"],
  ["invoice", "billing", "charge", "payment"],
  ["deploy", "release", "ship"],
];
function embed(text: string): number[] {
  const v = Array(CONCEPTS.length + 1).fill(0);
  for (const w of text.toLowerCase().split(/[^a-z]+/)) {
    const i = CONCEPTS.findIndex((g) => g.includes(w));
    v[i < 0 ? CONCEPTS.length : i] += i < 0 ? 0.05 : 1;
  }
  return v;
}

/** The memory the hybrid tests look for: it shares no word with their tasks. */
function addLoginPitfall(p: ReturnType<typeof tempProject>, now: number) {
  return addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "login_csrf",
      content: "Login form posts need the CSRF header or the session is dropped.",
      importance: 0.6,
    },
    now,
  );
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
      return Response.json({
        object: "list",
        data: body.input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })),
        model: body.model,
      });
    },
  });
});
afterAll(() => server.stop(true));

describe("embeddings (OpenAI-compatible /v1/embeddings)", () => {
  test("hybrid similarity finds a memory that shares no word with the task; only the write path stores vectors", async () => {
    const p = tempProject();
    try {
      const now = Date.now();
      const login = addLoginPitfall(p, now);
      addItem(
        p.db,
        p.root,
        {
          type: "pitfall",
          key: "invoice",
          content: "Invoice PDFs render with the wrong currency symbol.",
          importance: 0.9,
        },
        now,
      );
      const embedder = openAiCompatibleEmbedder({
        baseUrl: `http://127.0.0.1:${server.port}/v1`,
        model: "concepts",
        apiKey: "k123",
      });
      const offline = retrievalContext(p.db, p.root, { nowMs: now });
      const withEmb = retrievalContext(p.db, p.root, { nowMs: now, embedder });
      const req = TaskContextRequest.parse({
        project_id: p.root,
        task_description: "users cannot sign in since yesterday",
      });
      expect((await taskContext(offline, req)).has_relevant_memory).toBe(false);
      const r = await taskContext(withEmb, req);
      expect(r.selected_memories.map((m) => m.key)).toEqual(["login_csrf"]);
      expect(r.selected_memories[0]!.reason).toContain("semantically close");
      expect(getMemoryItem(p.db, login.id)!.embedding).toBeNull();
      expect(requests.at(-1)!.model).toBe("concepts");
      expect(requests.some((x) => x.auth === "Bearer k123")).toBe(true);

      expect(await backfillEmbeddings(p.db, p.root, embedder)).toBe(2);
      const stored = getMemoryItem(p.db, login.id)!;
      expect(decodeEmbedding(stored.embedding, embeddingText(stored))).toEqual(
        Float32Array.from(embed(embeddingText(stored))),
      );
      expect(await backfillEmbeddings(p.db, p.root, embedder)).toBe(0);
      // Stored vectors let search reach an item no lexical query proposes; only the query is embedded.
      const before = requests.length;
      const s = await searchMemory(withEmb, SearchQuery.parse({ project_id: p.root, query: "authenticate" }));
      expect(s.results[0]!.key).toBe("login_csrf");
      expect(requests.slice(before).map((x) => x.input)).toEqual([["authenticate"]]);
    } finally {
      p.cleanup();
    }
  });

  test("an unreachable provider leaves lexical scoring working", async () => {
    const p = tempProject();
    try {
      addItem(
        p.db,
        p.root,
        { type: "pitfall", key: "k", content: "Invoice totals round twice.", importance: 0.6 },
        Date.now(),
      );
      const embedder = openAiCompatibleEmbedder({ baseUrl: "http://127.0.0.1:9/v1", model: "x", timeoutMs: 500 });
      const r = await taskContext(
        retrievalContext(p.db, p.root, { embedder }),
        TaskContextRequest.parse({ project_id: p.root, task_description: "invoice totals round twice" }),
      );
      expect(r.selected_memories.map((m) => m.key)).toEqual(["k"]);
    } finally {
      p.cleanup();
    }
  });

  test("task_context and search never write data.db, through the engine server with embeddings configured", async () => {
    const home = mkdtempSync(join(tmpdir(), "sqrl-emb-home-"));
    const saved = process.env.SQRL_HOME;
    process.env.SQRL_HOME = home;
    const p = tempProject();
    try {
      writeFileSync(
        join(home, "config.toml"),
        `[embeddings]\nprovider = "openai_compatible"\nbase_url = "http://127.0.0.1:${server.port}/v1"\nmodel = "concepts"\n`,
      );
      addProject(p.root);
      const now = Date.now();
      addLoginPitfall(p, now);
      addItem(
        p.db,
        p.root,
        { type: "recipe", key: "release", content: "Ship a release with the deploy script.", importance: 0.7 },
        now,
      );
      p.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const dbFile = join(p.root, ".ctx", "data.db");
      const fingerprint = () =>
        [dbFile, `${dbFile}-wal`]
          .map((f) => (existsSync(f) ? createHash("sha256").update(readFileSync(f)).digest("hex") : "none"))
          .join(" ");
      const dataVersion = () => (p.db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
      const before = { files: fingerprint(), version: dataVersion(), calls: requests.length };
      const engine = await startEngineServer({ token: "e".repeat(32) });
      try {
        const post = (path: string, body: unknown) =>
          fetch(`http://127.0.0.1:${engine.port}${path}`, {
            method: "POST",
            headers: { authorization: `Bearer ${engine.token}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
        const tc = await post("/task_context", {
          project_id: p.root,
          task_description: "users cannot sign in since yesterday",
        });
        expect(tc.status).toBe(200);
        expect(
          ((await tc.json()) as { selected_memories: Array<{ key: string }> }).selected_memories.map((m) => m.key),
        ).toEqual(["login_csrf"]);
        const search = await post("/search_memory", { project_id: p.root, query: "authenticate" });
        expect(search.status).toBe(200);
        expect(((await search.json()) as { results: Array<{ key: string }> }).results[0]!.key).toBe("login_csrf");
      } finally {
        await engine.stop();
      }
      expect(requests.length).toBeGreaterThan(before.calls); // the embedder was really used
      expect(dataVersion()).toBe(before.version); // no other connection committed
      expect(fingerprint()).toBe(before.files);
      expect(
        (p.db.query("SELECT COUNT(*) AS n FROM memory_items WHERE embedding IS NOT NULL").get() as { n: number }).n,
      ).toBe(0);
    } finally {
      p.cleanup();
      if (saved === undefined) delete process.env.SQRL_HOME;
      else process.env.SQRL_HOME = saved;
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("config: provider none means no embedder", () => {
    expect(
      embedderFromConfig({
        "embeddings.provider": "none",
        "embeddings.base_url": "",
        "embeddings.model": "m",
        "embeddings.api_key_env": "",
      }),
    ).toBeUndefined();
    expect(
      embedderFromConfig({
        "embeddings.provider": "openai_compatible",
        "embeddings.base_url": "http://127.0.0.1:11434/v1",
        "embeddings.model": "nomic",
        "embeddings.api_key_env": "",
      })!.model,
    ).toBe("nomic");
  });
});
