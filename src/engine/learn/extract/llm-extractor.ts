/**
 * The LLM extractor: one call per closed episode. The episode is rendered compactly
 * (episode-render.ts: one numbered line per event, the middle dropped when it still does not fit the
 * context window from config), redacted again before it leaves, and the answer validated with zod — one retry on
 * invalid output, then the caller falls back to the offline rules for this episode. The prompt carries a
 * digest of the repository's guidance (its files and headings, a few hundred tokens at most) so the
 * model leaves out what the agent reads already, and asks for the lesson, not the surface.
 */
import { z } from "zod";
import { callForJson } from "../../llm/json-call.ts";
import type { LlmProvider } from "../../llm/provider.ts";
import type { UsageLedger } from "../../llm/usage.ts";
import { SUMMARY_MAX_TOKENS } from "../summarize.ts";
import { estimateTokens } from "../../../shared/tokens.ts";
import { CandidateShape, clamp01, dedupeCandidates, type Candidate } from "./candidate.ts";
import { clip, type EngineEvent } from "../../events/event-view.ts";
import { renderEpisode } from "./episode-render.ts";

const OUTPUT_TOKENS = 1800;

export const SYSTEM_PROMPT = `You extract long-term engineering memory from one episode of a developer's coding session.
Return ONLY a JSON object: {"summary": string, "items": Item[]}.
- summary: 80-150 tokens. What the user wanted (goal), what changed (files), which commands/tests ran and how they ended, the outcome.
- Item: {"type": "user_style"|"project_fact"|"pitfall"|"recipe", "key": slug, "content": string, "tags": string[], "importance": 0..1, "confidence": 0..1, "scope": "user"|"project", "file_paths": string[], "evidence": number[]}.
  - user_style: a standing rule the user stated, with its subject ("always/never …", "X must …", "add to CLAUDE.md that …"), or a correction they made that holds beyond this task. scope "user" only for how the person works in any repository; this repo's conventions are "project". A request about this task alone ("make the button bigger", "don't commit yet") is not a rule.
  - project_fact: a durable fact a newcomer needs and cannot read in the code in a minute; a DECISION (a choice the user made, with the lasting reason a newcomer would otherwise undo it, e.g. "the Cursor provider always passes --trust: headless runs otherwise stop at a workspace-trust prompt") has tags ["decision"] and key "decision:<slug>". A bare pick among offered options ("Option A") without the user's reason is not a decision, nor is a choice the user calls temporary ("for now", "until …"); what a change or an approved plan did is a changelog entry, not a decision.
  - pitfall: a lesson that lasts: a failure whose cause the session established and whose fix a later run proved, when the cause is not obvious (environment, configuration, ordering, concurrency, tooling, data) — or how a tool or library behaves, shown by the episode itself ("Bun.spawn does not throw on a non-zero exit": a command's output, a test, the docs quoted). The assistant's explanation alone is a guess, not evidence: when nothing in the events confirms it, store nothing. A routine compile, type or lint error fixed by the next edit is NOT a pitfall, nor is how this project's own code behaved before the fix.
  - recipe: a complete command flow that ended green (how to test, build, migrate, release), named by what its commands do, with the plain commands the project uses (its package scripts), not a detour one run took.
  - key: a stable lower-case slug reused for the same subject: package_manager, test_command, lint_command, framework, database, commit_style, decision:<slug>, pitfall:<check>:<slug>, recipe:<purpose>.
  - content: what a good teammate writes in the team wiki: one or two sentences that stand alone (name the subject; no "it"/"this"), 60 tokens or fewer, no log dumps, no "I'll"/"Let me", repo-relative paths only.
  - evidence: the [numbers] of the events that prove the item. Every item needs evidence.
Keep the lesson, not the surface: say the non-obvious part a reader would otherwise get wrong — why it is so, what breaks, what to do instead ("the release tool's clean step wipes dist/, so extra artifacts must be written after it", not "the release pipeline builds into dist/").
Rules: store only what the episode PROVES and what stays true after it. Not memory: questions, one-off requests (an instruction about one ticket), pasted text, what any experienced developer already knows (language syntax, a standard tool's documented basics), a snapshot that the next commit changes (test counts, which tests fail today, the current contents of a file or module), hypotheses the assistant abandoned, a plan's "possible cause" nobody confirmed, a test updated to match the code, and code, names or designs the session did not land (an edit that was reverted or refused, a plan never built, a branch the session left). Never repeat what the repository's guidance already tells the agent (its CLAUDE.md, AGENTS.md, skills and linked docs, listed under "Already in the repository's guidance" when there are any), nor quote or shorten it. Do not invent file paths, commands or versions. No secrets. Fewer, better items: most episodes teach 0-2 things worth a wiki line; return "items": [] when nothing is worth remembering.`;

