import { homedir } from "node:os";
import { join } from "node:path";
import { jsonHost } from "./json-host.ts";

/**
 * Cursor: `mcpServers.sqrl` in the project's `.cursor/mcp.json` (or `~/.cursor/mcp.json`). Cursor
 * does not promise to start servers inside the project, so the project entry names it with
 * `--project`; the user-wide entry relies on the folder Cursor starts it in.
 */
export const cursorHost = jsonHost({
  name: "cursor",
  defaultScope: "project",
  path: (ctx) => (ctx.scope === "project" ? join(ctx.projectRoot, ".cursor", "mcp.json") : join(homedir(), ".cursor", "mcp.json")),
  entry: (ctx) => ({
    type: "stdio",
    command: ctx.server.command,
    args: ctx.scope === "project" ? [...ctx.server.args, "--project", ctx.projectRoot] : ctx.server.args,
  }),
});
