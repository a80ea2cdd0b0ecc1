/**
 * `sqrl timeline`: the project's episodes in time order.
 */
import { defineCommand } from "citty";
import { ROUTES } from "../shared/api.ts";
import { UsageError } from "../shared/errors.ts";
import { parseSince } from "../shared/since.ts";
import { callDaemon, commonArgs, parseBudget, print, printJson, projectRootFor } from "./memory-cli.ts";

/** `sqrl timeline`: the project's episodes in time order. */
export default defineCommand({
  meta: { name: "timeline", description: "Episodes of the project in time order (summary, files, outcome)" },
  args: {
    limit: { type: "string", description: "Most recent episodes to consider (default 20)" },
    since: {
      type: "string",
      description: "Only episodes starting at or after this time: 2025-11-24, yesterday, 2 days ago, last week, 3d",
    },
    budget: { type: "string", description: "Token budget (default: config budgets.search)" },
    ...commonArgs,
  },
  async run({ args }) {
    const limit = args.limit === undefined ? undefined : Number(args.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 1000))
      throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${args.limit}".`);
    if (args.since !== undefined) parseSince(args.since); // refuse a time sqrl cannot read before starting the daemon
    const budget = parseBudget(args.budget);
    const query = {
      project_id: projectRootFor(args.project),
      ...(limit ? { limit } : {}),
      ...(args.since ? { since: args.since } : {}),
      ...(budget ? { context_budget_tokens: budget } : {}),
    };
    const res = await callDaemon(ROUTES.timeline, query);
    if (args.json) return printJson(res);
    print(res.markdown);
  },
});
