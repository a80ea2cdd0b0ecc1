/**
 * `sqrl eval`: replay the project's own sessions and measure what memory would have served each one
 * (src/engine/retrieve/eval/). Runs in this process against data.db opened read only: it never
 * changes memory. Progress on stderr; a table on stdout, or `--json` (the EvalReport schema). The
 * report is kept as the project's last eval (src/shared/last-eval.ts, outside data.db) for `sqrl ui`.
 */
import { defineCommand } from "citty";
import { UsageError } from "../shared/errors.ts";
import { parseBudget, print, printJson, projectRootFor } from "./memory-cli.ts";

export default defineCommand({
  meta: {
    name: "eval",
    description:
      "Replay the project's sessions: what memory would have served each, against what it needed (read only)",
  },
  args: {
    project: {
      type: "string",
      description: "Project folder (default: the registered project containing the current directory)",
    },
    sessions: { type: "string", description: "Only the last N sessions (default: all)" },
    budget: { type: "string", description: "Token budget per session (default: config budgets.task_context)" },
    json: { type: "boolean", description: "Print the report as JSON" },
  },
  async run({ args }) {
    const sessions = parseCount(args.sessions);
    const budgetArg = parseBudget(args.budget);
    const root = projectRootFor(args.project);
    const [
      { openProjectDb },
      { evaluateProject },
      { processConfig },
      { loadTokenCounter },
      { renderEvalReport },
      { saveLastEval },
    ] = await Promise.all([
      import("../sql/open.ts"),
      import("../engine/retrieve/eval/replay-eval.ts"),
      import("../shared/config.ts"),
      import("../shared/tokens.ts"),
      import("./eval-table.ts"),
      import("../shared/last-eval.ts"),
    ]);
    const cfg = processConfig().get();
    const budget = budgetArg ?? cfg["budgets.task_context"];
    const counter = await loadTokenCounter(cfg["tokens.counter"]);
    const db = openProjectDb(root, { readonly: true });
    const tty = process.stderr.isTTY === true;
    try {
      const report = await evaluateProject(db, root, {
        budget,
        counter,
        userId: cfg.user_id,
        ...(sessions !== undefined ? { sessions } : {}),
        progress: (done, total) => {
          if (tty) process.stderr.write(`\reval: ${done}/${total} sessions${done === total ? "\n" : ""}`);
          else if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0)
            process.stderr.write(`eval: ${done}/${total} sessions\n`);
        },
      });
      if (report.sessions_evaluated === 0) process.stderr.write("eval: no session to replay (it needs two or more)\n");
      saveLastEval(root, report, "cli");
      process.stderr.write("eval: kept as the project's last eval (`sqrl ui` shows it)\n");
      if (args.json) printJson(report);
      else print(renderEvalReport(report));
    } finally {
      db.close();
    }
  },
});

function parseCount(raw: unknown): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new UsageError(`--sessions must be a whole number between 1 and 100000, got "${String(raw)}".`);
  return n;
}
