/**
 * The OpenAI-compatible adapter: any `/chat/completions` endpoint (Ollama, llama.cpp server, vLLM, OpenAI).
 * A failed call says why (`LlmCallError.kind`): a server that is down or overloaded, a refused key, a
 * rate limit (with its Retry-After) and a timeout are passing; the episode waits for the model.
 */
import { ofetch } from "ofetch";
import { z } from "zod";
import { LlmCallError, type LlmFailureKind, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

/** Retry-After in ms: seconds, or an HTTP date. */
export function retryAfterMs(header: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

interface FetchFailure {
  status?: number;
  response?: { headers?: Headers };
  cause?: { name?: string; code?: string };
}

/** Why a `/chat/completions` call failed, from the HTTP status or the transport error. */
export function failureKind(err: unknown): LlmFailureKind {
  const e = err as FetchFailure;
  const status = e.status;
  if (status === undefined) {
    const name = e.cause?.name ?? "";
    return name === "TimeoutError" || name === "AbortError" ? "timeout" : "unavailable";
  }
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "signed_out";
  if (status === 408 || status === 504) return "timeout";
  if (status === 500 || status === 502 || status === 503 || status === 529) return "unavailable";
  return "failed";
}

const WHY: Record<LlmFailureKind, string> = {
  unavailable: "is not reachable or overloaded",
  signed_out: "refused the API key",
  rate_limited: "is rate-limiting",
  timeout: "did not answer in time (llm.timeout_ms)",
  invalid_answer: "answered in an unexpected shape",
  failed: "refused the request",
};

const ChatResponse = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).optional(),
});

/** Any OpenAI-compatible `/chat/completions` endpoint (Ollama, llama.cpp server, vLLM, OpenAI). */
export class OpenAiCompatibleProvider implements LlmProvider {
  readonly name = "openai_compatible" as const;
  readonly model: string;
  private readonly baseURL: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(opts: { apiKey?: string; model: string; baseURL: string; timeoutMs: number }) {
    this.model = opts.model;
    this.baseURL = opts.baseURL.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.timeoutMs = opts.timeoutMs;
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    let raw: unknown;
    try {
      raw = await ofetch(`${this.baseURL}/chat/completions`, {
        method: "POST",
        retry: 0,
        timeout: this.timeoutMs,
        headers: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {},
        body: {
          model: this.model,
          temperature: 0,
          max_tokens: req.maxTokens,
          messages: [
            { role: "system", content: req.system },
            { role: "user", content: req.prompt },
          ],
        },
      });
    } catch (err) {
      const kind = failureKind(err);
      const status = (err as FetchFailure).status;
      throw new LlmCallError(
        `The OpenAI-compatible endpoint ${WHY[kind]}${status ? ` (HTTP ${status})` : ""}.`,
        err,
        kind,
        kind === "rate_limited" ? retryAfterMs((err as FetchFailure).response?.headers?.get("retry-after")) : undefined,
      );
    }
    const parsed = ChatResponse.safeParse(raw);
    if (!parsed.success)
      throw new LlmCallError(
        `OpenAI-compatible endpoint ${this.baseURL} answered in an unexpected shape.`,
        undefined,
        "invalid_answer",
      );
    return {
      text: parsed.data.choices[0]!.message.content ?? "",
      inputTokens: parsed.data.usage?.prompt_tokens ?? 0,
      outputTokens: parsed.data.usage?.completion_tokens ?? 0,
    };
  }
}
