/**
 * A host adapter for hosts whose config is a JSON file with an `mcpServers` object (Gemini CLI, Cursor).
 */
import { jsonEqual, readJsonEntry, removeJsonEntry, upsertJsonEntry } from "./config-files.ts";
import { SERVER_NAME, type HostAdapter, type HostContext, type HostName, type HostScope } from "./host-types.ts";

/** A host whose config is a JSON file with an `mcpServers` object (Gemini CLI, Cursor). */
export function jsonHost(spec: {
  name: HostName;
  defaultScope: HostScope;
  path: (ctx: Pick<HostContext, "projectRoot" | "scope">) => string;
  entry: (ctx: HostContext) => Record<string, unknown>;
}): HostAdapter {
  const isCurrent = (entry: Record<string, unknown> | undefined, ctx: HostContext): boolean => {
    const want = spec.entry(ctx);
    return entry !== undefined && entry.command === want.command && jsonEqual(entry.args, want.args);
  };
  return {
    name: spec.name,
    defaultScope: spec.defaultScope,
    scopes: ["project", "user"],
    add(ctx) {
      const path = spec.path(ctx);
      const action = upsertJsonEntry(
        path,
        "mcpServers",
        SERVER_NAME,
        spec.entry(ctx),
        ctx.scope === "project" ? 0o644 : 0o600,
      );
      return { host: spec.name, scope: ctx.scope, path, action, via: "file" };
    },
    remove(ctx) {
      const path = spec.path(ctx);
      return {
        host: spec.name,
        scope: ctx.scope,
        path,
        action: removeJsonEntry(path, "mcpServers", SERVER_NAME),
        via: "file",
      };
    },
    status(ctx) {
      const path = spec.path(ctx);
      const entry = readJsonEntry(path, "mcpServers", SERVER_NAME);
      return {
        host: spec.name,
        scope: ctx.scope,
        path,
        registered: entry !== undefined,
        command: typeof entry?.command === "string" ? entry.command : undefined,
        args: Array.isArray(entry?.args) ? (entry.args as string[]) : undefined,
        current: isCurrent(entry, ctx),
      };
    },
  };
}
