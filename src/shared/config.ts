/**
 * config.toml: read, validate, write. `processConfig()` is the one accessor a process reads its
 * configuration through: read once, read again only when the file changes (so `sqrl config set`
 * reaches a running daemon and engine), and passed down from the process's entry point.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { CONFIG_KEYS, CONFIG_KEY_NAMES, isConfigKey, type ConfigKey, type ConfigValues } from "./config-keys.ts";
import { ConfigError, UsageError } from "./errors.ts";
import { writeFileAtomic } from "./fs-atomic.ts";
import { homePaths } from "./paths.ts";
import { defaultUserId } from "./user-id.ts";

type Flat = Partial<Record<ConfigKey, unknown>>;

/** Flatten `{llm: {provider: "x"}}` into `{"llm.provider": "x"}`. */
function flatten(obj: Record<string, unknown>, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date))
      Object.assign(out, flatten(v as Record<string, unknown>, name));
    else out[name] = v;
  }
  return out;
}

function unflatten(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(flat)) {
    const parts = name.split(".");
    let node = out;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
    node[parts.at(-1)!] = v;
  }
  return out;
}

function validKeysHint(): string {
  return `Valid keys: ${CONFIG_KEY_NAMES.join(", ")}.`;
}

function checkValue(name: ConfigKey, value: unknown): unknown {
  const parsed = CONFIG_KEYS[name].schema.safeParse(value);
  if (!parsed.success) {
    const def = CONFIG_KEYS[name].schema;
    const options =
      "options" in def && Array.isArray((def as { options?: unknown }).options)
        ? ` Valid values: ${(def as unknown as { options: string[] }).options.join(", ")}.`
        : "";
    throw new ConfigError(
      `Invalid value ${JSON.stringify(value)} for ${name}: ${parsed.error.issues[0]?.message ?? "invalid"}.${options}`,
    );
  }
  return parsed.data;
}

/** The values set in config.toml, validated. A missing file is an empty config. */
export function readConfigFile(path = homePaths.config()): Flat {
  if (!existsSync(path)) return {};
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(
      `${path} is not valid TOML (${(err as Error).message.split("\n")[0]}). Fix it or run \`sqrl config path\` to find it.`,
    );
  }
  const flat: Flat = {};
  for (const [name, value] of Object.entries(flatten(raw))) {
    if (!isConfigKey(name)) throw new ConfigError(`Unknown key ${name} in ${path}. ${validKeysHint()}`);
    flat[name] = checkValue(name, value);
  }
  return flat;
}

function defaultOf(name: ConfigKey): unknown {
  const d = CONFIG_KEYS[name].default as unknown;
  if (name === "user_id") return defaultUserId();
  return typeof d === "function" ? (d as () => unknown)() : d;
}

/** Effective configuration read now (fresh: tests and `sqrl config`); processes use `processConfig()`. */
export function loadConfig(path = homePaths.config()): ConfigValues {
  return new ConfigSource(path).get();
}

/** A process's configuration: the file's values and the effective ones, re-read when the file changes. */
export class ConfigSource {
  private cache: { mtimeMs: number; file: Flat; values?: ConfigValues } | undefined;

  constructor(readonly path: string = homePaths.config()) {}

  private current(): { mtimeMs: number; file: Flat; values?: ConfigValues } {
    const mtimeMs = existsSync(this.path) ? statSync(this.path).mtimeMs : 0;
    if (!this.cache || this.cache.mtimeMs !== mtimeMs) this.cache = { mtimeMs, file: readConfigFile(this.path) };
    return this.cache;
  }

  /** Effective configuration: file values over defaults. */
  get(): ConfigValues {
    const c = this.current();
    if (!c.values) {
      const out: Record<string, unknown> = {};
      for (const name of CONFIG_KEY_NAMES) out[name] = Object.hasOwn(c.file, name) ? c.file[name] : defaultOf(name);
      c.values = out as ConfigValues;
    }
    return c.values;
  }

  /** Only what config.toml sets (no defaults computed: no git lookup for user_id). */
  file(): Flat {
    return this.current().file;
  }
}

const sources = new Map<string, ConfigSource>();

/** The process's config accessor for `path` (default: SQRL_HOME's config.toml, resolved now). */
export function processConfig(path: string = homePaths.config()): ConfigSource {
  let source = sources.get(path);
  if (!source) sources.set(path, (source = new ConfigSource(path)));
  return source;
}

export interface ConfigEntry {
  key: ConfigKey;
  value: unknown;
  source: "file" | "default";
  description: string;
}

export function listConfig(path = homePaths.config()): ConfigEntry[] {
  const file = readConfigFile(path);
  return CONFIG_KEY_NAMES.map((name) => ({
    key: name,
    value: Object.hasOwn(file, name) ? file[name] : defaultOf(name),
    source: Object.hasOwn(file, name) ? "file" : "default",
    description: CONFIG_KEYS[name].description,
  }));
}

export function requireConfigKey(name: string): ConfigKey {
  if (!isConfigKey(name))
    throw new UsageError(`Unknown config key "${name}". ${validKeysHint()}`, "unknown_config_key");
  return name;
}

/** Turn a command-line string into the key's type: booleans, numbers, or the string itself. */
export function coerceConfigValue(name: ConfigKey, text: string): unknown {
  const probe = CONFIG_KEYS[name].default;
  const sample = typeof probe === "function" ? (probe as () => unknown)() : probe;
  if (typeof sample === "boolean") {
    if (/^(true|yes|on|1)$/i.test(text)) return true;
    if (/^(false|no|off|0)$/i.test(text)) return false;
    throw new UsageError(`Invalid value "${text}" for ${name}: expected true or false.`, "bad_config_value");
  }
  if (typeof sample === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n))
      throw new UsageError(`Invalid value "${text}" for ${name}: expected a number.`, "bad_config_value");
    return n;
  }
  return text;
}

/** Set one key in config.toml (validated), keeping every other value. */
export function setConfigValue(name: string, text: string, path = homePaths.config()): unknown {
  const keyName = requireConfigKey(name);
  const value = coerceConfigValue(keyName, text);
  let checked: unknown;
  try {
    checked = checkValue(keyName, value);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, "bad_config_value");
    throw err;
  }
  const file = readConfigFile(path) as Record<string, unknown>;
  file[keyName] = checked;
  writeFileAtomic(path, `${stringifyToml(unflatten(file))}\n`);
  return checked;
}

/** Remove a key from config.toml so its default applies again. */
export function unsetConfigValue(name: string, path = homePaths.config()): void {
  const keyName = requireConfigKey(name);
  const file = readConfigFile(path) as Record<string, unknown>;
  delete file[keyName];
  writeFileAtomic(path, `${stringifyToml(unflatten(file))}\n`);
}

/** Write the starter config.toml if none exists. */
export function bootstrapConfig(path = homePaths.config()): boolean {
  if (existsSync(path)) return false;
  writeFileAtomic(
    path,
    [
      "# sqrl configuration. `sqrl config list` shows every key with its default.",
      "# Only keys you set live here; API keys are read from the environment, never stored.",
      "# user_id is pinned at first run so the daemon (started by a service manager, with another",
      "# environment) and your shell agree on whose memory this is.",
      stringifyToml({ user_id: defaultUserId() }),
      "",
    ].join("\n"),
  );
  return true;
}
