/**
 * Failure chains (rule `pitfalls`): a check that failed, failed again as often as it did, and then
 * passed; a `git commit` blocked by its hook and then landed counts as one.
 */
import { GIT_COMMIT, mainStep, sameCheck, type CommandRun } from "../../../events/commands.ts";
import { clip } from "../../../events/event-view.ts";

/** The checks whose failures can teach something. */
export const PITFALL_KINDS = new Set([
  "test",
  "lint",
  "typecheck",
  "build",
  "migrate",
  "generate",
  "install",
  "format",
  "dev",
]);

export function describeCommand(run: CommandRun): string {
  const s = mainStep(run);
  return clip(s ? s.text : run.ev.command, 90);
}

export interface Chain {
  first: CommandRun;
  lastFail: CommandRun;
  pass: CommandRun;
  attempts: number;
}

/** A `git commit` is a check too when hooks run: a failed commit blocked by its pre-commit hook, then a commit that lands. */
export function isCommit(r: CommandRun): boolean {
  return GIT_COMMIT.test(r.ev.command);
}

function sameRun(a: CommandRun, b: CommandRun): boolean {
  return isCommit(a) || isCommit(b) ? isCommit(a) && isCommit(b) : sameCheck(a, b);
}

export function findChains(runs: readonly CommandRun[]): { chains: Chain[]; unresolved: CommandRun[] } {
  const used = new Set<CommandRun>();
  const chains: Chain[] = [];
  const unresolved: CommandRun[] = [];
  for (let i = 0; i < runs.length; i++) {
    const f = runs[i]!;
    if (used.has(f) || f.outcome !== "fail" || !(PITFALL_KINDS.has(f.kind) || isCommit(f))) continue;
    let lastFail = f;
    let attempts = 1;
    let pass: CommandRun | null = null;
    used.add(f);
    for (let j = i + 1; j < runs.length; j++) {
      const r = runs[j]!;
      if (!sameRun(f, r)) continue;
      used.add(r);
      if (r.outcome === "fail") {
        lastFail = r;
        attempts++;
      } else if (r.outcome === "pass") {
        pass = r;
        break;
      }
    }
    if (pass) chains.push({ first: f, lastFail, pass, attempts });
    else unresolved.push(f);
  }
  return { chains, unresolved };
}
