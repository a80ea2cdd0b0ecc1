/**
 * A local stand-in for the model APIs the real hosts call: the Anthropic Messages API (Claude Code)
 * and the OpenAI Responses API (Codex), both streaming (SSE). It plays a script of the model's turns
 * (call a tool with these arguments, …, then say "done") and records every request as received, so a
 * test can read exactly what the host put in front of the model: the system prompt, the tool list,
 * each tool result. No network: it listens on 127.0.0.1 only.
 *
 * A request is the main agent's when it offers tools; the script's turn is the number of tool
 * results already in its conversation. Side requests (titles, quota probes) get a one-word answer.
 */

/** One scripted model turn: call a tool, or answer with text (and so end the agent loop). */
export type Step = { tool: string; input: Record<string, unknown> } | { text: string };

export interface RecordedRequest {
  api: "anthropic" | "openai";
  path: string;
  body: Record<string, unknown>;
}

export interface ModelServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:4321 */
  url: string;
  requests: RecordedRequest[];
  /** Replace the script (the next host run plays it from turn 0). */
  play(steps: Step[]): void;
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

function anthropicReply(step: Step, turn: number, model: string): Response {
  const message = {
    id: `msg_${turn}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
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
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } },
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

function openaiReply(step: Step, turn: number, model: string): Response {
  const id = `resp_${turn}_${Math.random().toString(36).slice(2, 8)}`;
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 1,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 11,
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

/** Start the server on a free loopback port. */
export function startModelServer(): ModelServer {
  let steps: Step[] = [{ text: "done" }];
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST") return new Response("{}", { headers: { "content-type": "application/json" } });
      const body = (await req.json().catch(() => ({}))) as Json;
      const model = typeof body.model === "string" ? body.model : "stand-in";
      if (url.pathname.endsWith("/messages/count_tokens")) return Response.json({ input_tokens: 100 });
      if (url.pathname.endsWith("/messages")) {
        requests.push({ api: "anthropic", path: url.pathname, body });
        const main = Array.isArray(body.tools) && body.tools.length > 0;
        const turn = anthropicToolResults(body);
        return anthropicReply(main ? (steps[turn] ?? { text: "done" }) : { text: "ok" }, turn, model);
      }
      if (url.pathname.endsWith("/responses")) {
        requests.push({ api: "openai", path: url.pathname, body });
        const main = Array.isArray(body.tools) && body.tools.length > 0;
        const turn = openaiToolResults(body);
        return openaiReply(main ? (steps[turn] ?? { text: "done" }) : { text: "ok" }, turn, model);
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
    stop() {
      server.stop(true);
    },
  };
}
