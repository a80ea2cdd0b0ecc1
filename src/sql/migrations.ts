/**
 * Schema migrations of data.db, user.db and state.db, embedded in the binary and applied in order.
 */
import type { Database } from "bun:sqlite";
import { SqrlError } from "../shared/errors.ts";
import dataV1 from "./schema/data-v1.sql" with { type: "text" };
import dataV2 from "./schema/data-v2.sql" with { type: "text" };
import dataV3 from "./schema/data-v3.sql" with { type: "text" };
import dataV4 from "./schema/data-v4.sql" with { type: "text" };
import dataV5 from "./schema/data-v5.sql" with { type: "text" };
import dataV6 from "./schema/data-v6.sql" with { type: "text" };
import dataV7 from "./schema/data-v7.sql" with { type: "text" };
import stateV1 from "./schema/state-v1.sql" with { type: "text" };
import stateV2 from "./schema/state-v2.sql" with { type: "text" };
import userV1 from "./schema/user-v1.sql" with { type: "text" };

/** Schema kinds sqrl keeps; each has an ordered list of migrations, embedded in the binary. */
export type SchemaKind = "data" | "user" | "state";

/** Migration N (1-based) takes a database from user_version N-1 to N. Append only; never edit one that shipped. */
export const MIGRATIONS: Record<SchemaKind, readonly string[]> = {
  data: [dataV1, dataV2, dataV3, dataV4, dataV5, dataV6, dataV7],
  user: [userV1],
  state: [stateV1, stateV2],
};

export function latestVersion(kind: SchemaKind): number {
  return MIGRATIONS[kind].length;
}

export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/**
 * Apply the migrations a database lacks, each in its own transaction together with the bump of
 * `PRAGMA user_version`, so a crash leaves either the old or the new version. Idempotent.
 */
export function migrate(db: Database, kind: SchemaKind): number {
  const steps = MIGRATIONS[kind];
  let version = schemaVersion(db);
  if (version > steps.length) {
    throw new SqrlError(
      "db_too_new",
      `This database has schema version ${version}, newer than this sqrl understands (${steps.length}). Upgrade sqrl.`,
    );
  }
  while (version < steps.length) {
    const sql = steps[version]!;
    const next = version + 1;
    db.transaction(() => {
      db.exec(sql);
      db.exec(`PRAGMA user_version = ${next}`);
    }).immediate();
    version = next;
  }
  return version;
}