const LlmItem = CandidateShape.extend({ evidence: z.array(z.number().int().positive()).min(1).max(40) });
export const ExtractionOutput = z.object({
  summary: z.string().min(20).max(2000),
  items: z.array(LlmItem).max(25),
});
export type ExtractionOutput = z.infer<typeof ExtractionOutput>;

/**
 * The same answer as a strict JSON Schema (every property required, no others), for providers with
 * a structured-output option (`codex exec --output-schema`); zod still validates every answer.
 */
export const EXTRACTION_JSON_SCHEMA: Record<string, unknown> = {
  type: "object",
  additionalProperties: false,
  required: ["summary", "items"],
  properties: {
    summary: { type: "string" },
    items: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["type", "key", "content", "tags", "importance", "confidence", "scope", "file_paths", "evidence"],
        properties: {
          type: { type: "string", enum: ["user_style", "project_fact", "pitfall", "recipe"] },
          key: { type: "string" },
          content: { type: "string" },
          tags: { type: "array", items: { type: "string" } },
          importance: { type: "number" },
          confidence: { type: "number" },
          scope: { type: "string", enum: ["user", "project"] },
          file_paths: { type: "array", items: { type: "string" } },
          evidence: { type: "array", items: { type: "integer" } },
        },
      },
    },
  },
};

export interface LlmExtraction {
  summary: string;
  candidates: Candidate[];
}

function clipSummary(s: string): string {
  let t = s.trim();
  while (estimateTokens(t) > SUMMARY_MAX_TOKENS && t.length > 40) t = clip(t, Math.floor(t.length * 0.9));
  return t;
}

/** Extract candidates (and the episode summary) with the LLM. Throws when the call fails or the cap is reached. */
export async function extractWithLlm(
  llm: LlmProvider,
  ledger: UsageLedger,
  episodeId: string,
  events: readonly EngineEvent[],
  contextWindowTokens: number,
  guidanceDigest = "",
): Promise<LlmExtraction> {
  const known = guidanceDigest
    ? `Already in the repository's guidance (the agent reads these files; store nothing they say):\n${guidanceDigest}\n\n`
    : "";
  const budget = Math.max(
    500,
    contextWindowTokens - estimateTokens(SYSTEM_PROMPT) - estimateTokens(known) - OUTPUT_TOKENS - 200,
  );
  const r = renderEpisode(events, budget);
  // The episode first (tools key a request by its "Episode <id>" head), what is known after it.
  const prompt = `Episode ${episodeId} (${r.refs.length} events):\n${r.text}\n\n${known}Return the JSON object now.`;
  const out = await callForJson(
    llm,
    ledger,
    { system: SYSTEM_PROMPT, prompt, maxTokens: OUTPUT_TOKENS, jsonSchema: EXTRACTION_JSON_SCHEMA },
    ExtractionOutput,
  );
  const candidates: Candidate[] = [];
  for (const item of out.items) {
    const ids = [
      ...new Set(item.evidence.map((n) => r.refs[n - 1]?.id).filter((id): id is string => id !== undefined)),
    ];
    if (ids.length === 0 || item.confidence < 0.5) continue; // no proof in this episode: not stored
    candidates.push({
      type: item.type,
      key: item.key,
      content: item.content.trim(),
      tags: item.tags,
      importance: clamp01(item.importance),
      confidence: clamp01(item.confidence),
      scope: item.type === "user_style" ? item.scope : "project",
      file_paths: item.file_paths, // made repo-relative (or dropped when outside the repo) by the distilling step
      source_episode_id: episodeId,
      source_event_ids: ids,
      rule: "llm",
    });
  }
  return { summary: clipSummary(out.summary), candidates: dedupeCandidates(candidates) };
}
