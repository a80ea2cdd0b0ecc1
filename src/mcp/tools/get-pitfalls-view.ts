/** MCP tool `get_pitfalls_view`: the project's known pitfalls, for a risky change. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { PitfallsView } from "../../shared/api.ts";
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

export const GetPitfallsViewInput = z.object({
  project_root: projectRootField,
  scope_paths: z
    .array(z.string())
    .optional()
    .describe("Files or folders the work touches; pitfalls about them come first."),
  task_description: z
    .string()
    .min(1)
    .optional()
    .describe("The risky task (e.g. 'Refactor auth flow'); pitfalls are ranked against it."),
  context_budget_tokens: budgetField("budgets.view, 256"),
  include_seen: includeSeenField,
});

export const PITFALLS_TOOL = "get_pitfalls_view";

/** Known traps of this project: what failed before, where, and what fixed it. */
export function registerGetPitfallsViewTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    PITFALLS_TOOL,
    {
      title: "Project pitfalls",
      description:
        "Before risky or cross-cutting work (refactors, migrations, auth, build changes): what went wrong in this project before, where, and what fixed it. Says so when none are relevant.",
      inputSchema: GetPitfallsViewInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("pitfalls: what went wrong before, known bugs, gotchas, risky changes"),
      annotations: { title: "Pitfalls", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: PITFALLS_TOOL,
        args,
        budgetKey: "view",
        output: PitfallsView,
        relevant: (a) => a.has_relevant_pitfalls,
        call: ({ projectId, budget, exclude, workTree }) =>
          deps.bridge.request(
            "/views/pitfalls",
            {
              query: {
                project_id: projectId,
                work_tree: workTree,
                scope_paths: args.scope_paths ?? [],
                task_description: args.task_description,
                context_budget_tokens: budget,
                exclude_memory_ids: exclude,
              },
            },
            PitfallsView,
          ),
      }),
  );
}
