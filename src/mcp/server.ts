/**
 * The sqrl MCP server: seven read-only tools over the daemon API, with the call pattern hosts are asked to
 * follow.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { redactDeep } from "../shared/privacy/redact.ts";
import { VERSION } from "../version.ts";
import { DaemonBridge } from "./daemon-bridge.ts";
import type { McpDeps } from "./deps.ts";
import { SessionDedup } from "./session-dedup.ts";
import { registerGetMemoryTimelineTool } from "./tools/get-memory-timeline.ts";
import { registerGetPitfallsViewTool } from "./tools/get-pitfalls-view.ts";
import { registerGetProjectBriefViewTool } from "./tools/get-project-brief-view.ts";
import { registerGetTaskContextTool } from "./tools/get-task-context.ts";
import { registerGetUserStyleViewTool } from "./tools/get-user-style-view.ts";
import { registerRecallEpisodeTool } from "./tools/recall-episode.ts";
import { registerSearchProjectMemoryTool } from "./tools/search-project-memory.ts";
import { Tracer } from "./trace.ts";

/** Reference §7, the call pattern hosts are asked to follow. */
export const SERVER_INSTRUCTIONS = [
  "sqrl serves this user's and this repo's long-term memory (style, project facts, pitfalls, recipes), learned from past agent sessions. It only reads.",
  'New session in a repo: get_user_style_view(mode="core", context_budget_tokens=256) and get_project_brief_view(mode="core", context_budget_tokens=256).',
  "Specific coding task: get_task_context(task_description=..., active_file_paths=[...], context_budget_tokens=400).",
  "Risky or cross-cutting task (auth, migrations, refactors): get_pitfalls_view(scope_paths=[...], context_budget_tokens=256), then get_task_context.",
  "Deep recall: search_project_memory(query=..., top_k=5); get_memory_timeline and recall_episode for what happened in past sessions.",
  "Budgets are hard ceilings: small models 150-256, large 400-800. has_relevant_memory=false means ignore the result. Memories already shown this session are omitted (include_seen=true repeats them).",
].join("\n");

/** Default wiring: the daemon API, a fresh session de-dup and a tracer, cwd = the process cwd. */
export function defaultDeps(overrides: Partial<McpDeps> = {}): McpDeps {
  const bridge = overrides.bridge ?? new DaemonBridge();
  return {
    bridge,
    dedup: new SessionDedup(),
    tracer: new Tracer(bridge),
    cwd: process.cwd(),
    ...overrides,
  };
}

/** The sqrl MCP server with its seven tools; connect it to any transport (stdio, in-memory). */
export function createServer(given: McpDeps = defaultDeps()): McpServer {
  const server = new McpServer(
    { name: "sqrl", title: "sqrl memory", version: VERSION },
    { instructions: SERVER_INSTRUCTIONS },
  );
  // Which host this is (its initialize clientInfo) decides what its model is handed of each answer.
  const deps: McpDeps = { ...given, clientInfo: given.clientInfo ?? (() => server.server.getClientVersion()) };
  redactToolArguments(server);
  registerGetTaskContextTool(server, deps);
  registerGetUserStyleViewTool(server, deps);
  registerGetProjectBriefViewTool(server, deps);
  registerGetPitfallsViewTool(server, deps);
  registerSearchProjectMemoryTool(server, deps);
  registerGetMemoryTimelineTool(server, deps);
  registerRecallEpisodeTool(server, deps);
  return server;
}

type ToolHandler = (args: unknown, extra: unknown) => unknown;

/**
 * Every tool sees its arguments redacted: an agent may paste a key into a query or a task, and
 * tools repeat their arguments (a search heading, the trace, the page, an LLM prompt). Memory is
 * stored redacted, so a redacted query finds what the plain one would.
 */
function redactToolArguments(server: McpServer): void {
  const register = server.registerTool.bind(server) as unknown as (
    name: string,
    config: unknown,
    cb: ToolHandler,
  ) => unknown;
  const redacting = (name: string, config: unknown, cb: ToolHandler) =>
    register(name, config, (args, extra) => cb(redactDeep(args), extra));
  server.registerTool = redacting as unknown as typeof server.registerTool;
}
