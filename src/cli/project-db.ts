/**
 * Open the registered project's data.db (and user.db when it exists) for a command that changes
 * memory directly, without the daemon; SQLite's WAL and busy timeout let it run beside the engine.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { homePaths } from "../shared/paths.ts";
import { openProjectDb, openUserDb } from "../sql/open.ts";
import { projectRootFor } from "./memory-cli.ts";

export function withProjectDbs<T>(
  project: string | undefined,
  fn: (db: Database, userDb: Database | null, root: string) => T,
): T {
  const root = projectRootFor(project);
  const db = openProjectDb(root);
  const userDb = existsSync(homePaths.userDb()) ? openUserDb() : null;
  try {
    return fn(db, userDb, root);
  } finally {
    db.close();
    userDb?.close();
  }
}
