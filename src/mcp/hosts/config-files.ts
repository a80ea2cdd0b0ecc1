/**
 * Reading and writing hosts' config files safely: modes, atomic writes, refusing files that do not parse.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { ConfigError } from "../../shared/errors.ts";
import { writeFileAtomic } from "../../shared/fs-atomic.ts";

export type JsonObject = Record<string, unknown>;

/** Mode for a file we create: project files are shared like any source file, home files are private. */
export function modeFor(path: string, fallback: number): number {
  return existsSync(path) ? statSync(path).mode & 0o777 : fallback;
}

/** A JSON config file as an object ({} when missing). Invalid JSON is never overwritten. */
export function readJsonObject(path: string): JsonObject {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, "utf8");
  if (text.trim() === "") return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(
      `${path} is not valid JSON (${(err as Error).message}); sqrl left it untouched. Fix it by hand, then run the command again.`,
      "bad_host_config",
    );
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(
      `${path} does not hold a JSON object; sqrl left it untouched. Fix it by hand, then run the command again.`,
      "bad_host_config",
    );
  }
  return data as JsonObject;
}

/**
 * Write a JSON config (2-space indent); an empty object removes the file instead, and the host's
 * dot-folder (`.gemini/`, `.cursor/`, `.claude/`) with it when that removal left it empty.
 */
export function writeJsonObject(path: string, value: JsonObject, newFileMode: number): void {
  if (Object.keys(value).length === 0) {
    rmSync(path, { force: true });
    removeEmptyDotFolder(dirname(path));
    return;
  }
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, modeFor(path, newFileMode));
}

function removeEmptyDotFolder(dir: string): void {
  try {
    if (basename(dir).startsWith(".") && readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // not ours to insist on: a folder that cannot be read or removed stays
  }
}

export function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

export type ChangeAction = "added" | "updated" | "unchanged" | "removed" | "absent";

/**
 * Put `entry` under `container.name` of a JSON config (e.g. `mcpServers.sqrl`), keeping every other
 * entry and any extra fields the user added to ours. Returns what changed.
 */
export function upsertJsonEntry(
  path: string,
  container: string,
  name: string,
  entry: JsonObject,
  newFileMode: number,
): ChangeAction {
  const doc = readJsonObject(path);
  const servers = doc[container] === undefined ? {} : doc[container];
  if (!isObject(servers))
    throw new ConfigError(
      `${path}: "${container}" is not an object; sqrl left the file untouched. Fix it by hand.`,
      "bad_host_config",
    );
  const existing = servers[name];
  const next = isObject(existing) ? { ...existing, ...entry } : entry;
  if (isObject(existing) && jsonEqual(existing, next)) return "unchanged";
  writeJsonObject(path, { ...doc, [container]: { ...servers, [name]: next } }, newFileMode);
  return existing === undefined ? "added" : "updated";
}

/** Remove `container.name`; an emptied container is dropped, an emptied file deleted. */
export function removeJsonEntry(path: string, container: string, name: string): ChangeAction {
  if (!existsSync(path)) return "absent";
  const doc = readJsonObject(path);
  const servers = doc[container];
  if (!isObject(servers) || !Object.hasOwn(servers, name)) return "absent";
  const { [name]: _gone, ...rest } = servers;
  const next: JsonObject = { ...doc };
  if (Object.keys(rest).length === 0) delete next[container];
  else next[container] = rest;
  writeJsonObject(path, next, 0o644);
  return "removed";
}

/** The entry under `container.name`, if any. */
export function readJsonEntry(path: string, container: string, name: string): JsonObject | undefined {
  if (!existsSync(path)) return undefined;
  const servers = readJsonObject(path)[container];
  const entry = isObject(servers) ? servers[name] : undefined;
  return isObject(entry) ? entry : undefined;
}
