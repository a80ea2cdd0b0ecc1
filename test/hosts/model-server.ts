/**
 * A local stand-in for the model APIs the real hosts call: the Anthropic Messages API (Claude Code)
 * and the OpenAI Responses API (Codex), both streaming (SSE). It plays a script of the model's turns
 * (call a tool with these arguments, …, then say "done") and records every request as received, so a
 * test can read exactly what the host put in front of the model: the system prompt, the tool list,
 * each tool result. No network: it listens on 127.0.0.1 only.
 *
 * A request is the main agent's when it offers tools; the script's turn is the number of tool
 * results already in its conversation. Other requests (titles, quota probes, sqrl's distilling runs
 * through `claude -p` and `codex exec`, which offer no tools) get the answer set with `answer()`, else
 * a one-word one. An answer can also be a refusal as the real services send it (`rateLimited`).
 */

/** One scripted model turn: call a tool, or answer with text (and so end the agent loop). */
export type Step = { tool: string; input: Record<string, unknown> } | { text: string };

export interface RecordedRequest {
  api: "anthropic" | "openai";
  path: string;
  body: Record<string, unknown>;
  /** Lower-case header names: who the host says it is (authorization, x-api-key, …). */
  headers: Record<string, string>;
}

/** An answer to a request that offers no tools: text, or an HTTP refusal with its headers. */
export type Reply = { text: string; inputTokens?: number; outputTokens?: number; delayMs?: number } | Refusal;
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The usage-limit refusal each service sends a signed-in subscription (HTTP 429). */
export function rateLimited(api: "anthropic" | "openai", resetInSeconds = 3600): Refusal {
  const reset = String(Math.floor(Date.now() / 1000) + resetInSeconds);
  if (api === "anthropic")
    return {
      status: 429,
      headers: {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": reset,
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": "rejected",
        "retry-after": String(resetInSeconds),
      },
      body: { type: "error", error: { type: "rate_limit_error", message: "Usage limit reached." } },
    };
  return {
    status: 429,
    headers: { "retry-after": String(resetInSeconds) },
    body: {
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        plan_type: "plus",
        resets_in_seconds: resetInSeconds,
      },
    },
  };
}

export interface ModelServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:4321 */
  url: string;
  requests: RecordedRequest[];
  /** Replace the script (the next host run plays it from turn 0). */
  play(steps: Step[]): void;
  /** How to answer requests that offer no tools (null: a one-word answer). */
  answer(fn: ((req: RecordedRequest) => Reply | undefined) | null): void;
  stop(): void;
}

type Json = Record<string, unknown>;

function sse(events: Array<[string, Json]>): Response {
  const body = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

// ---- Anthropic Messages ---------------------------------------------------------------------------

function anthropicToolResults(body: Json): number {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  let n = 0;
  for (const m of messages)
    if (Array.isArray(m.content)) for (const b of m.content as Json[]) if (b.type === "tool_result") n++;
  return n;
}

function refusal(r: Refusal): Response {
  return new Response(JSON.stringify(r.body), {
    status: r.status,
    headers: { "content-type": "application/json", ...r.headers },
  });
}

function anthropicReply(step: Step, turn: number, model: string, usage = { input: 10, output: 1 }): Response {
  const message = {
    id: `msg_${turn}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: 1 },
  };
  const events: Array<[string, Json]> = [["message_start", { type: "message_start", message }]];
  if ("tool" in step) {
    events.push(
      [
        "content_block_start",
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: `toolu_${turn}`, name: step.tool, input: {} },
        },
      ],
      [
        "content_block_delta",
        {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(step.input) },
        },
      ],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      [
        "message_delta",
        { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } },
      ],
    );
  } else {
    events.push(
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      [
        "content_block_delta",
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: step.text } },
      ],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      [
        "message_delta",
        {
          type: "message_delta",
          delta: { stop_reason: "end_turn", stop_sequence: null },
          usage: { output_tokens: usage.output },
        },
      ],
    );
  }
  events.push(["message_stop", { type: "message_stop" }]);
  return sse(events);
}

// ---- OpenAI Responses -----------------------------------------------------------------------------

function openaiToolResults(body: Json): number {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  return input.filter((i) => typeof i.type === "string" && (i.type as string).endsWith("_output")).length;
}

/** Codex groups an MCP server's tools in a namespace (`mcp__sqrl`): a call names both. */
function codexToolName(tool: string): { name: string; namespace?: string } {
  const m = /^(mcp__[^_]+(?:_[^_]+)*)__(.+)$/.exec(tool);
  return m ? { namespace: m[1]!, name: m[2]! } : { name: tool };
}

function openaiReply(step: Step, turn: number, model: string, tokens = { input: 10, output: 1 }): Response {
  const id = `resp_${turn}_${Math.random().toString(36).slice(2, 8)}`;
  const usage = {
    input_tokens: tokens.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: tokens.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: tokens.input + tokens.output,
  };
  const item: Json =
    "tool" in step
      ? {
          type: "function_call",
          id: `fc_${turn}`,
          call_id: `call_${turn}`,
          ...codexToolName(step.tool),
          arguments: JSON.stringify(step.input),
          status: "completed",
        }
      : {
          type: "message",
          id: `msg_${turn}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: step.text, annotations: [] }],
        };
  const events: Array<[string, Json]> = [
    [
      "response.created",
      { type: "response.created", response: { id, object: "response", model, status: "in_progress", output: [] } },
    ],
    [
      "response.output_item.added",
      { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } },
    ],
  ];
  if (!("tool" in step))
    events.push([
      "response.output_text.delta",
      { type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta: step.text },
    ]);
  events.push(
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    [
      "response.completed",
      {
        type: "response.completed",
        response: { id, object: "response", model, status: "completed", output: [item], usage },
      },
    ],
  );
  return sse(events);
}

