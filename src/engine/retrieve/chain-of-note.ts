/**
 * Chain-of-Note for task context (reference §5.5 step 2): with an LLM configured, the model reads the
 * task and the scored candidates, keeps the memories that truly matter and writes one short reason
 * each. Its answer is validated with zod; ids it did not receive are dropped by the caller; the
 * result is packed into the budget afterwards like any other selection. Counts against the daily cap.
 */
import { z } from "zod";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { redactText } from "../../shared/privacy/redact.ts";
import { createProvider, type LlmProvider } from "../llm/provider.ts";
import { StateDbLedger, type UsageLedger } from "../llm/usage.ts";
import type { NoteCandidate, NoteTaker } from "./retrieval-context.ts";

const Picks = z.object({
  selected: z.array(z.object({ memory_id: z.string(), reason: z.string().max(400) })),
});

const SYSTEM =
  "You are building a memory pack for a coding assistant. Given a task and candidate memories, decide which " +
  "memories are truly relevant for this task and, for each, explain in one short sentence why it matters for " +
  'this task. Answer with JSON only: {"selected":[{"memory_id":"...","reason":"..."}]}, most useful first. ' +
  'If nothing is relevant, answer {"selected":[]}.';

function extractJson(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) throw new Error("no JSON object in the answer");
  return JSON.parse(text.slice(start, end + 1));
}

export function noteTakerFor(provider: LlmProvider, ledger?: UsageLedger): NoteTaker {
  return {
    async pick(task: string, candidates: readonly NoteCandidate[]) {
      const prompt = [
        `Task: ${redactText(task)}`, // secrets never reach an LLM
        "",
        "Candidate memories:",
        ...candidates.map((c) => `- id=${c.memory_id} [${c.type}] ${c.content.replace(/\s+/g, " ").slice(0, 500)}`),
      ].join("\n");
      const estimate = Math.ceil(prompt.length / 3) + 600;
      if (ledger && !ledger.canSpend(estimate)) throw new Error("daily LLM token cap reached");
      let failed = true;
      let usage = { in: 0, out: 0 };
      try {
        const res = await provider.complete({ system: SYSTEM, prompt, maxTokens: 600 });
        usage = { in: res.inputTokens, out: res.outputTokens };
        const parsed = Picks.parse(extractJson(res.text));
        failed = false;
        return parsed.selected;
      } finally {
        ledger?.record(provider.name, provider.model, usage.in, usage.out, failed);
      }
    },
  };
}

/**
 * The Chain-of-Note pass configured by `llm.*`, or undefined when sqrl runs offline. Never through
 * an agent CLI (`claude_code`, `codex`): starting one takes seconds, and serving never waits for the model.
 */
export async function llmNoteTaker(cfg: ConfigValues): Promise<NoteTaker | undefined> {
  const kind = cfg["llm.provider"];
  if (kind === "none" || kind === "claude_code" || kind === "codex") return undefined;
  const provider = await createProvider(cfg);
  return provider ? noteTakerFor(provider, new StateDbLedger(cfg["llm.daily_token_cap"])) : undefined;
}
