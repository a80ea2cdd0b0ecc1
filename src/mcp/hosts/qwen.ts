/**
 * Qwen Code: `mcpServers.sqrl` in `settings.json`, the project's `.qwen/settings.json` or the user's
 * `~/.qwen/settings.json` (the default: one memory server for every repo), as its `qwen mcp add` writes.
 */
import { join } from "node:path";
import { qwenHome } from "../../shared/paths.ts";
import { jsonHost } from "./json-host.ts";

export const qwenHost = jsonHost({
  name: "qwen",
  defaultScope: "user",
  path: (ctx) =>
    ctx.scope === "project" ? join(ctx.projectRoot, ".qwen", "settings.json") : join(qwenHome(), "settings.json"),
  entry: (ctx) => ({ command: ctx.server.command, args: ctx.server.args }),
});