function headersOf(req: Request): Record<string, string> {
  return Object.fromEntries([...req.headers.entries()].map(([k, v]) => [k.toLowerCase(), v]));
}

/** The request body as JSON, decompressed first (Codex signed in with ChatGPT sends zstd). */
async function readBody(req: Request): Promise<Json> {
  const raw = new Uint8Array(await req.arrayBuffer());
  const encoding = req.headers.get("content-encoding");
  const bytes = encoding === "zstd" ? Bun.zstdDecompressSync(raw) : encoding === "gzip" ? Bun.gunzipSync(raw) : raw;
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as Json;
  } catch {
    return {};
  }
}

/** Start the server on a free loopback port. */
export function startModelServer(): ModelServer {
  let steps: Step[] = [{ text: "done" }];
  let answerFn: ((req: RecordedRequest) => Reply | undefined) | null = null;
  const requests: RecordedRequest[] = [];
  /** A request without tools: the answer set by the test, else one word. */
  const sideReply = async (rec: RecordedRequest, model: string): Promise<Response> => {
    const reply = answerFn?.(rec) ?? { text: "ok" };
    if ("status" in reply) return refusal(reply);
    if (reply.delayMs) await Bun.sleep(reply.delayMs);
    const usage = { input: reply.inputTokens ?? 10, output: reply.outputTokens ?? 1 };
    return rec.api === "anthropic"
      ? anthropicReply({ text: reply.text }, 0, model, usage)
      : openaiReply({ text: reply.text }, 0, model, usage);
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      // Codex signed in with ChatGPT tries a WebSocket first; the stand-in speaks HTTP only, so it falls back.
      if (req.headers.get("upgrade")?.toLowerCase() === "websocket")
        return new Response("no websocket", { status: 426 });
      if (req.method !== "POST") return new Response("{}", { headers: { "content-type": "application/json" } });
      const body = await readBody(req);
      const model = typeof body.model === "string" ? body.model : "stand-in";
      if (url.pathname.endsWith("/messages/count_tokens")) return Response.json({ input_tokens: 100 });
      if (url.pathname.endsWith("/messages")) {
        const rec: RecordedRequest = { api: "anthropic", path: url.pathname, body, headers: headersOf(req) };
        requests.push(rec);
        const main = Array.isArray(body.tools) && body.tools.length > 0;
        const turn = anthropicToolResults(body);
        return main ? anthropicReply(steps[turn] ?? { text: "done" }, turn, model) : sideReply(rec, model);
      }
      if (url.pathname.endsWith("/responses")) {
        const rec: RecordedRequest = { api: "openai", path: url.pathname, body, headers: headersOf(req) };
        requests.push(rec);
        const main = Array.isArray(body.tools) && body.tools.length > 0;
        const turn = openaiToolResults(body);
        return main ? openaiReply(steps[turn] ?? { text: "done" }, turn, model) : sideReply(rec, model);
      }
      return Response.json(
        { error: { type: "not_found", message: `stand-in has no ${url.pathname}` } },
        { status: 404 },
      );
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    play(next) {
      steps = next;
      requests.length = 0;
    },
    answer(fn) {
      answerFn = fn;
    },
    stop() {
      server.stop(true);
    },
  };
}
