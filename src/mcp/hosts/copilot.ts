/**
 * GitHub Copilot CLI: `mcpServers.sqrl` in the user's `~/.copilot/mcp-config.json` (the default, what
 * `copilot mcp add` writes) or the repo's `.github/mcp.json`, in Copilot's shape
 * `{"type": "local", "command", "args", "tools": ["*"]}`.
 */
import { join } from "node:path";
import { copilotHome } from "../../shared/paths.ts";
import { jsonHost } from "./json-host.ts";

export const copilotHost = jsonHost({
  name: "copilot",
  defaultScope: "user",
  path: (ctx) =>
    ctx.scope === "project" ? join(ctx.projectRoot, ".github", "mcp.json") : join(copilotHome(), "mcp-config.json"),
  entry: (ctx) => ({ type: "local", command: ctx.server.command, args: ctx.server.args, tools: ["*"] }),
});
