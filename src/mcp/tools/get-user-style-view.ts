/** MCP tool `get_user_style_view`: how this developer wants code written and work done. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { UserStyleView, ViewMode } from "../../shared/api.ts";
import type { McpDeps } from "../deps.ts";
import {
  budgetField,
  includeSeenField,
  projectRootField,
  READ_ONLY_ANNOTATIONS,
  runTool,
  searchHint,
  userIdField,
} from "./tool-kit.ts";
import { ToolAnswer } from "./tool-answer.ts";

export const GetUserStyleViewInput = z.object({
  project_root: projectRootField,
  user_id: userIdField,
  mode: ViewMode.optional().describe(
    "core: the 3-5 most important items (default); full: everything that fits the budget.",
  ),
  context_budget_tokens: budgetField("budgets.view, 256"),
  include_seen: includeSeenField,
});

export const USER_STYLE_TOOL = "get_user_style_view";

/** The user's coding style (project style merged over global). */
export function registerGetUserStyleViewTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    USER_STYLE_TOOL,
    {
      title: "User coding style",
      description:
        "At the start of a session in a repo: how this user likes code written (tools, conventions, preferences and corrections they gave before), project style merged over global.",
      inputSchema: GetUserStyleViewInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("coding conventions and style: how this user likes code, tools, preferences"),
      annotations: { title: "User style", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: USER_STYLE_TOOL,
        args,
        budgetKey: "view",
        output: UserStyleView,
        relevant: (a) => a.items.length > 0,
        call: ({ projectId, budget, exclude }) =>
          deps.bridge.request(
            "/views/user_style",
            {
              query: {
                project_id: projectId,
                user_id: args.user_id,
                mode: args.mode ?? "core",
                context_budget_tokens: budget,
                exclude_memory_ids: exclude,
              },
            },
            UserStyleView,
          ),
      }),
  );
}
