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
  /**
   * The answer's JSON Schema (strict: every property required, no others), for providers whose
   * structured-output option takes one (`codex exec --output-schema`); the others ignore it.
   */
  jsonSchema?: Record<string, unknown>;
}

export interface LlmResponse {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

export type LlmProviderName = "anthropic" | "openai_compatible" | "claude_code" | "codex";

/** A chat model behind sqrl's extraction, summaries and update decisions. */
export interface LlmProvider {
  readonly name: LlmProviderName;
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmResponse>;
}

/**
 * Why a provider call failed. The first four are passing states of the model's side (a CLI not
 * installed or signed out, a usage limit, a timeout, an endpoint down): an episode that met one waits
 * for the model and is tried again. `invalid_answer` and `failed` are final for that call.
 */
export type LlmFailureKind = "unavailable" | "signed_out" | "rate_limited" | "timeout" | "invalid_answer" | "failed";

const RETRYABLE: ReadonlySet<LlmFailureKind> = new Set(["unavailable", "signed_out", "rate_limited", "timeout"]);

/** A provider call failed (HTTP error, timeout, refusal, usage limit); `kind` says whether to wait and retry. */
export class LlmCallError extends SqrlError {
  override readonly name = "LlmCallError";
  constructor(
    message: string,
    cause?: unknown,
    readonly kind: LlmFailureKind = "failed",
    /** When the provider said how long to wait (a usage limit's reset), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super("llm_call_failed", message, { exitCode: 1, status: 502, cause });
  }

  /** The model's side is away for now: wait and try again rather than fall back to the offline rules. */
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}
