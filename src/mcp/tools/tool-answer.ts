/**
 * What a sqrl tool hands the host, and so the model. Claude Code and Codex (like VS Code) forward
 * `JSON.stringify(structuredContent)` to the model, not the text content, so the structured result
 * IS the answer the budget is about. It is kept compact: the rendered markdown once (each memory
 * once), the project by name, and whether anything relevant was found; no ids, timestamps or
 * absolute paths. What the host forwards — that JSON, or for the hosts that forward the JSON and the
 * markdown both (src/mcp/hosts/forwarding.ts), the two together — stays within the caller's budget,
 * and the markdown's footer reports its count.
 */
import { basename } from "node:path";
import { z } from "zod";
import { userHome } from "../../shared/paths.ts";
import type { TokenCounter } from "../../shared/tokens.ts";
import { DEFAULT_FORWARDING, forwardedParts, type HostForwarding } from "../hosts/forwarding.ts";

export const ToolAnswer = z.object({
  project: z.string().describe("The project's name (its folder)."),
  has_relevant_memory: z.boolean().describe("false: nothing relevant was found; ignore this result."),
  markdown: z.string().describe("The answer, rendered within the token budget; its last line reports the tokens used."),
});
export type ToolAnswer = z.infer<typeof ToolAnswer>;

/** The text the host forwards to the model for this answer (default: the JSON alone). */
export function forwardedText(answer: ToolAnswer, forwarding: HostForwarding = DEFAULT_FORWARDING): string {
  return forwardedParts({ json: JSON.stringify(answer), text: answer.markdown }, forwarding);
}

const FOOTER = /Budget: ~(\d+)\/(\d+) tokens/g;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A path ends here: not followed by more of a name (`/repo` in `/repo2` or `/repo.old` is not it). */
const END = "(?![\\w-]|\\.\\w)";

/**
 * Replace this machine's paths in text meant for the model: the project root becomes relative
 * (`<root>/src/a.ts` → `src/a.ts`, the root itself → `.`, or "this project" at a sentence's end),
 * the home folder becomes `~`.
 */
export function scrubPaths(text: string, projectRoot: string | undefined, home = userHome()): string {
  let out = text;
  if (projectRoot && projectRoot.length > 1) {
    const root = escapeRegExp(projectRoot.replace(/\/+$/, ""));
    out = out
      .replace(new RegExp(`${root}/`, "g"), "")
      .replace(new RegExp(`${root}(?=\\.(?:\\s|$))`, "g"), "this project") // "… is not in <root>." reads as a sentence
      .replace(new RegExp(`${root}${END}`, "g"), ".");
  }
  if (home && home.length > 1)
    out = out.replace(new RegExp(`${escapeRegExp(home.replace(/\/+$/, ""))}(?=/|${END})`, "g"), "~");
  return out;
}

/** The project's name as the model sees it. */
export function projectName(projectRoot: string): string {
  return basename(projectRoot) || projectRoot;
}

/** Set the last footer's figures to `n` used of `budget`. */
function withFooter(markdown: string, n: number, budget: number): string {
  const matches = [...markdown.matchAll(FOOTER)];
  const last = matches.at(-1);
  if (!last || last.index === undefined) return markdown;
  return `${markdown.slice(0, last.index)}Budget: ~${n}/${budget} tokens${markdown.slice(last.index + last[0].length)}`;
}

export function hasFooter(markdown: string): boolean {
  return [...markdown.matchAll(FOOTER)].length > 0;
}

/**
 * The answer with its footer made true: `~N` is the token count of what the host forwards (by
 * default the JSON itself).
 * Changing the figure can change the count by a token, so it is settled by repeating; if it never
 * settles the larger figure is kept (the footer must not understate). Returns the final count.
 */
export function settleFooter(
  answer: ToolAnswer,
  budget: number,
  counter: TokenCounter,
  forwarding: HostForwarding = DEFAULT_FORWARDING,
): { answer: ToolAnswer; tokens: number } {
  const count = (a: ToolAnswer) => counter.count(forwardedText(a, forwarding));
  if (!hasFooter(answer.markdown)) return { answer, tokens: count(answer) };
  let figure = count({ ...answer, markdown: withFooter(answer.markdown, budget, budget) });
  for (let i = 0; i < 4; i++) {
    const next = { ...answer, markdown: withFooter(answer.markdown, figure, budget) };
    const n = count(next);
    if (n === figure) return { answer: next, tokens: n };
    figure = Math.max(figure, n);
  }
  const next = { ...answer, markdown: withFooter(answer.markdown, figure, budget) };
  return { answer: next, tokens: count(next) };
}

/** The configured token counter (`tokens.counter`), the same one the engine packs with. */
export async function configCounter(): Promise<TokenCounter> {
  const [{ readConfigFile }, { loadTokenCounter }] = await Promise.all([
    import("../../shared/config.ts"),
    import("../../shared/tokens.ts"),
  ]);
  const name = readConfigFile()["tokens.counter"];
  return loadTokenCounter(name === "o200k" || name === "chars4" ? name : "accurate");
}
