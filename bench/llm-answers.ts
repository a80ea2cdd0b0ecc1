/**
 * The model stand-in of `memory-quality --record DIR / --answers DIR` (issue 25): a local endpoint on
 * 127.0.0.1 that speaks the OpenAI Chat Completions API, so the real `openai_compatible` provider and
 * the whole pipeline run unchanged. Each request is keyed by a hash of its text with the episode id
 * left out (episode ids are random per run; the rendered episode is not).
 *
 * - record: every extraction request is saved as `<key>.json` ({key, kind, episode, system, prompt,
 *   max_tokens}); with answers as well, every request that had none (an update decision about the
 *   model's own candidates, a retry after an invalid answer), for a next round of answers.
 * - answers: `<answers>/<key>.json` holds the text the model returns (for an extraction request, the
 *   JSON object the system prompt asks for); it is sent back as the completion. A request with no
 *   answer is listed and refused with HTTP 404 (a final failure: that call falls back to the rules),
 *   never answered with something made up.
 * Token usage is reported as sqrl estimates it (estimateTokens of the request and of the answer).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { estimateTokens } from "../src/shared/tokens.ts";

export type RequestKind = "extraction" | "decision" | "summary" | "other";

/** What an extraction prompt starts with: `Episode <id> (<n> events):`. */
const EPISODE_HEAD = /^Episode (\S+) \(/;

/** The request's key: sha256 of the system prompt and the prompt without the episode id (24 hex digits). */
export function requestKey(system: string, prompt: string): string {
  const text = `${system}\n\n${prompt.replace(EPISODE_HEAD, "Episode (")}`;
  return createHash("sha256").update(text).digest("hex").slice(0, 24);
}

export function requestKind(system: string): RequestKind {
  if (system.startsWith("You extract long-term engineering memory")) return "extraction";
  if (system.includes("You maintain a developer's long-term memory")) return "decision";
  if (system.startsWith("Summarize one episode")) return "summary";
  return "other";
}

/** One request the stand-in saw. */
export interface SeenRequest {
  key: string;
  kind: RequestKind;
  /** The episode an extraction request is about. */
  episode: string | null;
  inputTokens: number;
  /** Tokens of the answer sent back (0 when there was none). */
  outputTokens: number;
  answered: boolean;
}

export interface AnswerServer {
  /** Base URL for `llm.base_url` (…/v1). */
  url: string;
  seen: SeenRequest[];
  stop(): void;
}

export function startAnswerServer(opts: { record?: string; answers?: string }): AnswerServer {
  if (opts.record) mkdirSync(opts.record, { recursive: true });
  const seen: SeenRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions")
        return new Response("not found", { status: 404 });
      const body = (await req.json()) as {
        max_tokens?: number;
        messages: Array<{ role: string; content: string }>;
      };
      const system = body.messages.find((m) => m.role === "system")?.content ?? "";
      const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
      const key = requestKey(system, prompt);
      const kind = requestKind(system);
      const episode = kind === "extraction" ? (EPISODE_HEAD.exec(prompt)?.[1] ?? null) : null;
      const answerFile = opts.answers ? join(opts.answers, `${key}.json`) : null;
      const answered = answerFile !== null && existsSync(answerFile);
      if (opts.record && (kind === "extraction" || (opts.answers && !answered))) {
        const file = join(opts.record, `${key}.json`);
        if (!existsSync(file))
          writeFileSync(
            file,
            `${JSON.stringify({ key, kind, episode, system, prompt, max_tokens: body.max_tokens ?? null }, null, 1)}\n`,
          );
      }
      const inputTokens = estimateTokens(system) + estimateTokens(prompt);
      if (!answerFile || !answered) {
        seen.push({ key, kind, episode, inputTokens, outputTokens: 0, answered: false });
        return Response.json({ error: { message: "no recorded answer for this request" } }, { status: 404 });
      }
      const text = readFileSync(answerFile, "utf8");
      const outputTokens = estimateTokens(text);
      seen.push({ key, kind, episode, inputTokens, outputTokens, answered: true });
      return Response.json({
        id: `stand-in-${seen.length}`,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: inputTokens, completion_tokens: outputTokens },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, seen, stop: () => server.stop(true) };
}
