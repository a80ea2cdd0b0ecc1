/**
 * Yes/no questions for commands that change files outside sqrl's own folders (`--yes` answers for the user).
 */
import { consola } from "consola";

/**
 * Ask a yes/no question only when a human can answer: with `--yes` the answer is yes; without a
 * terminal on stdin it is `fallback` (consola.prompt would otherwise hang forever).
 */
export async function confirm(question: string, opts: { yes: boolean; fallback?: boolean }): Promise<boolean> {
  if (opts.yes) return true;
  if (!process.stdin.isTTY) return opts.fallback ?? false;
  const answer = await consola.prompt(question, { type: "confirm", initial: true, cancel: "default" });
  return answer === true;
}
