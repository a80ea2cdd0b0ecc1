/**
 * Every config key sqrl understands, with its schema, default and meaning.
 * config.toml holds only what the user set; everything else comes from here.
 * Keys are dotted: `llm.provider` lives in the `[llm]` table of config.toml.
 */
import { z } from "zod";

export interface ConfigKeyDef<T = unknown> {
  schema: z.ZodType<T>;
  default: T | (() => T);
  description: string;
}

const bool = z.boolean();
const positiveInt = z.number().int().positive();
const budget = z.number().int().min(1).max(100_000);

function key<T>(schema: z.ZodType<T>, dflt: T | (() => T), description: string): ConfigKeyDef<T> {
  return { schema, default: dflt, description };
}

export const CONFIG_KEYS = {
  user_id: key(z.string().min(1), "", "Who the memories belong to (default: git user.email, else $USER)."),

  "llm.provider": key(
    z.enum(["none", "anthropic", "openai_compatible", "claude_code", "codex"]),
    "none",
    "LLM used for extraction and summaries: an API (`anthropic`, `openai_compatible`), your signed-in agent CLI (`claude_code`, `codex`), or `none` (fully offline).",
  ),
  "llm.model": key(
    z.string().min(1),
    "claude-haiku-4-5",
    "Model name sent to the provider (`codex` with a Claude model name: the CLI's fast model).",
  ),
  "llm.base_url": key(
    z.string(),
    "",
    "Provider base URL (empty: the SDK's or the CLI's default; e.g. http://127.0.0.1:11434/v1 for Ollama).",
  ),
  "llm.billing": key(
    z.enum(["subscription", "api_key"]),
    "subscription",
    "What `claude_code` and `codex` may bill: `subscription` (the CLI's signed-in plan; API keys in sqrl's environment are withheld from it) or `api_key` (the CLI may use ANTHROPIC_API_KEY / OPENAI_API_KEY and bill per token).",
  ),
  "llm.cli_path": key(
    z.string(),
    "",
    "The `claude` or `codex` executable for `claude_code` / `codex` (empty: the first on PATH; `sqrl init` writes the one it found).",
  ),
  "llm.api_key_env": key(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name"),
    "ANTHROPIC_API_KEY",
    "Name of the environment variable holding the API key (keys are never stored in config).",
  ),
  "llm.context_window_tokens": key(positiveInt, 16_000, "Input tokens one extraction call may use."),
  "llm.daily_token_cap": key(
    z.number().int().min(0),
    200_000,
    "LLM tokens per day; past it the offline extractor takes over.",
  ),
  "llm.timeout_ms": key(
    positiveInt,
    30_000,
    "Timeout of one LLM call (`claude_code` and `codex`: at least 120000, as the CLI starts first).",
  ),
  "llm.precheck": key(
    bool,
    true,
    "Send an episode to the LLM only when it holds a user statement, a failure or a decision; the offline rules take the others.",
  ),
  "llm.wait_max_hours": key(
    z.number().min(0),
    24,
    "How long an episode waits for the LLM when it is away (down, signed out, rate-limited, timing out) before the offline rules take it; 0: at once.",
  ),
  "llm.wait_retry_seconds": key(
    positiveInt,
    60,
    "First wait before a waiting episode is tried again (doubles each time, at most an hour; a provider's own retry-after wins).",
  ),

  "embeddings.provider": key(z.enum(["none", "openai_compatible"]), "none", "Embeddings for hybrid search."),
  "embeddings.base_url": key(
    z.string(),
    "http://127.0.0.1:11434/v1",
    "OpenAI-compatible base URL serving /embeddings.",
  ),
  "embeddings.model": key(z.string().min(1), "nomic-embed-text", "Embedding model name."),
  "embeddings.api_key_env": key(z.string(), "", "Environment variable with the embeddings API key (empty: none)."),

  "budgets.task_context": key(budget, 400, "Default context_budget_tokens of get_task_context."),
  "budgets.view": key(budget, 256, "Default context_budget_tokens of the views."),
  "budgets.search": key(budget, 600, "Default context_budget_tokens of search, timeline and recall."),
  "budgets.session_start": key(budget, 300, "Total budget of the Claude Code SessionStart hook."),

  "tokens.counter": key(
    z.enum(["accurate", "o200k", "chars4"]),
    "accurate",
    "Token counter for budgets: `accurate` (estimator calibrated on o200k, fast), `o200k` (the real tokenizer, exact, ~0.5 s to load) or `chars4` (ceil(chars/4)).",
  ),

  "watch.claude": key(bool, true, "Capture Claude Code transcripts."),
  "watch.codex": key(bool, true, "Capture Codex CLI rollouts."),
  "watch.gemini": key(bool, true, "Capture Gemini CLI chats."),
  "watch.qwen": key(bool, true, "Capture Qwen Code chats."),
  "watch.copilot": key(bool, true, "Capture GitHub Copilot CLI sessions."),
  "watch.opencode": key(bool, true, "Capture OpenCode sessions (its SQLite store, read-only)."),
  "watch.git": key(bool, true, "Capture git commits of registered repos."),

  "daemon.batch_interval_seconds": key(positiveInt, 30, "How often unprocessed events are sent to the engine."),
  "daemon.batch_min_events": key(positiveInt, 20, "Send a batch early once this many events wait."),
  "daemon.batch_max_events": key(positiveInt, 200, "Largest batch sent to the engine."),

  "engine.episode_gap_minutes": key(positiveInt, 20, "A gap longer than this starts a new episode."),

  "log.level": key(
    z.enum(["error", "warn", "info", "debug", "trace"]),
    "info",
    "Log level of the daemon and engine (SQRL_LOG_LEVEL and --debug override it).",
  ),
  "memory.decay_days": key(
    positiveInt,
    90,
    "A memory neither served nor seen again for this many days since sqrl learned it loses a fifth of its importance (never deleted).",
  ),
} satisfies Record<string, ConfigKeyDef<any>>;

export type ConfigKey = keyof typeof CONFIG_KEYS;
export type ConfigValues = { [K in ConfigKey]: (typeof CONFIG_KEYS)[K] extends ConfigKeyDef<infer T> ? T : never };

export const CONFIG_KEY_NAMES = Object.keys(CONFIG_KEYS) as ConfigKey[];

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, name);
}
