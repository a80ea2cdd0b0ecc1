/**
 * Gemini CLI: `mcpServers.sqrl` in `settings.json`, the project's `.gemini/settings.json` or the
 * user's `~/.gemini/settings.json` (the default: one memory server for every repo). Gemini starts
 * stdio servers in the folder it runs in.
 */
import { join } from "node:path";
import { geminiHome } from "../../shared/paths.ts";
import { jsonHost } from "./json-host.ts";

export const geminiHost = jsonHost({
  name: "gemini",
  defaultScope: "user",
  path: (ctx) =>
    ctx.scope === "project" ? join(ctx.projectRoot, ".gemini", "settings.json") : join(geminiHome(), "settings.json"),
  entry: (ctx) => ({ command: ctx.server.command, args: ctx.server.args }),
});
