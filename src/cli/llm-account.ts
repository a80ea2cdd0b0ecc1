/**
 * The account line of `sqrl status` and `sqrl doctor` for `claude_code` / `codex`: whose account a
 * distilling call uses and what it is billed to, asked of the CLI itself.
 */
import type { CliAccount } from "../engine/llm/cli-account.ts";
import type { ConfigValues } from "../shared/config-keys.ts";

/** For `claude_code` / `codex`: whose account a call uses and what it is billed to (asks the CLI, ~1 s). */
export async function llmAccount(cfg: ConfigValues): Promise<{ line: string; json: CliAccount } | null> {
  const kind = cfg["llm.provider"];
  if (kind !== "claude_code" && kind !== "codex") return null;
  const { cliAccount, describeAccount } = await import("../engine/llm/cli-account.ts");
  const a = await cliAccount(kind, {
    configuredPath: cfg["llm.cli_path"],
    billing: cfg["llm.billing"],
    env: process.env,
  });
  const withheld =
    cfg["llm.billing"] === "subscription" ? "; API keys in sqrl's environment are withheld from it (llm.billing)" : "";
  return { line: `${describeAccount(a)}${withheld}`, json: a };
}
