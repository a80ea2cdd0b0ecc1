/**
 * Cursor: `mcpServers.sqrl` in `~/.cursor/mcp.json` (the default) or the project's
 * `.cursor/mcp.json`. Cursor does not promise to start servers inside the project, so the project
 * entry names it with `--project ${workspaceFolder}` (expanded by Cursor); the user-wide entry
 * relies on the folder Cursor starts it in.
 */
import { join } from "node:path";
import { userHome } from "../../shared/paths.ts";
import { jsonHost } from "./json-host.ts";

export const cursorHost = jsonHost({
  name: "cursor",
  defaultScope: "user",
  path: (ctx) =>
    ctx.scope === "project" ? join(ctx.projectRoot, ".cursor", "mcp.json") : join(userHome(), ".cursor", "mcp.json"),
  entry: (ctx) => ({
    type: "stdio",
    command: ctx.server.command,
    // Cursor expands ${workspaceFolder} itself: the shared file names no folder of this machine.
    args: ctx.scope === "project" ? [...ctx.server.args, "--project", "${workspaceFolder}"] : ctx.server.args,
  }),
});
