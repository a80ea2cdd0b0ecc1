/**
 * One LLM call that must answer JSON of a schema: redacted prompt, daily cap, usage recorded, output
 * validated.
 */
import type { z } from "zod";
import { describeZodError } from "../../shared/http-guard.ts";
import { SqrlError } from "../../shared/errors.ts";
import { redactText } from "../../shared/privacy/redact.ts";
import { estimateTokens } from "../../shared/tokens.ts";
import type { LlmProvider, LlmRequest } from "./types.ts";
import type { UsageLedger } from "./usage.ts";

/** The daily cap would be crossed: no call was made. */
export class LlmCapReachedError extends SqrlError {
  override readonly name = "LlmCapReachedError";
  constructor() {
    super(
      "llm_cap_reached",
      "The daily LLM token cap is reached; raise llm.daily_token_cap or wait for tomorrow (UTC).",
    );
  }
}

/** The model answered twice with something that is not the JSON asked for. */
export class LlmInvalidOutputError extends SqrlError {
  override readonly name = "LlmInvalidOutputError";
  constructor(detail: string) {
    super(
      "llm_invalid_output",
      `The LLM answered with invalid JSON twice (${detail}); the offline extractor is used instead.`,
    );
  }
}

/** The first JSON object in a model answer (bare, or inside a ```json fence). */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const body = (fenced?.[1] ?? text).trim();
  const start = body.indexOf("{");
  const end = body.lastIndexOf("}");
  if (start < 0 || end <= start) throw new Error("no JSON object in the answer");
  return JSON.parse(body.slice(start, end + 1));
}

/**
 * One LLM call whose answer must be JSON matching `schema`: the prompt is redacted again right
 * before it leaves, the cap is checked before each attempt, tokens are recorded, and an invalid
 * answer gets exactly one retry that says what was wrong.
 */
export async function callForJson<T>(
  llm: LlmProvider,
  ledger: UsageLedger,
  req: LlmRequest,
  schema: z.ZodType<T>,
): Promise<T> {
  const safe: LlmRequest = { ...req, system: redactText(req.system), prompt: redactText(req.prompt) };
  let prompt = safe.prompt;
  let lastError = "";
  for (let attempt = 0; attempt < 2; attempt++) {
    const estimate = estimateTokens(safe.system) + estimateTokens(prompt) + safe.maxTokens;
    if (!ledger.canSpend(estimate)) throw new LlmCapReachedError();
    let text: string;
    try {
      const res = await llm.complete({ ...safe, prompt });
      ledger.record(
        llm.name,
        llm.model,
        res.inputTokens || estimate - safe.maxTokens,
        res.outputTokens || estimateTokens(res.text),
        false,
      );
      text = res.text;
    } catch (err) {
      ledger.record(llm.name, llm.model, 0, 0, true);
      throw err;
    }
    try {
      const parsed = schema.safeParse(extractJson(text));
      if (parsed.success) return parsed.data;
      lastError = describeZodError(parsed.error);
    } catch (err) {
      lastError = (err as Error).message;
    }
    prompt = `${safe.prompt}\n\nYour previous answer was rejected: ${lastError}. Answer again with ONLY the JSON object described above, nothing else.`;
  }
  throw new LlmInvalidOutputError(lastError);
}
