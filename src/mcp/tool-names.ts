/**
 * The names of sqrl's seven MCP tools, for what checks a name without starting a server (`sqrl log
 * --tool`). test/mcp/server.test.ts holds the list equal to the tools the server registers.
 */
export const MCP_TOOL_NAMES = [
  "get_task_context",
  "search_project_memory",
  "get_user_style_view",
  "get_project_brief_view",
  "get_pitfalls_view",
  "get_memory_timeline",
  "recall_episode",
] as const;
