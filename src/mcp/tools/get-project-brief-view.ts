/** MCP tool `get_project_brief_view`: key facts, decisions and modules of the project. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ProjectBriefView, ViewMode } from "../../shared/api.ts";
import type { McpDeps } from "../deps.ts";
import {
  budgetField,
  includeSeenField,
  projectRootField,
  READ_ONLY_ANNOTATIONS,
  runTool,
  searchHint,
} from "./tool-kit.ts";
import { ToolAnswer } from "./tool-answer.ts";

export const GetProjectBriefViewInput = z.object({
  project_root: projectRootField,
  mode: ViewMode.optional().describe("core: the key facts (default); full: everything that fits the budget."),
  context_budget_tokens: budgetField("budgets.view, 256"),
  include_seen: includeSeenField,
});

export const PROJECT_BRIEF_TOOL = "get_project_brief_view";

/** What the project is: modules, stack, commands, key facts. */
export function registerGetProjectBriefViewTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    PROJECT_BRIEF_TOOL,
    {
      title: "Project brief",
      description:
        "At the start of a session in a repo: the project's modules, stack, commands and key facts learned from past sessions.",
      inputSchema: GetProjectBriefViewInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("how do we run the tests, build, lint: project commands, stack, modules, facts"),
      annotations: { title: "Project brief", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: PROJECT_BRIEF_TOOL,
        args,
        budgetKey: "view",
        output: ProjectBriefView,
        relevant: (a) => a.key_facts.length > 0 || a.modules.length > 0,
        call: ({ projectId, budget, exclude, workTree }) =>
          deps.bridge.request(
            "/views/project_brief",
            {
              query: {
                project_id: projectId,
                work_tree: workTree,
                mode: args.mode ?? "core",
                context_budget_tokens: budget,
                exclude_memory_ids: exclude,
              },
            },
            ProjectBriefView,
          ),
      }),
  );
}
