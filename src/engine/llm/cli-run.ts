/**
 * Running the user's own agent CLI (`claude -p`, `codex exec`) for one distilling call: one run at a
 * time in this process, in a private folder under SQRL_HOME (outside every watched project, removed
 * afterwards), with a timeout, every run killed when the engine shuts down, and an environment from
 * which API keys are withheld unless the user allowed them (`llm.billing = api_key`).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sqrlHome } from "../../shared/paths.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The CLI could not be started at all (not installed, not executable). */
  spawnError?: string;
}

export type CliBilling = "subscription" | "api_key";

/**
 * Variables that make a CLI bill something else than the signed-in plan: an API key (per token), or
 * a cloud provider's account. Withheld from the run unless `llm.billing = api_key`.
 */
export const BILLING_VARIABLES: Record<"claude_code" | "codex", readonly string[]> = {
  claude_code: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
  ],
  codex: ["OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY"],
};

/**
 * What a daemon started from inside an agent session (the first `sqrl mcp` starts it) inherits from
 * that session: never handed on, so a distilling run is a fresh top-level run, not a nested one.
 */
const SESSION_VARIABLES = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  "CODEX_SANDBOX",
  "CODEX_SANDBOX_NETWORK_DISABLED",
];

/** The environment a CLI run gets: the engine's own, less what would switch billing, plus `extra`. */
export function cliEnv(
  cli: "claude_code" | "codex",
  billing: CliBilling,
  env: Record<string, string | undefined>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  const withheld = new Set([...SESSION_VARIABLES, ...(billing === "api_key" ? [] : BILLING_VARIABLES[cli])]);
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !withheld.has(k)) out[k] = v;
  return { ...out, ...extra };
}

/** The parent of every run's private folder: `$SQRL_HOME/llm-runs` (0700). */
export function runsRoot(): string {
  return join(sqrlHome(), "llm-runs");
}

/** A fresh private folder for one run (its cwd and its schema files); the caller removes it. */
export function makeRunDir(): string {
  const root = runsRoot();
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(root, "run-"));
}

export function removeRunDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

const running = new Set<Bun.Subprocess>();
let queue: Promise<unknown> = Promise.resolve();
let stopped = false;

/**
 * Run `cmd` to completion, after every run started before it in this process (one at a time).
 * SIGTERM at `timeoutMs`, SIGKILL 2 s later. Never throws: a missing binary comes back as
 * `spawnError`, a timeout as `timedOut`.
 */
export function runCli(
  cmd: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs: number; stdin?: string },
): Promise<CliResult> {
  const run = queue.then(() => runNow(cmd, opts));
  queue = run.catch(() => undefined);
  return run;
}

async function runNow(
  cmd: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs: number; stdin?: string },
): Promise<CliResult> {
  if (stopped) return { code: -1, stdout: "", stderr: "", timedOut: false, spawnError: "sqrl is shutting down" };
  let proc: Bun.Subprocess<"pipe" | "ignore", "pipe", "pipe">;
  try {
    proc = Bun.spawn(cmd, {
      env: opts.env,
      cwd: opts.cwd,
      stdin: opts.stdin === undefined ? "ignore" : "pipe",
      stdout: "pipe",
      stderr: "pipe",
      // Its own process group, so that a kill reaches what the CLI started (codex.js runs a native binary).
      detached: true,
    });
  } catch (err) {
    return { code: -1, stdout: "", stderr: "", timedOut: false, spawnError: (err as Error).message };
  }
  running.add(proc);
  if (opts.stdin !== undefined && proc.stdin && typeof proc.stdin !== "number") {
    proc.stdin.write(opts.stdin);
    await proc.stdin.end();
  }
  let timedOut = false;
  let hard: ReturnType<typeof setTimeout> | undefined;
  const soft = setTimeout(() => {
    timedOut = true;
    killGroup(proc, "SIGTERM");
    hard = setTimeout(() => killGroup(proc, "SIGKILL"), 2000);
  }, opts.timeoutMs);
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    const code = await proc.exited;
    return { code, stdout, stderr, timedOut };
  } finally {
    clearTimeout(soft);
    if (hard) clearTimeout(hard);
    running.delete(proc);
  }
}

function killGroup(proc: Bun.Subprocess, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid, signal);
  } catch {
    proc.kill(signal); // the group is gone or was never made: the process itself
  }
}

/** Kill every CLI run of this process (engine shutdown) and refuse new ones. */
export function stopCliRuns(): void {
  stopped = true;
  for (const proc of running) killGroup(proc, "SIGKILL");
  running.clear();
}

/** How many CLI runs are alive now (for tests and the shutdown log line). */
export function cliRunsAlive(): number {
  return running.size;
}

/**
 * Why a CLI run failed, from what it printed: a usage or rate limit, a sign-in to renew, the service
 * out of reach, or anything else (final for that call).
 */
export function failureKind(text: string): "rate_limited" | "signed_out" | "unavailable" | "failed" {
  if (/usage limit|rate.?limit|\b429\b|too many requests|hit your .{0,20}limit|limiting requests/i.test(text))
    return "rate_limited";
  if (
    /not logged in|please run \/login|log ?in again|sign in again|authenticat|unauthori[sz]ed|\b401\b|token (?:has )?expired|invalid api key|oauth\/token/i.test(
      text,
    )
  )
    return "signed_out";
  if (
    /overloaded|\b(?:502|503|504|529)\b|connection (?:refused|reset|failed)|waiting for network|ECONNREFUSED/i.test(
      text,
    )
  )
    return "unavailable";
  return "failed";
}
