/**
 * Opening sqrl's SQLite files: WAL, busy timeout, private modes, migrations.
 */
import { Database } from "bun:sqlite";
import { accessSync, chmodSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { FileAccessError, fileAccessMessage, fileProblem, SqrlError } from "../shared/errors.ts";
import { homePaths, projectPaths } from "../shared/paths.ts";
import { latestVersion, migrate, schemaVersion, type SchemaKind } from "./migrations.ts";

export interface OpenOptions {
  /** Open without writing: no migration, no file creation (status with the daemon down). */
  readonly?: boolean;
}

/**
 * Page size stays SQLite's default (4 KiB). Measured: 16 KiB pages made a bulk ingest ~15% faster but
 * task_context ~15% slower at 10k memories; queries run on every agent turn, a backfill runs once.
 */
function configure(db: Database, readonly: boolean): void {
  db.exec("PRAGMA busy_timeout = 5000");
  if (!readonly) {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
  }
  db.exec("PRAGMA foreign_keys = ON");
}

/** Open (creating and migrating when writable) one of sqrl's SQLite files. */
export function openDatabase(path: string, kind: SchemaKind, opts: OpenOptions = {}): Database {
  try {
    return openOrThrow(path, kind, opts);
  } catch (err) {
    throw databaseAccessError(path, err) ?? err;
  }
}

function openOrThrow(path: string, kind: SchemaKind, opts: OpenOptions): Database {
  const readonly = opts.readonly === true;
  if (readonly && !existsSync(path)) {
    throw new SqrlError("db_missing", `${path} does not exist yet. Run \`sqrl init\` in the project first.`);
  }
  if (!readonly) mkdirSync(dirname(path), { recursive: true });
  const isNew = !existsSync(path);
  const db = readonly
    ? new Database(path, { readonly: true, strict: true })
    : new Database(path, { create: true, strict: true });
  try {
    configure(db, readonly);
    if (isNew) chmodSync(path, 0o600);
    if (readonly) {
      const v = schemaVersion(db);
      if (v < latestVersion(kind)) {
        throw new SqrlError(
          "db_outdated",
          `${path} has schema version ${v}; open it once with a writable sqrl command (e.g. \`sqrl init\`) to migrate.`,
        );
      }
    } else {
      migrate(db, kind);
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * SQLite's "unable to open database file" names no file and says nothing of why: name the database
 * and the cause found on disk (the folder or file not writable, a read-only or full disk).
 */
function databaseAccessError(path: string, err: unknown): SqrlError | undefined {
  if (err instanceof SqrlError) return undefined;
  const direct = fileAccessMessage(err);
  if (direct) return new FileAccessError(direct, err);
  const code = String((err as { code?: unknown })?.code ?? "");
  if (!/^SQLITE_(CANTOPEN|READONLY|FULL|PERM|IOERR)/.test(code)) return undefined;
  if (code.startsWith("SQLITE_FULL")) return new FileAccessError(fileProblem("ENOSPC", path)!, err);
  const checks: Array<[string, number]> = [
    [dirname(path), constants.W_OK | constants.X_OK],
    [path, constants.R_OK | constants.W_OK],
  ];
  for (const [target, mode] of checks) {
    if (!existsSync(target)) continue;
    try {
      if (target === path && statSync(target).isDirectory())
        return new FileAccessError(fileProblem("EISDIR", target)!, err);
      accessSync(target, mode);
    } catch (probe) {
      const found = fileAccessMessage(probe);
      if (found) return new FileAccessError(`Cannot open the database ${path}. ${found}`, err);
    }
  }
  return new FileAccessError(
    `Cannot open the database ${path} (${(err as Error).message}): check that it and its folder are yours and writable and that the disk is not full or read-only.`,
    err,
  );
}

/** `<root>/.ctx/data.db` of a project. */
export function openProjectDb(root: string, opts: OpenOptions = {}): Database {
  return openDatabase(projectPaths.db(root), "data", opts);
}

/** `~/.sqrl/user.db`: global user style. */
export function openUserDb(opts: OpenOptions = {}): Database {
  return openDatabase(homePaths.userDb(), "user", opts);
}

/** `~/.sqrl/state.db`: capture offsets, git cursors, LLM usage. */
export function openStateDb(opts: OpenOptions = {}): Database {
  return openDatabase(homePaths.stateDb(), "state", opts);
}
