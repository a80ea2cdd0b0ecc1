/**
 * `sqrl log`: the trace of MCP tool calls of a project (arguments, memories returned, tokens, latency,
 * errors).
 */
import { plural } from "../shared/plural.ts";
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { MCP_TOOL_NAMES } from "../mcp/tool-names.ts";
import { ProjectNotRegisteredError, UsageError } from "../shared/errors.ts";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { relativeTime } from "../shared/time.ts";
import { redactDeep, redactText } from "../shared/privacy/redact.ts";
import type { ToolCallRow } from "../sql/tool-calls.ts";
import { resolveProjectDir } from "./init-project.ts";

function shortArgs(args: Record<string, unknown>): string {
  const parts = Object.entries(args)
    .filter(([k]) => k !== "project_root")
    .map(
      ([k, v]) =>
        `${k}=${typeof v === "string" ? JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v) : JSON.stringify(v)}`,
    );
  return parts.join(" ");
}

function render(rows: ToolCallRow[]): string {
  if (rows.length === 0) return "No MCP tool calls recorded for this project yet.\n";
  const lines = rows.map((r) => {
    const outcome = r.error
      ? `ERROR ${r.error}`
      : `${plural(r.memory_ids.length, "memory")}, ~${r.token_estimate ?? 0} tokens`;
    return `${r.ts}  (${relativeTime(r.ts)})  ${r.tool}  ${r.latency_ms.toFixed(1)} ms  ${outcome}\n    ${shortArgs(r.args) || "(no arguments)"}${r.memory_ids.length > 0 ? `\n    ids: ${r.memory_ids.join(", ")}` : ""}`;
  });
  return `${lines.join("\n")}\n`;
}

export default defineCommand({
  meta: {
    name: "log",
    description:
      "MCP tool calls of a project, newest first: tool, arguments, memories returned, tokens, latency, errors",
  },
  args: {
    path: { type: "positional", required: false, default: ".", description: "Project folder or a path inside it" },
    tool: { type: "string", description: `Only calls of this tool (${MCP_TOOL_NAMES.join(", ")})` },
    limit: { type: "string", default: "20", description: "At most this many calls" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  async run({ args }) {
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new UsageError(`--limit must be a positive whole number, not "${args.limit}".`);
    if (args.tool !== undefined && !(MCP_TOOL_NAMES as readonly string[]).includes(args.tool))
      throw new UsageError(`Unknown tool "${args.tool}". Use one of: ${MCP_TOOL_NAMES.join(", ")}.`);
    const dir = resolveProjectDir(args.path);
    const root = projectForPath(dir, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(dir);
    const { openProjectDb } = await import("../sql/open.ts");
    const { listToolCalls } = await import("../sql/tool-calls.ts");
    const db = openProjectDb(root, { readonly: true });
    try {
      // rows written before redaction covered the trace are redacted on the way out too
      const rows = listToolCalls(db, { tool: args.tool, limit }).map((r) => ({
        ...r,
        args: redactDeep(r.args),
        error: r.error === null ? null : redactText(r.error),
      }));
      process.stdout.write(args.json ? `${JSON.stringify(rows, null, 2)}\n` : render(rows));
    } finally {
      db.close();
    }
  },
});
