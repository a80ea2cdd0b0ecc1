/**
 * Opening sqrl's SQLite files: WAL, busy timeout, private modes, migrations.
 */
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SqrlError } from "../shared/errors.ts";
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
