/**
 * Cursor: `mcpServers.sqrl` in `~/.cursor/mcp.json` (the default) or the project's
 * `.cursor/mcp.json`. Cursor does not promise to start servers inside the project, so the project
 * entry names it with `--project ${workspaceFolder}` (expanded by Cursor); the user-wide entry
 * relies on the folder Cursor starts it in.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { jsonHost } from "./json-host.ts";

export const cursorHost = jsonHost({
  name: "cursor",
  defaultScope: "user",
  path: (ctx) =>
    ctx.scope === "project" ? join(ctx.projectRoot, ".cursor", "mcp.json") : join(homedir(), ".cursor", "mcp.json"),
  entry: (ctx) => ({
    type: "stdio",
    command: ctx.server.command,
    // Cursor expands ${workspaceFolder} itself: the shared file names no folder of this machine.
    args: ctx.scope === "project" ? [...ctx.server.args, "--project", "${workspaceFolder}"] : ctx.server.args,
  }),
});
