/**
 * Mem0-style update decisions by the LLM: one call per episode for every candidate that meets stored
 * items on its anchor. Answers are validated (verb, a target among the shown items); anything the
 * model gets wrong falls back to the rule decision for that candidate.
 */
import { z } from "zod";
import type { Candidate } from "../extract/candidate.ts";
import { clip } from "../../events/event-view.ts";
import type { Decision, ExistingItem } from "./update.ts";
import { callForJson } from "../../llm/json-call.ts";
import type { LlmProvider } from "../../llm/provider.ts";
import type { UsageLedger } from "../../llm/usage.ts";

export const DECIDE_SYSTEM = `You maintain a developer's long-term memory. For each NEW candidate you see the EXISTING items stored under the same key.
Choose one verb per candidate:
- NOOP: the candidate says nothing new (same fact, maybe reworded).
- UPDATE_EXISTING: same subject, the candidate adds or refines details; give "content", the merged statement: only what the two say (add no advice of your own), one subject, 60 tokens or fewer.
- DELETE_AND_ADD: the candidate contradicts the existing item because the project changed (e.g. "use pnpm" after "use npm"); the existing one is no longer true.
- When the two disagree about how a tool, command or library behaves (not about a change the project made), keep the account that reads it correctly: NOOP when the existing item is right and the candidate misreads it.
- ADD_NEW: a different thing that happens to share the key; both stay true.
Return ONLY JSON: {"decisions": [{"candidate": number, "verb": string, "target_id": string (for NOOP/UPDATE_EXISTING/DELETE_AND_ADD), "content": string (UPDATE_EXISTING only)}]}.`;

const DecisionShape = z.object({
  candidate: z.number().int().nonnegative(),
  verb: z.enum(["ADD_NEW", "UPDATE_EXISTING", "NOOP", "DELETE_AND_ADD"]),
  target_id: z.string().optional(),
  content: z.string().min(3).max(1200).optional(),
});
export const DecideOutput = z.object({ decisions: z.array(DecisionShape).max(100) });

export interface DecisionCase {
  candidate: Candidate;
  existing: ExistingItem[];
}

/** Decisions by index into `cases`; cases the model left out or answered wrongly are absent. */
export async function decideWithLlm(
  llm: LlmProvider,
  ledger: UsageLedger,
  cases: readonly DecisionCase[],
): Promise<Map<number, Decision>> {
  const out = new Map<number, Decision>();
  if (cases.length === 0) return out;
  const prompt = cases
    .map((c, i) =>
      [
        `Candidate ${i} [${c.candidate.type} ${c.candidate.key}]: ${clip(c.candidate.content, 400)}`,
        ...c.existing.map((e) => `  existing ${e.id}: ${clip(e.content, 400)}`),
      ].join("\n"),
    )
    .join("\n\n");
  const res = await callForJson(
    llm,
    ledger,
    { system: DECIDE_SYSTEM, prompt: `${prompt}\n\nReturn the JSON object now.`, maxTokens: 200 + 120 * cases.length },
    DecideOutput,
  );
  for (const d of res.decisions) {
    const c = cases[d.candidate];
    if (!c || out.has(d.candidate)) continue;
    if (d.verb === "ADD_NEW") {
      out.set(d.candidate, { verb: "ADD_NEW", reason: "llm" });
      continue;
    }
    if (!d.target_id || !c.existing.some((e) => e.id === d.target_id)) continue;
    if (d.verb === "UPDATE_EXISTING")
      out.set(d.candidate, {
        verb: d.verb,
        targetId: d.target_id,
        content: d.content ?? c.candidate.content,
        reason: "llm",
      });
    else out.set(d.candidate, { verb: d.verb, targetId: d.target_id, reason: "llm" });
  }
  return out;
}
