/**
 * Qwen Code: `mcpServers.sqrl` in `settings.json`, the project's `.qwen/settings.json` or the user's
 * `~/.qwen/settings.json` (the default: one memory server for every repo), as its `qwen mcp add` writes.
 */
import { join } from "node:path";
import { qwenHome } from "../../shared/paths.ts";
import { jsonHost } from "./json-host.ts";

/** Qwen Code's settings file for a scope (where its MCP servers and hooks live). */
export function qwenSettingsPath(projectRoot: string, scope: "user" | "project"): string {
  return scope === "project" ? join(projectRoot, ".qwen", "settings.json") : join(qwenHome(), "settings.json");
}

export const qwenHost = jsonHost({
  name: "qwen",
  defaultScope: "user",
  path: (ctx) => qwenSettingsPath(ctx.projectRoot, ctx.scope),
  entry: (ctx) => ({ command: ctx.server.command, args: ctx.server.args }),
});
