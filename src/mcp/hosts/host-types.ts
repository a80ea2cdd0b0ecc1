/**
 * Shapes shared by the host adapters: the server command, a host's scope and the change it made.
 */
import type { ChangeAction } from "./config-files.ts";

export const HOST_NAMES = ["claude", "codex", "gemini", "cursor", "qwen", "opencode", "copilot"] as const;
export type HostName = (typeof HOST_NAMES)[number];
export type HostScope = "project" | "user";

/** The sqrl MCP server command a host should run: the binary (absolute, or `sqrl` on PATH) and its arguments. */
export interface ServerCommand {
  command: string;
  args: string[];
}

export interface HostContext {
  /** The project being set up (absolute). */
  projectRoot: string;
  scope: HostScope;
  server: ServerCommand;
}

export interface HostChange {
  host: HostName;
  scope: HostScope;
  /** The file that holds the entry. */
  path: string;
  action: ChangeAction;
  /** How it was written: the host's own CLI or sqrl editing the file. */
  via: "cli" | "file";
}

export interface HostEntry {
  host: HostName;
  scope: HostScope;
  path: string;
  registered: boolean;
  command?: string;
  args?: string[];
  /** Registered with exactly the command this binary would write. */
  current: boolean;
  /** Set when the host will not start sqrl until the user approves it (what to do, in a sentence). */
  waiting?: string;
}

/** One MCP host's config format: add, remove and read sqrl's entry, idempotently. */
export interface HostAdapter {
  name: HostName;
  /** Scope used when none is given. */
  defaultScope: HostScope;
  scopes: readonly HostScope[];
  add(ctx: HostContext): HostChange;
  remove(ctx: HostContext): HostChange;
  status(ctx: HostContext): HostEntry;
}

export const SERVER_NAME = "sqrl";
