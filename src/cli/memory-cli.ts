/**
 * Shared plumbing of the human read commands (context, search, view, timeline, recall): find the
 * project, make sure the daemon runs, call its API, print pretty text or the exact JSON.
 */
import { resolve } from "node:path";
import type { Route } from "../shared/api.ts";
import { callRoute } from "../shared/api-client.ts";
import { ensureDaemon } from "../shared/daemon-launch.ts";
import { ProjectNotRegisteredError, UsageError } from "../shared/errors.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";

export const commonArgs = {
  project: {
    type: "string",
    description: "Project folder (default: the registered project containing the current directory)",
  },
  json: { type: "boolean", description: "Print the exact API JSON" },
} as const;

/** The registered project containing `path` (default: the current directory). */
export function projectRootFor(path?: string): string {
  const abs = resolve(path ?? process.cwd());
  const root = projectForPath(abs, listProjects());
  if (!root) throw new ProjectNotRegisteredError(abs);
  return root;
}

export function parseBudget(raw: unknown): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new UsageError(`--budget must be a whole number of tokens between 1 and 100000, got "${String(raw)}".`);
  return n;
}

export function splitList(raw: unknown): string[] {
  return typeof raw === "string"
    ? raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** Call a daemon route of the table (starting the daemon when none answers); the answer is validated. */
export async function callDaemon<R extends Route>(r: R, input: unknown): Promise<ReturnType<R["response"]["parse"]>> {
  // Starting a background process is said, not done silently.
  const info = await ensureDaemon({
    onStart: () =>
      process.stderr.write(
        "sqrl: starting the daemon (it keeps capturing in the background; `sqrl daemon stop` stops it)\n",
      ),
  });
  return callRoute("daemon", r, input, { timeoutMs: 30_000, info });
}

export function print(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}
