import { createConsola, type ConsolaInstance } from "consola";

/**
 * sqrl's logger. Everything goes to stderr: stdout belongs to command output and, in
 * `sqrl mcp`, to the MCP protocol. `SQRL_LOG_LEVEL` (0 silent … 5 trace) or `--debug` raise it.
 */
function levelFromEnv(): number {
  const raw = process.env.SQRL_LOG_LEVEL;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) ? n : 3;
}

export const log: ConsolaInstance = createConsola({
  level: levelFromEnv(),
  stdout: process.stderr,
  stderr: process.stderr,
});

export function setDebug(on: boolean): void {
  if (on) log.level = 5;
}
