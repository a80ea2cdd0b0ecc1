/**
 * The project's last `sqrl eval`, kept for the `sqrl ui` page: one 0600 JSON file per project under
 * SQRL_HOME/evals/ (named by a hash of the project root; the root is inside, checked on read). Written
 * by `sqrl eval` when it finishes and by the engine (a run from the page, the stale mark after the
 * page's forget action); never by a read. Memory itself (data.db) is not touched.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type EvalReport, StoredEval } from "./eval-report.ts";
import { ensurePrivateDir, writeJsonAtomic } from "./fs-atomic.ts";
import { homePaths } from "./paths.ts";

/** Where the project's last eval is kept. */
export function lastEvalPath(projectRoot: string): string {
  const name = createHash("sha256").update(projectRoot).digest("hex").slice(0, 24);
  return join(homePaths.evals(), `${name}.json`);
}

/** The project's last eval; undefined when none ran (or the file is unreadable: the next run replaces it). */
export function readLastEval(projectRoot: string): StoredEval | undefined {
  const path = lastEvalPath(projectRoot);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = StoredEval.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success && parsed.data.project_id === projectRoot ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Keep `report` as the project's last eval (replacing the one before). */
export function saveLastEval(
  projectRoot: string,
  report: EvalReport,
  by: StoredEval["by"],
  ranAt = new Date().toISOString(),
): StoredEval {
  const stored = StoredEval.parse({ version: 1, project_id: projectRoot, ran_at: ranAt, by, report, stale: null });
  ensurePrivateDir(homePaths.evals());
  writeJsonAtomic(lastEvalPath(projectRoot), stored);
  return stored;
}

/** Mark the last eval stale (its figures describe the memory before `reason`); false when there is none. */
export function markLastEvalStale(projectRoot: string, reason: string, at = new Date().toISOString()): boolean {
  const last = readLastEval(projectRoot);
  if (!last) return false;
  writeJsonAtomic(lastEvalPath(projectRoot), { ...last, stale: { at, reason } });
  return true;
}
