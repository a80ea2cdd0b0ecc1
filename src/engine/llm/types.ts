/**
 * What every LLM adapter implements and every caller uses (request, response, provider, the call
 * error): kept apart from provider.ts, which loads the adapters, so that adapters need not import it.
 */
import { SqrlError } from "../../shared/errors.ts";

/** One completion request: a system prompt, one user prompt, an output ceiling. */
export interface LlmRequest {
  system: string;
  prompt: string;
  maxTokens: number;
}

export interface LlmResponse {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/** A chat model behind sqrl's extraction, summaries and update decisions. */
export interface LlmProvider {
  readonly name: "anthropic" | "openai_compatible";
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmResponse>;
}

/** A provider call failed (HTTP error, timeout, refusal): the caller falls back to offline. */
export class LlmCallError extends SqrlError {
  override readonly name = "LlmCallError";
  constructor(message: string, cause?: unknown) {
    super("llm_call_failed", message, { exitCode: 1, status: 502, cause });
  }
}
