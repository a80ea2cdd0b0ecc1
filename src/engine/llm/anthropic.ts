/**
 * The Anthropic adapter: Claude through the official SDK (Messages API). A failed call says why
 * (`LlmCallError.kind`, http-failure.ts): overloaded, a refused key, a rate limit (with its
 * retry-after) and a timeout are passing, and the episode waits for the model.
 */
import Anthropic from "@anthropic-ai/sdk";
import { FAILURE_WHY, httpFailureKind, retryAfterMs } from "./http-failure.ts";
import { LlmCallError, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

/** Claude through the official SDK (Messages API). Retries are sqrl's business, so the SDK makes none. */
export class AnthropicProvider implements LlmProvider {
  readonly name = "anthropic" as const;
  readonly model: string;
  private readonly client: Anthropic;

  constructor(opts: { apiKey: string; model: string; baseURL?: string; timeoutMs: number }) {
    this.model = opts.model;
    this.client = new Anthropic({ apiKey: opts.apiKey, baseURL: opts.baseURL, timeout: opts.timeoutMs, maxRetries: 0 });
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    try {
      const msg = await this.client.messages.create({
        model: this.model,
        max_tokens: req.maxTokens,
        system: req.system,
        messages: [{ role: "user", content: req.prompt }],
      });
      const text = msg.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      return { text, inputTokens: msg.usage?.input_tokens ?? 0, outputTokens: msg.usage?.output_tokens ?? 0 };
    } catch (err) {
      const status = err instanceof Anthropic.APIError ? err.status : undefined;
      const kind = httpFailureKind(status, err instanceof Anthropic.APIConnectionTimeoutError);
      const headers = err instanceof Anthropic.APIError ? err.headers : undefined;
      throw new LlmCallError(
        `The Anthropic API ${FAILURE_WHY[kind]}${status ? ` (HTTP ${status})` : ""}.`,
        err,
        kind,
        kind === "rate_limited" ? retryAfterMs(headers?.get("retry-after")) : undefined,
      );
    }
  }
}
