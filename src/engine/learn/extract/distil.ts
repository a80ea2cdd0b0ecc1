/**
 * The last step of every extractor (offline rules and the LLM alike): a memory reads like a line a
 * teammate writes in the wiki. One or two sentences that stand alone, typically ≤ 60 tokens and never
 * over HARD_CAP; no narration ("Let me…", "I'll…"), no paths of the machine that wrote the
 * transcript (repo-relative inside the project, `~` for a home folder). The raw evidence stays
 * reachable through the item's source events (`sqrl show`, `recall_episode`).
 */
import { portableText } from "../../../shared/portable-paths.ts";
import { estimateTokens } from "../../../shared/tokens.ts";
import type { Candidate } from "./candidate.ts";

/** Typical size of a memory, in tokens (what a 400-token task context needs to fit 5 or more). */
export const TARGET_TOKENS = 60;
/** Never stored longer than this. */
export const HARD_CAP_TOKENS = 120;

/** Sentences of an assistant's running commentary: not knowledge. */
const NARRATION =
  /^(?:(?:now|ok(?:ay)?|great|perfect|good|alright|so|first|next|then)[,!.]?\s+)*(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|i can see|i see|i found|i've|i have|we'll|looking at)\b/i;
const EXCLAMATION_ONLY = /^(?:perfect|great|excellent|done|good|nice|ok(?:ay)?|sure|got it|you're right)[!.]*$/i;

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z`"(])/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Cut `text` to at most `cap` tokens, at a sentence end when one is near, else at a word with "…". */
export function capTokens(text: string, cap: number): string {
  if (estimateTokens(text) <= cap) return text;
  const kept: string[] = [];
  for (const s of splitSentences(text)) {
    if (estimateTokens([...kept, s].join(" ")) > cap) break;
    kept.push(s);
  }
  if (kept.length > 0 && estimateTokens(kept.join(" ")) >= cap * 0.5) return kept.join(" ");
  const words = text.split(/\s+/);
  let lo = 1;
  let hi = words.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTokens(`${words.slice(0, mid).join(" ")}…`) <= cap) lo = mid;
    else hi = mid - 1;
  }
  return `${words
    .slice(0, lo)
    .join(" ")
    .replace(/[,;:]$/, "")}…`;
}

/** The distilled statement: portable paths, narration dropped, whitespace folded, capped. */
export function distilText(text: string, roots: readonly string[]): string {
  const one = portableText(text, roots).replace(/\s+/g, " ").trim();
  const sentences = splitSentences(one).filter((s) => !NARRATION.test(s) && !EXCLAMATION_ONLY.test(s));
  const body = (sentences.length > 0 ? sentences.join(" ") : one).replace(/\s+([.,;:!?])(?=\s|$)/g, "$1");
  return capTokens(body, HARD_CAP_TOKENS);
}

/** Distil a candidate: its content and file paths made portable, its text capped. */
export function distilCandidate(c: Candidate, roots: readonly string[]): Candidate {
  const paths = c.file_paths
    .map((p) => portableText(p, roots))
    .filter((p) => !p.startsWith("~") && !p.startsWith("/") && p !== ".");
  return { ...c, content: distilText(c.content, roots), file_paths: [...new Set(paths)] };
}
