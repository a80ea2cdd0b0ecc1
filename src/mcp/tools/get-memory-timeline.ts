/** MCP tool `get_memory_timeline`: episodes in time order, filtered by a `since` people write ("yesterday", ISO dates). */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { Timeline } from "../../shared/api.ts";
import type { McpDeps } from "../deps.ts";
import { budgetField, projectRootField, READ_ONLY_ANNOTATIONS, runTool, searchHint } from "./tool-kit.ts";
import { ToolAnswer } from "./tool-answer.ts";

export const GetMemoryTimelineInput = z.object({
  project_root: projectRootField,
  limit: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("At most this many episodes, newest first (default 20)."),
  since: z.string().min(1).optional().describe("Only episodes after this ISO-8601 time (e.g. 2025-06-01T00:00:00Z)."),
  context_budget_tokens: budgetField("budgets.search, 600"),
});

export const TIMELINE_TOOL = "get_memory_timeline";

/** Past work sessions of this project in time order: summary, files, outcome. */
export function registerGetMemoryTimelineTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    TIMELINE_TOOL,
    {
      title: "Memory timeline",
      description:
        "What happened in this project recently: past work episodes in time order with summary, files and outcome. Use recall_episode on an episode_id for its full detail.",
      inputSchema: GetMemoryTimelineInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("past sessions: what changed last week, recent work, history, what happened"),
      annotations: { title: "Timeline", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: TIMELINE_TOOL,
        args,
        budgetKey: "search",
        output: Timeline,
        relevant: (a) => a.episodes.length > 0,
        call: ({ projectId, budget }) =>
          deps.bridge.request(
            "/timeline",
            {
              query: {
                project_id: projectId,
                limit: args.limit ?? 20,
                since: args.since,
                context_budget_tokens: budget,
              },
            },
            Timeline,
          ),
      }),
  );
}
