/**
 * Every MCP host sqrl can register with, and parsing of host lists and scopes.
 */
import { UsageError } from "../../shared/errors.ts";
import { sqrlCommand } from "../../shared/daemon-launch.ts";
import { claudeHost } from "./claude.ts";
import {
  claudeSettingsPath,
  hookCommandLine,
  installSessionStartHook,
  removeSessionStartHook,
  sessionStartHookCommand,
} from "./claude-hook.ts";
import { codexHost } from "./codex.ts";
import { cursorHost } from "./cursor.ts";
import { geminiHost } from "./gemini.ts";
import { copilotHost } from "./copilot.ts";
import { opencodeHost } from "./opencode.ts";
import { qwenHost, qwenSettingsPath } from "./qwen.ts";
import {
  HOST_NAMES,
  type HostAdapter,
  type HostChange,
  type HostEntry,
  type HostName,
  type HostScope,
  type ServerCommand,
} from "./host-types.ts";

export * from "./host-types.ts";

export const HOSTS: Record<HostName, HostAdapter> = {
  claude: claudeHost,
  codex: codexHost,
  gemini: geminiHost,
  cursor: cursorHost,
  qwen: qwenHost,
  opencode: opencodeHost,
  copilot: copilotHost,
};

/** "claude,codex" or ["claude", "gemini,cursor"] → host names; "all" means every host. */
export function parseHostList(input: string | readonly string[]): HostName[] {
  const words = (typeof input === "string" ? [input] : input)
    .flatMap((w) => w.split(","))
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  if (words.length === 0)
    throw new UsageError(`Name at least one host: ${HOST_NAMES.join(", ")} (or all).`, "no_hosts");
  if (words.includes("all")) return [...HOST_NAMES];
  const unknown = words.filter((w) => !(HOST_NAMES as readonly string[]).includes(w));
  if (unknown.length > 0)
    throw new UsageError(
      `Unknown host ${unknown.map((u) => `"${u}"`).join(", ")}. Hosts: ${HOST_NAMES.join(", ")}.`,
      "unknown_host",
    );
  return [...new Set(words)] as HostName[];
}

export function parseScope(input: string | undefined): HostScope | undefined {
  if (input === undefined || input === "") return undefined;
  if (input === "project" || input === "user") return input;
  throw new UsageError(`--scope must be project or user, not "${input}".`, "bad_scope");
}

/** The command a file on this machine only (user scope) names: this binary + `mcp`. */
export function serverCommand(): ServerCommand {
  const [command, ...args] = sqrlCommand(["mcp"]);
  return { command: command!, args };
}

/**
 * Files meant for git (project scope) name `sqrl` as found on PATH, never this machine's path to
 * it, so a teammate who pulls them gets a command that works on their machine.
 */
export const PORTABLE_SERVER: ServerCommand = { command: "sqrl", args: ["mcp"] };
export const PORTABLE_HOOK_LINE = "sqrl hook claude-session-start";

/** The server command for a scope: portable in the repo, this binary in the user's own config. */
export function serverFor(scope: HostScope): ServerCommand {
  return scope === "project" ? PORTABLE_SERVER : serverCommand();
}

/** The hook command line for a scope: `sqrl hook claude-session-start`, absolute in user scope. */
export function sessionStartHookLine(scope: HostScope = "user"): string {
  return scope === "project" ? PORTABLE_HOOK_LINE : hookCommandLine(sqrlCommand(["hook", "claude-session-start"]));
}

/** Is `sqrl` on this machine's PATH (what project-scope files rely on)? */
export function sqrlOnPath(): boolean {
  return Bun.which("sqrl") !== null;
}

export function scopeFor(adapter: HostAdapter, scope: HostScope | undefined): HostScope {
  if (scope === undefined) return adapter.defaultScope;
  if (!adapter.scopes.includes(scope)) return adapter.defaultScope; // codex has only a user config
  return scope;
}

export interface HostsOptions {
  projectRoot: string;
  scope?: HostScope;
  server?: ServerCommand;
}

function contextFor(_name: HostName, scope: HostScope, opts: HostsOptions) {
  return { projectRoot: opts.projectRoot, scope, server: opts.server ?? serverFor(scope) };
}

export function addHosts(names: readonly HostName[], opts: HostsOptions): HostChange[] {
  return names.map((name) => HOSTS[name].add(contextFor(name, scopeFor(HOSTS[name], opts.scope), opts)));
}

export function removeHosts(names: readonly HostName[], opts: HostsOptions): HostChange[] {
  return names.map((name) => HOSTS[name].remove(contextFor(name, scopeFor(HOSTS[name], opts.scope), opts)));
}

/** Every host in every scope it supports, registered or not. */
export function listHosts(names: readonly HostName[], opts: HostsOptions): HostEntry[] {
  return names.flatMap((name) =>
    HOSTS[name].scopes
      .filter((s) => opts.scope === undefined || s === opts.scope)
      .map((scope) => HOSTS[name].status(contextFor(name, scope, opts))),
  );
}

export {
  claudeSettingsPath,
  installSessionStartHook,
  qwenSettingsPath,
  removeSessionStartHook,
  sessionStartHookCommand,
};
