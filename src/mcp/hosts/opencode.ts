/**
 * OpenCode: `mcp.sqrl` in `opencode.json`, the user's `~/.config/opencode/opencode.json` (the default:
 * one memory server for every repo) or the repo's `opencode.json`, in OpenCode's own shape:
 * `{"type": "local", "command": [bin, "mcp"], "enabled": true}`.
 */
import { join } from "node:path";
import { opencodeConfigDir } from "../../shared/paths.ts";
import { jsonEqual, readJsonEntry, removeJsonEntry, upsertJsonEntry } from "./config-files.ts";
import { type HostAdapter, type HostContext, SERVER_NAME } from "./host-types.ts";

const KEY = "mcp";

function path(ctx: Pick<HostContext, "projectRoot" | "scope">): string {
  return ctx.scope === "project" ? join(ctx.projectRoot, "opencode.json") : join(opencodeConfigDir(), "opencode.json");
}

function entry(ctx: HostContext): Record<string, unknown> {
  return { type: "local", command: [ctx.server.command, ...ctx.server.args], enabled: true };
}

export const opencodeHost: HostAdapter = {
  name: "opencode",
  defaultScope: "user",
  scopes: ["project", "user"],
  add(ctx) {
    const p = path(ctx);
    const action = upsertJsonEntry(p, KEY, SERVER_NAME, entry(ctx), ctx.scope === "project" ? 0o644 : 0o600);
    return { host: "opencode", scope: ctx.scope, path: p, action, via: "file" };
  },
  remove(ctx) {
    const p = path(ctx);
    return { host: "opencode", scope: ctx.scope, path: p, action: removeJsonEntry(p, KEY, SERVER_NAME), via: "file" };
  },
  status(ctx) {
    const p = path(ctx);
    const found = readJsonEntry(p, KEY, SERVER_NAME);
    const command = Array.isArray(found?.command) ? (found.command as unknown[]).map(String) : undefined;
    return {
      host: "opencode",
      scope: ctx.scope,
      path: p,
      registered: found !== undefined,
      command: command?.[0],
      args: command?.slice(1),
      current: found !== undefined && jsonEqual(found.command, entry(ctx).command) && found.enabled !== false,
    };
  },
};
