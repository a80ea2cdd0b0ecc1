/**
 * Default tool budgets from config.toml (`budgets.*`), through the process's config accessor, which
 * re-reads the file when it changes so `sqrl config set` applies to a running session. Only the file is read (no user-id lookup): the config module is imported
 * lazily so `sqrl mcp` starts without the TOML parser.
 */
import { CONFIG_KEYS, type ConfigKey } from "../shared/config-keys.ts";
import type { ToolBudgets } from "./deps.ts";

export async function configBudgets(): Promise<ToolBudgets> {
  const { processConfig } = await import("../shared/config.ts");
  const file = processConfig().file();
  return {
    task_context: budgetOf(file, "budgets.task_context"),
    view: budgetOf(file, "budgets.view"),
    search: budgetOf(file, "budgets.search"),
  };
}

/** `budgets.session_start` (the Claude Code SessionStart hook's total). */
export async function sessionStartBudget(): Promise<number> {
  const { processConfig } = await import("../shared/config.ts");
  return budgetOf(processConfig().file(), "budgets.session_start");
}

type BudgetKey = "budgets.task_context" | "budgets.view" | "budgets.search" | "budgets.session_start";

function budgetOf(file: Partial<Record<ConfigKey, unknown>>, key: BudgetKey): number {
  const value = file[key];
  return typeof value === "number" ? value : (CONFIG_KEYS[key].default as number);
}
