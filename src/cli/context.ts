/**
 * `sqrl context "<task>"`: the memory relevant to a task, through the daemon's task_context route.
 */
import { defineCommand } from "citty";
import { MEMORY_TYPES, type MemoryType, ROUTES } from "../shared/api.ts";
import { UsageError } from "../shared/errors.ts";
import { callDaemon, commonArgs, parseBudget, print, printJson, projectRootFor, splitList } from "./memory-cli.ts";

/** `sqrl context "<task>"`: the memory relevant to a task, as the MCP tool get_task_context returns it. */
export default defineCommand({
  meta: { name: "context", description: "Memory relevant to a coding task, explained and inside a token budget" },
  args: {
    task: { type: "positional", required: true, description: "The task, in words" },
    files: { type: "string", description: "Active files, comma-separated (repo-relative)" },
    budget: { type: "string", description: "Token budget (default: config budgets.task_context)" },
    types: { type: "string", description: `Memory types, comma-separated (${MEMORY_TYPES.join(", ")})` },
    ...commonArgs,
  },
  async run({ args }) {
    const task = args.task.trim();
    if (!task)
      throw new UsageError('The task is empty: describe it in words, e.g. `sqrl context "add a delete endpoint"`.');
    const types = splitList(args.types);
    const bad = types.find((t) => !(MEMORY_TYPES as readonly string[]).includes(t));
    if (bad) throw new UsageError(`Unknown memory type "${bad}". Use: ${MEMORY_TYPES.join(", ")}.`);
    const budget = parseBudget(args.budget);
    const body = {
      project_id: projectRootFor(args.project),
      task_description: task,
      active_file_paths: splitList(args.files),
      ...(budget ? { context_budget_tokens: budget } : {}),
      ...(types.length > 0 ? { preferred_memory_types: types as MemoryType[] } : {}),
    };
    const res = await callDaemon(ROUTES.task_context, body);
    if (args.json) return printJson(res);
    print(res.markdown);
    if (res.selected_memories.length > 0) {
      print("\nWhy:");
      for (const m of res.selected_memories) print(`  ${m.memory_id}  ${m.reason}`);
    }
  },
});
