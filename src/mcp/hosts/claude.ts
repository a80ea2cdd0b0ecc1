/**
 * Claude Code. User scope (the default: a memory server serves every repo): `~/.claude.json` (or
 * `$CLAUDE_CONFIG_DIR/.claude.json`), trusted at once, so `claude mcp list` shows it Connected.
 * Project scope: `<repo>/.mcp.json`, shared through git with the portable `sqrl` command; Claude
 * Code starts it only after the user trusted the folder (its approval prompt). With the `claude`
 * CLI on PATH, `claude mcp add/remove` does the writing; without it sqrl edits the same file.
 */
import { dirname, join } from "node:path";
import { SqrlError } from "../../shared/errors.ts";
import { claudeHome, userHome } from "../../shared/paths.ts";
import {
  isObject,
  jsonEqual,
  readJsonEntry,
  readJsonObject,
  removeJsonEntry,
  upsertJsonEntry,
  writeJsonObject,
  type ChangeAction,
} from "./config-files.ts";
import { SERVER_NAME, type HostAdapter, type HostContext, type HostEntry, type HostScope } from "./host-types.ts";
import { sqrlEnv } from "../../shared/env.ts";

export function claudeConfigPath(ctx: Pick<HostContext, "projectRoot" | "scope">): string {
  if (ctx.scope === "project") return join(ctx.projectRoot, ".mcp.json");
  return process.env.CLAUDE_CONFIG_DIR ? join(claudeHome(), ".claude.json") : join(userHome(), ".claude.json");
}

function entryFor(ctx: HostContext): Record<string, unknown> {
  return { type: "stdio", command: ctx.server.command, args: ctx.server.args };
}

function isCurrent(entry: Record<string, unknown> | undefined, ctx: HostContext): boolean {
  return entry !== undefined && entry.command === ctx.server.command && jsonEqual(entry.args, ctx.server.args);
}

/** The `claude` CLI, when installed (SQRL_CLAUDE_BIN overrides, "" disables). */
export function claudeCli(): string | undefined {
  const override = sqrlEnv("SQRL_CLAUDE_BIN");
  if (override !== undefined) return override === "" ? undefined : override;
  return Bun.which("claude") ?? undefined;
}

function runClaude(cli: string, args: string[], cwd: string): void {
  const res = Bun.spawnSync([cli, ...args], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: process.env });
  if (res.exitCode !== 0) {
    const why = `${res.stderr.toString().trim() || res.stdout.toString().trim()}`.split("\n")[0];
    throw new SqrlError(
      "host_cli_failed",
      `\`claude ${args.join(" ")}\` failed (${why}). Run it yourself to see why, or set SQRL_CLAUDE_BIN= (empty) to let sqrl edit the config file directly.`,
    );
  }
}

function dropEmptyServers(doc: Record<string, unknown>): Record<string, unknown> {
  const { mcpServers, ...rest } = doc;
  return isObject(mcpServers) && Object.keys(mcpServers).length === 0 ? rest : doc;
}

function cliScope(scope: HostScope): string {
  return scope === "project" ? "project" : "user";
}

/** The user's `.claude.json` (Claude Code's own state: user-scope servers, trusted folders). */
function claudeStatePath(): string {
  return claudeConfigPath({ projectRoot: "", scope: "user" });
}

/**
 * Why a project-scope `.mcp.json` server does not start yet, or undefined when it will: Claude
 * Code runs a repo's `.mcp.json` servers only in a folder whose trust prompt was accepted (kept
 * per folder in `.claude.json`), and never one the user disabled.
 */
export function claudeProjectApproval(projectRoot: string): string | undefined {
  const projects = readJsonObject(claudeStatePath()).projects;
  const entries = isObject(projects) ? projects : {};
  const own = entries[projectRoot];
  if (isObject(own) && Array.isArray(own.disabledMcpjsonServers) && own.disabledMcpjsonServers.includes(SERVER_NAME)) {
    return "disabled in Claude Code for this folder: enable it with /mcp in claude, or register it for your user: sqrl hosts add claude --scope user";
  }
  for (let dir = projectRoot; ; dir = dirname(dir)) {
    const entry = entries[dir];
    if (isObject(entry) && entry.hasTrustDialogAccepted === true) return undefined;
    if (dirname(dir) === dir) break;
  }
  return "waits for approval: run `claude` in the repo and accept the folder (or use user scope: sqrl hosts add claude --scope user)";
}

export const claudeHost: HostAdapter = {
  name: "claude",
  defaultScope: "user",
  scopes: ["user", "project"],
  add(ctx) {
    const path = claudeConfigPath(ctx);
    const existing = readJsonEntry(path, "mcpServers", SERVER_NAME);
    const cli = claudeCli();
    if (!cli)
      return {
        host: "claude",
        scope: ctx.scope,
        path,
        action: upsertJsonEntry(
          path,
          "mcpServers",
          SERVER_NAME,
          entryFor(ctx),
          ctx.scope === "project" ? 0o644 : 0o600,
        ),
        via: "file",
      };
    if (isCurrent(existing, ctx)) return { host: "claude", scope: ctx.scope, path, action: "unchanged", via: "cli" };
    if (existing) runClaude(cli, ["mcp", "remove", "--scope", cliScope(ctx.scope), SERVER_NAME], ctx.projectRoot);
    runClaude(
      cli,
      ["mcp", "add", "--scope", cliScope(ctx.scope), SERVER_NAME, "--", ctx.server.command, ...ctx.server.args],
      ctx.projectRoot,
    );
    const action: ChangeAction = existing ? "updated" : "added";
    return { host: "claude", scope: ctx.scope, path, action, via: "cli" };
  },
  remove(ctx) {
    const path = claudeConfigPath(ctx);
    const cli = claudeCli();
    if (!cli)
      return {
        host: "claude",
        scope: ctx.scope,
        path,
        action: removeJsonEntry(path, "mcpServers", SERVER_NAME),
        via: "file",
      };
    if (!readJsonEntry(path, "mcpServers", SERVER_NAME))
      return { host: "claude", scope: ctx.scope, path, action: "absent", via: "cli" };
    runClaude(cli, ["mcp", "remove", "--scope", cliScope(ctx.scope), SERVER_NAME], ctx.projectRoot);
    // The CLI leaves `{"mcpServers": {}}` behind; a project file that held only sqrl goes, as with file edits.
    if (ctx.scope === "project") writeJsonObject(path, dropEmptyServers(readJsonObject(path)), 0o644);
    return { host: "claude", scope: ctx.scope, path, action: "removed", via: "cli" };
  },
  status(ctx): HostEntry {
    const path = claudeConfigPath(ctx);
    const entry = readJsonEntry(path, "mcpServers", SERVER_NAME);
    const waiting = entry !== undefined && ctx.scope === "project" ? claudeProjectApproval(ctx.projectRoot) : undefined;
    return {
      host: "claude",
      scope: ctx.scope,
      path,
      registered: entry !== undefined,
      command: typeof entry?.command === "string" ? entry.command : undefined,
      args: Array.isArray(entry?.args) ? (entry.args as string[]) : undefined,
      current: isCurrent(entry, ctx),
      ...(waiting ? { waiting } : {}),
    };
  },
};
