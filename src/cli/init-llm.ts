/**
 * `sqrl init --llm`: turn distilling through the user's own signed-in agent CLI on, where it can be.
 * `auto` (the default) looks for an installed, signed-in Claude Code, then Codex, on a plan (never an
 * API key unless `llm.billing = api_key`), says in one line what will be sent, to whom and at about
 * what cost, and turns it on when the user agrees (`--yes`). A provider the user already chose in
 * config.toml is left alone; `--llm none` keeps sqrl offline and says so in config.toml.
 */
import { readConfigFile, loadConfig, setConfigValue } from "../shared/config.ts";
import { UsageError } from "../shared/errors.ts";
import { confirm } from "./confirm.ts";

export const LLM_CHOICES = ["auto", "claude_code", "codex", "none"] as const;
export type LlmChoice = (typeof LLM_CHOICES)[number];

/**
 * What one session costs, all calls together (issue 25's measurement on real sessions: ~3.7k input
 * tokens of episode text per episode, ~13k tokens per session); `sqrl status` shows the real figure.
 */
export const TOKENS_PER_SESSION_ESTIMATE = 13_000;

export function parseLlmChoice(raw: string | undefined): LlmChoice {
  const v = (raw ?? "auto").trim();
  if ((LLM_CHOICES as readonly string[]).includes(v)) return v as LlmChoice;
  throw new UsageError(`--llm must be one of ${LLM_CHOICES.join(", ")}, got "${v}".`);
}

export interface LlmOffer {
  /** One line for init's output. */
  line: string;
  /** The provider in force after init. */
  provider: string;
}

export async function offerLlm(choice: LlmChoice, opts: { yes: boolean }): Promise<LlmOffer> {
  if (choice === "none") {
    setConfigValue("llm.provider", "none");
    return {
      line: "LLM: none (--llm none): sqrl distils your sessions offline, nothing is sent anywhere",
      provider: "none",
    };
  }
  const file = readConfigFile();
  const cfg = loadConfig();
  if (choice === "auto" && file["llm.provider"] !== undefined)
    return {
      line: `LLM: ${cfg["llm.provider"]} (already set in config.toml; \`sqrl init --llm claude_code|codex|none\` changes it)`,
      provider: cfg["llm.provider"],
    };
  const { cliAccount, describeAccount, CLI_LABEL } = await import("../engine/llm/cli-account.ts");
  const candidates = choice === "auto" ? (["claude_code", "codex"] as const) : ([choice] as const);
  const notes: string[] = [];
  for (const cli of candidates) {
    const a = await cliAccount(cli, {
      configuredPath: file["llm.provider"] === cli ? cfg["llm.cli_path"] : "",
      billing: cfg["llm.billing"],
      env: process.env,
    });
    const billable = a.billing === "subscription" || cfg["llm.billing"] === "api_key";
    if (!a.bin || !a.signedIn || !billable) {
      // The billing note is about a signed-in account billed another way; a CLI missing or signed out says so alone.
      const billedElsewhere = a.bin && a.signedIn && !billable;
      notes.push(
        billedElsewhere
          ? `${describeAccount(a)} (llm.billing = subscription: sqrl will not bill that)`
          : describeAccount(a),
      );
      continue;
    }
    const model = await modelFor(cli, a.bin, cfg["llm.model"], cfg["llm.base_url"]);
    const who = [a.plan, a.email].filter(Boolean).join(", ") || "signed-in";
    const cost =
      a.billing === "subscription"
        ? "from your plan's usage, no API charge"
        : a.billing === "api_key"
          ? "billed per token to your API key"
          : "billed to your cloud account";
    const line = `LLM: redacted episodes of your sessions go to ${CLI_LABEL[cli]} (${model ?? "its fast model"}) on your ${who} account, about ${Math.round(TOKENS_PER_SESSION_ESTIMATE / 1000)}k tokens per session ${cost}, at most llm.daily_token_cap (${cfg["llm.daily_token_cap"]}) a day; --llm none keeps sqrl offline`;
    if (!(await confirm(`${line}. Turn it on?`, { yes: opts.yes }))) {
      return { line: `${line}. Not turned on (pass --yes to accept).`, provider: cfg["llm.provider"] };
    }
    setConfigValue("llm.provider", cli);
    setConfigValue("llm.cli_path", a.bin);
    if (model && model !== cfg["llm.model"]) setConfigValue("llm.model", model);
    return { line: `${line}. Turned on: llm.provider = ${cli}.`, provider: cli };
  }
  const why = notes.join("; ");
  return {
    line:
      choice === "auto"
        ? `LLM: none turned on (${why}); sqrl distils offline. \`sqrl init --llm claude_code\` or \`--llm codex\` after you sign in`
        : `LLM: ${choice} not turned on: ${why}`,
    provider: cfg["llm.provider"],
  };
}

/** The model a provider will use: Claude Code keeps a Claude model; Codex picks its fast one when given none. */
async function modelFor(
  cli: "claude_code" | "codex",
  bin: string,
  configured: string,
  baseURL: string,
): Promise<string | null> {
  if (cli === "claude_code") return /^claude/i.test(configured) ? configured : "claude-haiku-4-5";
  const { isCodexModel, pickCodexModel, readCodexCatalog } = await import("../engine/llm/codex.ts");
  if (isCodexModel(configured)) return configured;
  const { cliEnv } = await import("../engine/llm/cli-run.ts");
  return pickCodexModel(
    await readCodexCatalog(bin, cliEnv("codex", "subscription", process.env), baseURL || undefined),
  );
}
