import { UsageError } from "../../shared/errors.ts";
import { sqrlCommand } from "../../shared/daemon-launch.ts";
import { claudeHost } from "./claude.ts";
import { hookCommandLine, installSessionStartHook, removeSessionStartHook, sessionStartHookCommand } from "./claude-hook.ts";
import { codexHost } from "./codex.ts";
import { cursorHost } from "./cursor.ts";
import { geminiHost } from "./gemini.ts";
import { HOST_NAMES, type HostAdapter, type HostChange, type HostEntry, type HostName, type HostScope, type ServerCommand } from "./host-types.ts";

export * from "./host-types.ts";

export const HOSTS: Record<HostName, HostAdapter> = {
  claude: claudeHost,
  codex: codexHost,
  gemini: geminiHost,
  cursor: cursorHost,
};

/** "claude,codex" or ["claude", "gemini,cursor"] → host names; "all" means every host. */
export function parseHostList(input: string | readonly string[]): HostName[] {
  const words = (typeof input === "string" ? [input] : input).flatMap((w) => w.split(",")).map((w) => w.trim().toLowerCase()).filter(Boolean);
  if (words.length === 0) throw new UsageError(`Name at least one host: ${HOST_NAMES.join(", ")} (or all).`, "no_hosts");
  if (words.includes("all")) return [...HOST_NAMES];
  const unknown = words.filter((w) => !(HOST_NAMES as readonly string[]).includes(w));
  if (unknown.length > 0) throw new UsageError(`Unknown host ${unknown.map((u) => `"${u}"`).join(", ")}. Hosts: ${HOST_NAMES.join(", ")}.`, "unknown_host");
  return [...new Set(words)] as HostName[];
}

export function parseScope(input: string | undefined): HostScope | undefined {
  if (input === undefined || input === "") return undefined;
  if (input === "project" || input === "user") return input;
  throw new UsageError(`--scope must be project or user, not "${input}".`, "bad_scope");
}

/** The absolute command hosts should run: this binary (`process.execPath` when compiled) + `mcp`. */
export function serverCommand(): ServerCommand {
  const [command, ...args] = sqrlCommand(["mcp"]);
  return { command: command!, args };
}

/** The hook command line: this binary + `hook claude-session-start`. */
export function sessionStartHookLine(): string {
  return hookCommandLine(sqrlCommand(["hook", "claude-session-start"]));
}

function scopeFor(adapter: HostAdapter, scope: HostScope | undefined): HostScope {
  if (scope === undefined) return adapter.defaultScope;
  if (!adapter.scopes.includes(scope)) return adapter.defaultScope; // codex has only a user config
  return scope;
}

export interface HostsOptions {
  projectRoot: string;
  scope?: HostScope;
  server?: ServerCommand;
}

export function addHosts(names: readonly HostName[], opts: HostsOptions): HostChange[] {
  const server = opts.server ?? serverCommand();
  return names.map((name) => HOSTS[name].add({ projectRoot: opts.projectRoot, scope: scopeFor(HOSTS[name], opts.scope), server }));
}

export function removeHosts(names: readonly HostName[], opts: HostsOptions): HostChange[] {
  const server = opts.server ?? serverCommand();
  return names.map((name) => HOSTS[name].remove({ projectRoot: opts.projectRoot, scope: scopeFor(HOSTS[name], opts.scope), server }));
}

/** Every host in every scope it supports, registered or not. */
export function listHosts(names: readonly HostName[], opts: HostsOptions): HostEntry[] {
  const server = opts.server ?? serverCommand();
  return names.flatMap((name) =>
    HOSTS[name].scopes
      .filter((s) => opts.scope === undefined || s === opts.scope)
      .map((scope) => HOSTS[name].status({ projectRoot: opts.projectRoot, scope, server })),
  );
}

export { installSessionStartHook, removeSessionStartHook, sessionStartHookCommand };
