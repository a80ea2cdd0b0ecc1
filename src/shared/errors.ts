/**
 * Named errors. Every error a user can meet says what went wrong and what to do next.
 * `--minify` renames classes, so each error carries an explicit `name` and a stable `code`;
 * tests and callers check `code` (or instanceof), never `constructor.name`.
 */
export class SqrlError extends Error {
  override readonly name: string = "SqrlError";
  readonly code: string;
  /** Process exit status when this error ends a CLI command: 1 failure, 2 bad usage. */
  readonly exitCode: number;
  /** HTTP status when this error ends an API request. */
  readonly status: number;

  constructor(code: string, message: string, opts: { exitCode?: number; status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.exitCode = opts.exitCode ?? 1;
    this.status = opts.status ?? 500;
  }
}

/** Bad command-line usage or bad arguments: exit 2, HTTP 400. */
export class UsageError extends SqrlError {
  override readonly name = "UsageError";
  constructor(message: string, code = "bad_usage") {
    super(code, message, { exitCode: 2, status: 400 });
  }
}

/** A thing that was asked for does not exist: HTTP 404. */
export class NotFoundError extends SqrlError {
  override readonly name = "NotFoundError";
  constructor(message: string, code = "not_found") {
    super(code, message, { exitCode: 1, status: 404 });
  }
}

/** config.toml or another settings file is invalid. */
export class ConfigError extends SqrlError {
  override readonly name = "ConfigError";
  constructor(message: string, code = "bad_config") {
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

/** One line for a human: the message of a named error, or a generic wrapper for the unexpected. */
export function describeError(err: unknown): string {
  if (err instanceof SqrlError) return err.message;
  if (err instanceof Error) return `${err.message} (unexpected; rerun with --debug for details)`;
  return String(err);
}
