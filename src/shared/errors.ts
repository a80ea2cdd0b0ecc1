/**
 * Named errors. Every error a user can meet says what went wrong and what to do next.
 * `--minify` renames classes, so each error carries an explicit `name` and a stable `code` from the
 * closed union ERROR_CODES; tests and callers check `code` (or instanceof), never `constructor.name`.
 */

/** Every code an error or an `{error, code}` API answer can carry. */
export const ERROR_CODES = [
  // requests and usage
  "bad_request",
  "bad_usage",
  "bad_config",
  "bad_config_value",
  "bad_since",
  "budget_too_small",
  "bad_import_file",
  "no_projects",
  "unknown_config_key",
  "bad_projects_file",
  "not_a_file",
  "not_a_directory",
  "not_found",
  "memory_not_found",
  "memory_not_valid",
  "episode_not_found",
  "project_not_registered",
  "method_not_allowed",
  // the local APIs
  "unauthorized",
  "forbidden_origin",
  "forbidden_host",
  "daemon_unreachable",
  "engine_unavailable",
  "api_error",
  "bad_response",
  "not_supported",
  "payload_too_large",
  "timeout",
  "internal",
  // databases
  "db_missing",
  "db_outdated",
  "db_too_new",
  "damaged_db",
  // LLM and hosts
  "llm_call_failed",
  "llm_cap_reached",
  "llm_invalid_output",
  "host_cli_failed",
  "bad_host_config",
  "host_config_edit",
  "no_hosts",
  "unknown_host",
  "bad_scope",
  "unsupported_platform",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}

export class SqrlError extends Error {
  override readonly name: string = "SqrlError";
  readonly code: ErrorCode;
  /** Process exit status when this error ends a CLI command: 1 failure, 2 bad usage. */
  readonly exitCode: number;
  /** HTTP status when this error ends an API request. */
  readonly status: number;

  constructor(code: ErrorCode, message: string, opts: { exitCode?: number; status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.exitCode = opts.exitCode ?? 1;
    this.status = opts.status ?? 500;
  }
}

/** Bad command-line usage or bad arguments: exit 2, HTTP 400. */
export class UsageError extends SqrlError {
  override readonly name = "UsageError";
  constructor(message: string, code: ErrorCode = "bad_usage") {
    super(code, message, { exitCode: 2, status: 400 });
  }
}

/** A thing that was asked for does not exist: HTTP 404. */
export class NotFoundError extends SqrlError {
  override readonly name = "NotFoundError";
  constructor(message: string, code: ErrorCode = "not_found") {
    super(code, message, { exitCode: 1, status: 404 });
  }
}

/** config.toml or another settings file is invalid. */
export class ConfigError extends SqrlError {
  override readonly name = "ConfigError";
  constructor(message: string, code: ErrorCode = "bad_config") {
    super(code, message, { exitCode: 1, status: 500 });
  }
}

/** A path is not a registered sqrl project. */
export class ProjectNotRegisteredError extends SqrlError {
  override readonly name = "ProjectNotRegisteredError";
  constructor(path: string) {
    super("project_not_registered", `${path} is not a sqrl project. Run \`sqrl init ${path}\` first.`, {
      exitCode: 1,
      status: 404,
    });
  }
}

/** The daemon (or the engine behind it) does not answer. */
export class DaemonUnreachableError extends SqrlError {
  override readonly name = "DaemonUnreachableError";
  constructor(detail: string, cause?: unknown) {
    super("daemon_unreachable", `The sqrl daemon is not reachable (${detail}). Start it with \`sqrl daemon start\`.`, {
      exitCode: 1,
      status: 503,
      cause,
    });
  }
}

export function isSqrlError(err: unknown): err is SqrlError {
  return err instanceof SqrlError;
}

/** Longest error text shown to a model or a terminal. */
export const MAX_ERROR_CHARS = 800;

/**
 * Error text fit for a model or a terminal: one line, clipped to MAX_ERROR_CHARS so that no input is
 * echoed at length, and any URL carrying a query string (a request echoed back) shown as "<url>".
 * The API client and servers never put their own addresses in messages in the first place.
 */
export function publicMessage(text: string): string {
  const plain = text
    .replace(/\bhttps?:\/\/[^\s"'`)]*\?[^\s"'`)]*/g, "<url>")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length <= MAX_ERROR_CHARS ? plain : `${plain.slice(0, MAX_ERROR_CHARS - 1)}…`;
}

/** One short line for a human or a model: the message of a named error, or a generic wrapper for the unexpected. */
export function describeError(err: unknown): string {
  if (err instanceof SqrlError) return publicMessage(err.message);
  if (err instanceof Error) return `${publicMessage(err.message)} (unexpected; rerun with --debug for details)`;
  return publicMessage(String(err));
}
