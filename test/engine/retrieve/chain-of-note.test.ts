import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { noteTakerFor } from "../../../src/engine/retrieve/chain-of-note.ts";
import { OpenAiCompatibleProvider } from "../../../src/engine/llm/openai-compatible.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../../../src/shared/api.ts";
import { addItem, tempProject } from "./helpers.ts";

/** A real HTTP server speaking OpenAI chat completions; `answer` decides what the "model" says. */
let answer: (prompt: string) => string | null = () => "{}";
let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { messages: Array<{ role: string; content: string }> };
      const text = answer(body.messages.at(-1)!.content);
      if (text === null) return new Response("overloaded", { status: 500 });
      return Response.json({
        choices: [{ message: { role: "assistant", content: text } }],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      });
    },
  });
});
afterAll(() => server.stop(true));

describe("Chain-of-Note pass (LLM configured)", () => {
  test("the model keeps the memories that matter, with its reasons; invented ids are ignored; the budget still holds", async () => {
    const p = tempProject();
    try {
      const now = Date.now();
      const a = addItem(
        p.db,
        p.root,
        {
          type: "pitfall",
          key: "a",
          content: "Webhook retries double-charge invoices without an idempotency key.",
          importance: 0.7,
        },
        now,
      );
      addItem(
        p.db,
        p.root,
        { type: "recipe", key: "b", content: "Replay a webhook with stripe events resend.", importance: 0.6 },
        now,
      );
      let prompt = "";
      answer = (pr) => {
        prompt = pr;
        return `Here you go: {"selected":[{"memory_id":"${a.id}","reason":"Retries are exactly what the task touches."},{"memory_id":"mem_invented","reason":"x"}]}`;
      };
      const provider = new OpenAiCompatibleProvider({
        model: "m",
        baseURL: `http://127.0.0.1:${server.port}/v1`,
        timeoutMs: 5000,
      });
      const ctx = retrievalContext(p.db, p.root, { nowMs: now, noteTaker: noteTakerFor(provider) });
      const r = await taskContext(
        ctx,
        TaskContextRequest.parse({
          project_id: p.root,
          task_description: "webhook retries charge twice",
          context_budget_tokens: 120,
        }),
      );
      expect(prompt).toContain("webhook retries charge twice");
      expect(prompt).toContain(a.id);
      expect(r.selected_memories.map((m) => [m.key, m.reason])).toEqual([
        ["a", "Retries are exactly what the task touches."],
      ]);
      expect(r.token_estimate).toBeLessThanOrEqual(120);
    } finally {
      p.cleanup();
    }
  });

  test("a failing or invalid answer falls back to the scored selection", async () => {
    const p = tempProject();
    try {
      const now = Date.now();
      addItem(
        p.db,
        p.root,
        { type: "pitfall", key: "a", content: "Webhook retries double-charge invoices.", importance: 0.7 },
        now,
      );
      const provider = new OpenAiCompatibleProvider({
        model: "m",
        baseURL: `http://127.0.0.1:${server.port}/v1`,
        timeoutMs: 5000,
      });
      const ctx = retrievalContext(p.db, p.root, { nowMs: now, noteTaker: noteTakerFor(provider) });
      const req = TaskContextRequest.parse({ project_id: p.root, task_description: "webhook retries charge twice" });
      for (const bad of [() => null, () => "no json here", () => '{"selected":"all"}']) {
        answer = bad;
        const r = await taskContext(ctx, req);
        expect(r.selected_memories.map((m) => m.key)).toEqual(["a"]);
        expect(r.selected_memories[0]!.reason).toContain("webhook");
      }
    } finally {
      p.cleanup();
    }
  });
});
