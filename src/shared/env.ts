/**
 * Every `SQRL_*` environment variable sqrl reads, in one place (README "Environment" lists the same
 * set; test/cli/readme.test.ts holds them together). Values are read when asked, not at import:
 * tests and the daemon's children change them at run time.
 */
export const SQRL_ENV = {
  SQRL_HOME: "Folder of sqrl's per-machine files (config.toml, user.db, state.db, logs); default ~/.sqrl.",
  SQRL_LOG_LEVEL: "Log level, 0 silent … 3 info (default) … 5 trace; `--debug` sets 5. Overrides `log.level`.",
  SQRL_INGEST_WORKERS:
    "Worker threads that build rows in bulk ingest, 0–8 (default: 2 with 3+ cores and one free, else 0; 0 also turns the insert worker off).",
  SQRL_INSERT_WORKER:
    "Bulk ingest's insert worker, 1 on whatever the load, 0 off (default: on for files of 4 MiB+ when a core is free).",
  SQRL_ENGINE_HEALTH_INTERVAL_MS: "How often the daemon checks the engine's /health (ms, at least 100; default 10000).",
  SQRL_CLAUDE_BIN: "The `claude` CLI used by `sqrl hosts` (empty: edit Claude Code's config file directly).",
  SQRL_TARGET: "Build only: Bun compile target of `npm run build` (e.g. bun-darwin-arm64).",
  SQRL_BIN: "Tests and benchmarks only: the compiled binary to run (default dist/sqrl).",
  SQRL_BENCH_VERBOSE: "Benchmarks only: `bun run bench ui` also prints each run's first-screen time.",
  SQRL_MQ_DUMP:
    "Benchmarks only: a file where `bun run bench memory-quality` writes its results as JSON (like `--dump`).",
  SQRL_MQ_KEEP:
    "Benchmarks only: `bun run bench memory-quality` keeps its run folder (homes, data.db files) to trace where a memory went.",
} as const;

export type SqrlEnvName = keyof typeof SQRL_ENV;

/** The variable's value, or undefined when unset (an empty string is a value). */
export function sqrlEnv(name: SqrlEnvName, env: Record<string, string | undefined> = process.env): string | undefined {
  return env[name];
}

/** The variable as a finite number, or undefined when unset or not a number. */
export function sqrlEnvNumber(
  name: SqrlEnvName,
  env: Record<string, string | undefined> = process.env,
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}
