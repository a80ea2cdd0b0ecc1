/**
 * The `sqrl ui` page's eval: what GET /eval answers (the project's last eval, its items worth most and
 * those never needed as they stand today, a run in progress), and `sqrl eval` run by the engine for
 * the page's "Run the eval" button: one run at a time per project, in the background (the page polls
 * GET /eval for its progress), its report kept as the project's last eval when it ends
 * (src/shared/last-eval.ts). The replay itself only reads data.db (src/engine/retrieve/eval/).
 */
import type { Database } from "bun:sqlite";
import type { EvalReport, EvalStatus } from "../shared/eval-report.ts";
import { readLastEval, saveLastEval } from "../shared/last-eval.ts";
import { log as rootLog } from "../shared/log.ts";
import type { TokenCounter } from "../shared/tokens.ts";
import { neverNeeded } from "./learn/eval-forget.ts";
import { evaluateProject } from "./retrieve/eval/replay-eval.ts";

/** Items listed as worth most on the page. */
const MOST = 10;

const log = rootLog.child({ service: "eval" });

export interface EvalRun {
  started_at: string;
  done: number;
  total: number;
}

export interface EvalRunOptions {
  budget: number;
  counter: TokenCounter;
  userId: string;
  sessions?: number;
}

/** Runs in progress and the last failure, per project root. */
export class EvalRuns {
  private readonly running = new Map<string, EvalRun>();
  private readonly failed = new Map<string, string>();

  /** The run in progress for the project, if any. */
  current(root: string): EvalRun | null {
    return this.running.get(root) ?? null;
  }

  /** Why the last run from the page failed (null: it did not, or none ran). */
  error(root: string): string | null {
    return this.failed.get(root) ?? null;
  }

  /** Start a run unless one is in progress; either way, the run in progress. `finished` resolves when it ends (tests). */
  start(db: Database, root: string, opts: EvalRunOptions): { run: EvalRun; finished: Promise<EvalReport | undefined> } {
    const existing = this.running.get(root);
    if (existing) return { run: existing, finished: Promise.resolve(undefined) };
    const run: EvalRun = { started_at: new Date().toISOString(), done: 0, total: 0 };
    this.running.set(root, run);
    this.failed.delete(root);
    const finished = evaluateProject(db, root, {
      budget: opts.budget,
      counter: opts.counter,
      userId: opts.userId,
      ...(opts.sessions !== undefined ? { sessions: opts.sessions } : {}),
      progress: (done, total) => {
        run.done = done;
        run.total = total;
      },
    })
      .then((report) => {
        saveLastEval(root, report, "page");
        log.info(`eval done project=${root} sessions=${report.sessions_evaluated}`);
        return report;
      })
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        this.failed.set(
          root,
          `The eval failed: ${message.slice(0, 300)}. Run \`sqrl eval\` in a terminal for details.`,
        );
        log.error(`eval failed project=${root}: ${message}`);
        return undefined;
      })
      .finally(() => this.running.delete(root));
    return { run, finished };
  }
}

/** GET /eval: the last eval of the project for the page, and the page's run in progress or its failure. Read only. */
export function evalStatus(db: Database, root: string, runs: EvalRuns): EvalStatus {
  const stored = readLastEval(root);
  let last: EvalStatus["last"] = null;
  if (stored) {
    const { sessions: _s, items, ...summary } = stored.report;
    last = {
      ran_at: stored.ran_at,
      by: stored.by,
      stale: stored.stale,
      summary,
      most: items
        .filter((i) => i.served_needed > 0)
        .sort((a, b) => b.served_needed - a.served_needed || a.served_unused - b.served_unused)
        .slice(0, MOST),
      never_needed: neverNeeded(db, stored),
    };
  }
  return { type: "eval_status", project_id: root, last, running: runs.current(root), error: runs.error(root) };
}
