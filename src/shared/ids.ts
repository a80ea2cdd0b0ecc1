/**
 * Ids and tokens: time-sortable random ids for rows, random bearer tokens for the local APIs.
 */
import { randomBytes } from "node:crypto";

/** A time-sortable random id: `<prefix>_<ms base36><random hex>`, e.g. `mem_lx2k9a0f3c1e…`. */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  return `${prefix}_${nowMs.toString(36).padStart(9, "0")}${randomBytes(6).toString("hex")}`;
}

/** A random secret for API tokens. */
export function newToken(): string {
  return randomBytes(24).toString("base64url");
}
