/**
 * Named errors. Every error a user can meet says what went wrong and what to do next.
 * `--minify` renames classes, so each error carries an explicit `name` and a stable `code` from the
 * closed union ERROR_CODES; tests and callers check `code` (or instanceof), never `constructor.name`.
 */
import { resolve } from "node:path";
import { sqrlHome } from "./paths.ts";

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
  "not_a_git_repo",
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
  // files and folders sqrl cannot read or write (permissions, read-only or full disk, a folder in a file's place)
  "file_access",
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

/** The daemon stopped as it started; `reason` is what it said (its own one-line error says what to do). */
export class DaemonStartError extends SqrlError {
  override readonly name = "DaemonStartError";
  constructor(reason: string) {
    super("daemon_unreachable", `The sqrl daemon stopped as it started: ${reason.replace(/\.?$/, ".")}`, {
      exitCode: 1,
      status: 503,
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
  const fs = fileAccessMessage(err);
  if (fs) return publicMessage(fs);
  if (err instanceof Error) return `${publicMessage(err.message)} (unexpected; rerun with --debug for details)`;
  return publicMessage(String(err));
}

/**
 * What a failed file-system call means to the user, naming the path and what to do; undefined when
 * `err` is not a file-system error with a path. (Node and Bun put the errno code on `code`, or on
 * `info.code` for their ERR_FS_* wrappers.)
 */
export function fileAccessMessage(err: unknown): string | undefined {
  if (!err || typeof err !== "object") return undefined;
  const e = err as { code?: unknown; path?: unknown; info?: { code?: unknown; path?: unknown } };
  const code = typeof e.info?.code === "string" ? e.info.code : e.code;
  const path = typeof e.path === "string" ? e.path : typeof e.info?.path === "string" ? e.info.path : undefined;
  if (typeof code !== "string" || !path) return undefined;
  return fileProblem(code, path);
}

/** The message for an errno `code` on `path`; undefined for codes that are not a user's to fix. */
export function fileProblem(code: string, path: string): string | undefined {
  const elsewhere = resolve(path).startsWith(sqrlHome()) ? ", or set SQRL_HOME to a folder you can write" : "";
  switch (code) {
    case "EACCES":
    case "EPERM":
      return `Permission denied on ${path}: sqrl needs to write there; make it writable by you (\`chmod u+rwX\`)${elsewhere}.`;
    case "EROFS":
      return `${path} is on a read-only file system: sqrl needs to write there; remount it writable${elsewhere}.`;
    case "ENOSPC":
    case "EDQUOT":
      return `No space left to write ${path}: free some disk space, then retry.`;
    case "EISDIR":
      return `${path} is a folder where sqrl keeps a file: move it away, then retry.`;
    case "ENOTDIR":
      return `Part of ${path} is a file where sqrl needs a folder: move it away, then retry.`;
    default:
      return undefined;
  }
}

/** A file or folder sqrl needs cannot be used (permissions, read-only or full disk, wrong kind of entry). */
export class FileAccessError extends SqrlError {
  override readonly name = "FileAccessError";
  constructor(message: string, cause?: unknown) {
    super("file_access", message, { exitCode: 1, status: 500, cause });
  }
}
