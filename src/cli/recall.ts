/**
 * `sqrl recall <episode-id>`: one episode expanded back to its raw events.
 */
import { defineCommand } from "citty";
import { ROUTES } from "../shared/api.ts";
import { redactDeep, redactText } from "../shared/privacy/redact.ts";
import { callDaemon, commonArgs, parseBudget, print, printJson, projectRootFor } from "./memory-cli.ts";

/** `sqrl recall <episode-id>`: one episode expanded back to its raw events. */
export default defineCommand({
  meta: { name: "recall", description: "Expand one episode back to its raw events (newest kept within the budget)" },
  args: {
    episode: { type: "positional", required: true, description: "Episode id (see `sqrl timeline`)" },
    budget: { type: "string", description: "Token budget (default: config budgets.search)" },
    ...commonArgs,
  },
  async run({ args }) {
    const budget = parseBudget(args.budget);
    const query = {
      project_id: projectRootFor(args.project),
      episode_id: args.episode,
      ...(budget ? { context_budget_tokens: budget } : {}),
    };
    const res = await callDaemon(ROUTES.recall, query);
    // events stored before a redaction rule existed are redacted on the way out
    if (args.json) return printJson(redactDeep(res));
    print(redactText(res.markdown));
  },
});
