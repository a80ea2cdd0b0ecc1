/**
 * The configured chat model: `createProvider(config)` loads the Anthropic, OpenAI-compatible,
 * Claude Code or Codex adapter on demand, or answers null when sqrl runs offline.
 */
import type { ConfigValues } from "../../shared/config-keys.ts";
import type { LlmProvider } from "./types.ts";
import { log as rootLog } from "../../shared/log.ts";

export { LlmCallError, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

const log = rootLog.child({ service: "llm" });

export type LlmConfig = Pick<
  ConfigValues,
  "llm.provider" | "llm.model" | "llm.base_url" | "llm.api_key_env" | "llm.timeout_ms"
> &
  Partial<Pick<ConfigValues, "llm.billing" | "llm.cli_path">>;

/** A CLI run starts the agent first: its calls get at least this long, whatever llm.timeout_ms says. */
export const CLI_MIN_TIMEOUT_MS = 120_000;

let warnedMissingKey = false;

/**
 * The configured provider, or null when sqrl runs offline (`llm.provider = none`, or no API key in
 * the environment variable that `llm.api_key_env` names — said once in the log).
 */
export async function createProvider(
  cfg: LlmConfig,
  env: Record<string, string | undefined> = process.env,
): Promise<LlmProvider | null> {
  const kind = cfg["llm.provider"];
  if (kind === "none") return null;
  if (kind === "claude_code" || kind === "codex") {
    const { findCli } = await import("./cli-account.ts");
    const configured = cfg["llm.cli_path"] ?? "";
    const bin = findCli(kind, configured, env);
    const opts = {
      // Not installed (yet): the call fails as `unavailable` and the episode waits for it.
      bin: bin ?? (configured || (kind === "claude_code" ? "claude" : "codex")),
      model: cfg["llm.model"],
      timeoutMs: Math.max(cfg["llm.timeout_ms"], CLI_MIN_TIMEOUT_MS),
      billing: cfg["llm.billing"] ?? "subscription",
      env,
      ...(cfg["llm.base_url"] ? { baseURL: cfg["llm.base_url"] } : {}),
    };
    if (kind === "claude_code") {
      const { ClaudeCodeProvider } = await import("./claude-code.ts");
      return new ClaudeCodeProvider(opts);
    }
    const { CodexProvider } = await import("./codex.ts");
    return new CodexProvider(opts);
  }
  const key = env[cfg["llm.api_key_env"]];
  if (kind === "anthropic") {
    if (!key) {
      if (!warnedMissingKey)
        log.warn(
          `llm.provider is anthropic but $${cfg["llm.api_key_env"]} is empty: extraction stays offline. Export the key or set llm.api_key_env.`,
        );
      warnedMissingKey = true;
      return null;
    }
    const { AnthropicProvider } = await import("./anthropic.ts");
    return new AnthropicProvider({
      apiKey: key,
      model: cfg["llm.model"],
      baseURL: cfg["llm.base_url"] || undefined,
      timeoutMs: cfg["llm.timeout_ms"],
    });
  }
  const { OpenAiCompatibleProvider } = await import("./openai-compatible.ts");
  if (!cfg["llm.base_url"]) {
    if (!warnedMissingKey)
      log.warn(
        "llm.provider is openai_compatible but llm.base_url is empty: extraction stays offline. Set llm.base_url (e.g. http://127.0.0.1:11434/v1).",
      );
    warnedMissingKey = true;
    return null;
  }
  return new OpenAiCompatibleProvider({
    apiKey: key,
    model: cfg["llm.model"],
    baseURL: cfg["llm.base_url"],
    timeoutMs: cfg["llm.timeout_ms"],
  });
}
