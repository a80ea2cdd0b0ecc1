/** MCP tool `search_project_memory`: ranked search over the project's memory. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryType, SearchResponse } from "../../shared/api.ts";
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

export const SearchProjectMemoryInput = z.object({
  project_root: projectRootField,
  query: z
    .string()
    .min(1)
    .describe("Words to look for (code identifiers, paths and error text work too), e.g. 'JWT login tests'."),
  top_k: z.number().int().min(1).max(100).optional().describe("At most this many results (default 5)."),
  types: z.array(MemoryType).optional().describe("Only these kinds: user_style, project_fact, pitfall, recipe."),
  scope_paths: z.array(z.string()).optional().describe("Prefer memories about these files or folders."),
  context_budget_tokens: budgetField("budgets.search, 600"),
  include_seen: includeSeenField,
});

export const SEARCH_TOOL = "search_project_memory";

/** Full-text (and, when configured, semantic) search over the project's memory. */
export function registerSearchProjectMemoryTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    SEARCH_TOOL,
    {
      title: "Search project memory",
      description:
        "Deep recall: search the project's long-term memory by words, identifiers or paths. Each result has a score, the reason it matched and its source (episodes, files).",
      inputSchema: SearchProjectMemoryInput,
      outputSchema: ToolAnswer,
      _meta: searchHint("what did we decide and why: search decisions, facts, notes, past discussions"),
      annotations: { title: "Search memory", ...READ_ONLY_ANNOTATIONS },
    },
    (args) =>
      runTool(deps, {
        tool: SEARCH_TOOL,
        args,
        budgetKey: "search",
        output: SearchResponse,
        relevant: (a) => a.results.length > 0,
        call: ({ projectId, budget, exclude, workTree }) =>
          deps.bridge.request(
            "/search_memory",
            {
              query: {
                project_id: projectId,
                work_tree: workTree,
                query: args.query,
                top_k: args.top_k ?? 5,
                types: args.types ?? [],
                scope_paths: args.scope_paths ?? [],
                context_budget_tokens: budget,
                exclude_memory_ids: exclude,
              },
            },
            SearchResponse,
          ),
      }),
  );
}
