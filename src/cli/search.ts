/**
 * `sqrl search "<query>"`: ranked memory search with scores and reasons, through the daemon's search route.
 */
import { defineCommand } from "citty";
import { MEMORY_TYPES, ROUTES } from "../shared/api.ts";
import { UsageError } from "../shared/errors.ts";
import { callDaemon, commonArgs, parseBudget, print, printJson, projectRootFor, splitList } from "./memory-cli.ts";

/** `sqrl search "<query>"`: ranked memory search with scores and reasons. */
export default defineCommand({
  meta: { name: "search", description: "Search the project's memory (BM25 + importance + recency)" },
  args: {
    query: { type: "positional", required: true, description: "What to look for" },
    "top-k": { type: "string", alias: "top", description: "How many results, 1-100 (default 5)" },
    types: { type: "string", description: `Memory types, comma-separated (${MEMORY_TYPES.join(", ")})` },
    paths: { type: "string", description: "Scope paths that bias the ranking, comma-separated" },
    budget: { type: "string", description: "Token budget (default: config budgets.search)" },
    ...commonArgs,
  },
  async run({ args }) {
    const types = splitList(args.types);
    const bad = types.find((t) => !(MEMORY_TYPES as readonly string[]).includes(t));
    if (bad) throw new UsageError(`Unknown memory type "${bad}". Use: ${MEMORY_TYPES.join(", ")}.`);
    const rawTop = args["top-k"];
    const top = rawTop === undefined ? undefined : Number(rawTop);
    if (top !== undefined && (!Number.isInteger(top) || top < 1 || top > 100))
      throw new UsageError(`--top-k must be a whole number from 1 to 100, got "${rawTop}".`);
    const budget = parseBudget(args.budget);
    const query = {
      project_id: projectRootFor(args.project),
      query: args.query,
      ...(top ? { top_k: top } : {}),
      ...(types.length > 0 ? { types } : {}),
      ...(args.paths ? { scope_paths: splitList(args.paths) } : {}),
      ...(budget ? { context_budget_tokens: budget } : {}),
    };
    const res = await callDaemon(ROUTES.search_memory, query);
    if (args.json) return printJson(res);
    if (res.results.length === 0) return print(res.markdown);
    for (const r of res.results) {
      print(`${r.score.toFixed(3)}  [${r.type}] ${r.content}`);
      print(
        `       ${r.memory_id} · ${r.reason}${r.source.file_paths.length > 0 ? ` · ${r.source.file_paths.slice(0, 3).join(", ")}` : ""}`,
      );
    }
    print(`\n${res.markdown.split("\n").at(-1)}`);
  },
});
