/**
 * `sqrl view <name>`: one of the memory views (user_style, project_brief, pitfalls).
 */
import { defineCommand } from "citty";
import { ROUTES, VIEW_NAMES, type ViewName } from "../shared/api.ts";
import { UsageError } from "../shared/errors.ts";
import { callDaemon, commonArgs, parseBudget, print, printJson, projectRootFor, splitList } from "./memory-cli.ts";

/** `sqrl view <name>`: one of the memory views (user_style, project_brief, pitfalls). */
export default defineCommand({
  meta: { name: "view", description: `Show a memory view: ${VIEW_NAMES.join(", ")}` },
  args: {
    name: { type: "positional", required: true, description: VIEW_NAMES.join(" | ") },
    mode: { type: "string", description: "core (default, 3–5 items) or full" },
    budget: { type: "string", description: "Token budget (default: config budgets.view)" },
    paths: { type: "string", description: "pitfalls: scope paths, comma-separated" },
    task: { type: "string", description: "pitfalls: task description to rank by" },
    ...commonArgs,
  },
  async run({ args }) {
    const name = args.name.replace(/-/g, "_") as ViewName;
    if (!(VIEW_NAMES as readonly string[]).includes(name))
      throw new UsageError(`Unknown view "${args.name}". Views: ${VIEW_NAMES.join(", ")}.`);
    const mode = args.mode ?? "core";
    if (mode !== "core" && mode !== "full") throw new UsageError(`--mode must be core or full, got "${mode}".`);
    const budget = parseBudget(args.budget);
    const query = {
      project_id: projectRootFor(args.project),
      mode,
      ...(budget ? { context_budget_tokens: budget } : {}),
      ...(args.paths ? { scope_paths: splitList(args.paths) } : {}),
      ...(args.task ? { task_description: args.task } : {}),
    };
    const res = await callDaemon(ROUTES[name], query);
    if (args.json) return printJson(res);
    print(res.markdown);
  },
});
