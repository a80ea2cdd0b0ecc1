/**
 * Codex CLI: `[mcp_servers.sqrl]` in `$CODEX_HOME/config.toml` (user scope only). The file is
 * edited as text — only sqrl's own table is replaced or removed — so the user's comments and
 * layout stay; the result is parsed back and checked to hold every other entry unchanged.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse, stringify } from "smol-toml";
import { ConfigError } from "../../shared/errors.ts";
import { writeFileAtomic } from "../../shared/fs-atomic.ts";
import { codexHome } from "../../shared/paths.ts";
import { isObject, jsonEqual, modeFor, type ChangeAction, type JsonObject } from "./config-files.ts";
import { SERVER_NAME, type HostAdapter, type HostContext, type HostEntry } from "./host-types.ts";
import { sqrlEnv } from "../../shared/env.ts";

export function codexConfigPath(): string {
  return join(codexHome(), "config.toml");
}

function readToml(path: string): { text: string; doc: JsonObject } {
  if (!existsSync(path)) return { text: "", doc: {} };
  const text = readFileSync(path, "utf8");
  try {
    return { text, doc: parse(text) as JsonObject };
  } catch (err) {
    throw new ConfigError(
      `${path} is not valid TOML (${(err as Error).message.split("\n")[0]}); sqrl left it untouched. Fix it by hand, then run the command again.`,
      "bad_host_config",
    );
  }
}

function sqrlTable(doc: JsonObject): JsonObject | undefined {
  const servers = doc.mcp_servers;
  const entry = isObject(servers) ? servers[SERVER_NAME] : undefined;
  return isObject(entry) ? entry : undefined;
}

const HEADER = /^\s*\[\s*mcp_servers\s*\.\s*(?:sqrl|"sqrl"|'sqrl')\s*(\.[^\]]*)?\]\s*(#.*)?$/;
const ANY_HEADER = /^\s*\[/;

/** Line range [start, end) of `[mcp_servers.sqrl]` and its sub-tables, or undefined. */
function findBlock(lines: string[]): { start: number; end: number } | undefined {
  const start = lines.findIndex((l) => HEADER.test(l));
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length) {
    const line = lines[end]!;
    if (ANY_HEADER.test(line) && !HEADER.test(line)) break;
    end++;
  }
  // Leave trailing blank lines and comments that introduce the next table to it.
  while (end > start + 1 && /^\s*(#.*)?$/.test(lines[end - 1]!)) end--;
  return { start, end };
}

function renderBlock(table: JsonObject): string[] {
  return stringify({ mcp_servers: { [SERVER_NAME]: table } })
    .trim()
    .split("\n");
}

function withoutSqrl(doc: JsonObject): JsonObject {
  const servers = isObject(doc.mcp_servers) ? { ...doc.mcp_servers } : undefined;
  if (!servers) return doc;
  delete servers[SERVER_NAME];
  const out: JsonObject = { ...doc, mcp_servers: servers };
  if (Object.keys(servers).length === 0) delete out.mcp_servers;
  return out;
}

/** Write `next` only if it parses and every entry besides sqrl's is exactly what it was. */
function checkedWrite(path: string, before: JsonObject, nextText: string, expectSqrl: JsonObject | undefined): void {
  let after: JsonObject;
  try {
    after = parse(nextText) as JsonObject;
  } catch (err) {
    throw new ConfigError(
      `sqrl could not edit ${path} safely (${(err as Error).message.split("\n")[0]}); it was left untouched. Add [mcp_servers.sqrl] by hand.`,
      "host_config_edit",
    );
  }
  const othersKept = jsonEqual(
    JSON.parse(JSON.stringify(withoutSqrl(before))),
    JSON.parse(JSON.stringify(withoutSqrl(after))),
  );
  const sqrlRight = jsonEqual(JSON.parse(JSON.stringify(sqrlTable(after) ?? null)), expectSqrl ?? null);
  if (!othersKept || !sqrlRight) {
    throw new ConfigError(
      `sqrl could not edit ${path} without touching other entries (is sqrl defined inline?); it was left untouched. Edit [mcp_servers.sqrl] by hand.`,
      "host_config_edit",
    );
  }
  writeFileAtomic(path, nextText.endsWith("\n") ? nextText : `${nextText}\n`, modeFor(path, 0o600));
}

/**
 * Codex starts MCP servers with a cleared environment (HOME, PATH and a few more), so a
 * non-default SQRL_HOME set where `sqrl hosts add` runs is written into the entry's `env`;
 * the user's own `env` entries stay.
 */
function sqrlHomeEnv(existing: JsonObject | undefined): JsonObject {
  const home = sqrlEnv("SQRL_HOME");
  if (!home) return {};
  const env = isObject(existing?.env) ? existing.env : {};
  return { env: { ...env, SQRL_HOME: resolve(home) } };
}

function isCurrent(table: JsonObject | undefined, ctx: HostContext): boolean {
  return table !== undefined && table.command === ctx.server.command && jsonEqual(table.args, ctx.server.args);
}

export const codexHost: HostAdapter = {
  name: "codex",
  defaultScope: "user",
  scopes: ["user"],
  add(ctx) {
    const path = codexConfigPath();
    const { text, doc } = readToml(path);
    const existing = sqrlTable(doc);
    const next: JsonObject = {
      ...(existing ?? {}),
      command: ctx.server.command,
      args: ctx.server.args,
      ...sqrlHomeEnv(existing),
    };
    if (existing && jsonEqual(existing, next))
      return { host: "codex", scope: "user", path, action: "unchanged", via: "file" };
    const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
    const block = findBlock(lines);
    let out: string[];
    if (block) out = [...lines.slice(0, block.start), ...renderBlock(next), ...lines.slice(block.end)];
    else out = [...lines, ...(lines.length > 0 && lines.at(-1)!.trim() !== "" ? [""] : []), ...renderBlock(next)];
    checkedWrite(path, doc, `${out.join("\n")}\n`, next);
    const action: ChangeAction = existing ? "updated" : "added";
    return { host: "codex", scope: "user", path, action, via: "file" };
  },
  remove() {
    const path = codexConfigPath();
    if (!existsSync(path)) return { host: "codex", scope: "user", path, action: "absent", via: "file" };
    const { text, doc } = readToml(path);
    if (!sqrlTable(doc)) return { host: "codex", scope: "user", path, action: "absent", via: "file" };
    const lines = text.replace(/\n$/, "").split("\n");
    const block = findBlock(lines);
    if (!block)
      throw new ConfigError(
        `${path} defines sqrl in a form sqrl does not edit (inline table?); it was left untouched. Remove it by hand.`,
        "host_config_edit",
      );
    const before = lines.slice(0, block.start);
    while (before.length > 0 && before.at(-1)!.trim() === "") before.pop();
    const after = lines.slice(block.end);
    const out = [
      ...before,
      ...(before.length > 0 && after.length > 0 && after[0]!.trim() !== "" ? [""] : []),
      ...after,
    ];
    if (out.every((l) => l.trim() === "") && Object.keys(withoutSqrl(doc)).length === 0) rmSync(path);
    else checkedWrite(path, doc, `${out.join("\n")}\n`, undefined);
    return { host: "codex", scope: "user", path, action: "removed", via: "file" };
  },
  status(ctx): HostEntry {
    const path = codexConfigPath();
    const table = existsSync(path) ? sqrlTable(readToml(path).doc) : undefined;
    return {
      host: "codex",
      scope: "user",
      path,
      registered: table !== undefined,
      command: typeof table?.command === "string" ? table.command : undefined,
      args: Array.isArray(table?.args) ? (table.args as string[]) : undefined,
      current: isCurrent(table, ctx),
    };
  },
};
