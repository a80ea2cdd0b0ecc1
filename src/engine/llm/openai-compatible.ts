/**
 * The OpenAI-compatible adapter: any `/chat/completions` endpoint (Ollama, llama.cpp server, vLLM, OpenAI).
 * A failed call says why (`LlmCallError.kind`): a server that is down or overloaded, a refused key, a
 * rate limit (with its Retry-After) and a timeout are passing; the episode waits for the model.
 */
import { ofetch } from "ofetch";
import { z } from "zod";
import { FAILURE_WHY, httpFailureKind, retryAfterMs } from "./http-failure.ts";
import { LlmCallError, type LlmFailureKind, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

interface FetchFailure {
  status?: number;
  response?: { headers?: Headers };
  cause?: { name?: string; code?: string };
}

/** Why a `/chat/completions` call failed, from the HTTP status or the transport error. */
function failureKind(err: unknown): LlmFailureKind {
  const e = err as FetchFailure;
  const name = e.cause?.name ?? "";
  return httpFailureKind(e.status, name === "TimeoutError" || name === "AbortError");
}

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
        `The OpenAI-compatible endpoint ${FAILURE_WHY[kind]}${status ? ` (HTTP ${status})` : ""}.`,
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
