/** MCP tool `recall_episode`: one past episode expanded back to its events, inside the budget. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EpisodeRecall } from "../../shared/api.ts";
import type { McpDeps } from "../deps.ts";
import { budgetField, projectRootField, READ_ONLY_ANNOTATIONS, runTool, searchHint } from "./tool-kit.ts";
import { ToolAnswer } from "./tool-answer.ts";

export const RecallEpisodeInput = z.object({
  project_root: projectRootField,
  episode_id: z.string().min(1).describe("An episode id from get_memory_timeline or a search result's source."),
  context_budget_tokens: budgetField("budgets.search, 600"),
});

export const RECALL_TOOL = "recall_episode";

/** One past episode expanded back to its raw events (newest details kept within the budget). */
export function registerRecallEpisodeTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    RECALL_TOOL,
    {
      title: "Recall an episode",
      description:
        "Expand one past work episode back to what actually happened (messages, commands, edits, errors), newest details first within the budget.",
      inputSchema: RecallEpisodeInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("recall one past session in detail: what was done, commands, errors, edits"),
      annotations: { title: "Recall episode", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: RECALL_TOOL,
        args,
        budgetKey: "search",
        output: EpisodeRecall,
        relevant: () => true,
        call: ({ projectId, budget }) =>
          deps.bridge.request(
            "/recall",
            { query: { project_id: projectId, episode_id: args.episode_id, context_budget_tokens: budget } },
            EpisodeRecall,
          ),
      }),
  );
}
