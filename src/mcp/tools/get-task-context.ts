/** MCP tool `get_task_context` (primary): the memories relevant to one task, with reasons, inside the budget — or an abstention. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryType, TaskContext } from "../../shared/api.ts";
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

export const GetTaskContextInput = z.object({
  project_root: projectRootField,
  user_id: userIdField,
  task_description: z
    .string()
    .min(1)
    .describe("What you are about to do, in a sentence (e.g. 'Add a delete endpoint for inventory items')."),
  active_file_paths: z
    .array(z.string())
    .optional()
    .describe("Files you are working in (repo-relative or absolute); memories about them rank higher."),
  context_budget_tokens: budgetField("budgets.task_context, 400"),
  preferred_memory_types: z
    .array(MemoryType)
    .optional()
    .describe("Limit to these kinds: user_style, project_fact, pitfall, recipe."),
  include_seen: includeSeenField,
});

export const TASK_CONTEXT_TOOL = "get_task_context";

/** The primary tool: only the memories relevant to one task, each with the reason it was picked. */
export function registerGetTaskContextTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    TASK_CONTEXT_TOOL,
    {
      title: "Task context from project memory",
      description:
        "Primary tool. Before a specific coding task, get the long-term memories relevant to it (user style, project facts, pitfalls, recipes), each with why it was picked, inside a token budget. Abstains (has_relevant_memory: false) when nothing is relevant: then ignore it.",
      inputSchema: GetTaskContextInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("memory for a task: what we know, conventions, pitfalls, recipes before coding"),
      annotations: { title: "Task context", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: TASK_CONTEXT_TOOL,
        args,
        budgetKey: "task_context",
        output: TaskContext,
        relevant: (a) => a.has_relevant_memory,
        call: ({ projectId, budget, exclude, workTree }) =>
          deps.bridge.request(
            "/task_context",
            {
              method: "POST",
              body: {
                project_id: projectId,
                work_tree: workTree,
                user_id: args.user_id,
                task_description: args.task_description,
                active_file_paths: args.active_file_paths ?? [],
                context_budget_tokens: budget,
                preferred_memory_types: args.preferred_memory_types,
                exclude_memory_ids: exclude,
              },
            },
            TaskContext,
          ),
      }),
  );
}
