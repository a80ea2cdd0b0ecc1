/**
 * The real hosts, headless: Claude Code (`claude -p`) and Codex (`codex exec`) from the pinned npm
 * packages in test/hosts/node_modules (installed by .ci/run: `npm install --prefix test/hosts --no-save`), with
 * their homes in temp folders, their model API pointed at the local stand-in (model-server.ts), dummy
 * keys and no network. Helpers read back, from the recorded requests, what each host put in front of
 * the model: the system prompt, each tool result, each ToolSearch answer. The sign-in helpers leave
 * a stand-in account the way each CLI's own login does, for sqrl's `claude_code` and `codex` providers.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import { type DaemonHome, makeHome, queryProject, startDaemon } from "../daemon/harness.ts";
import { runSqrl } from "../helpers/sqrl.ts";
import { type ModelServer, type RecordedRequest, type Step, startModelServer } from "./model-server.ts";

export const HOSTS_DIR = import.meta.dir;
export const CLAUDE_BIN = join(HOSTS_DIR, "node_modules", ".bin", "claude");
export const CODEX_BIN = join(HOSTS_DIR, "node_modules", ".bin", "codex");
export const HOST_BIN_DIR = join(HOSTS_DIR, "node_modules", ".bin");
export const QWEN_BIN = join(HOSTS_DIR, "node_modules", ".bin", "qwen");
export const HOSTS_INSTALLED = existsSync(CLAUDE_BIN) && existsSync(CODEX_BIN);
export const QWEN_INSTALLED = existsSync(QWEN_BIN);
export const OPENCODE_BIN = join(HOSTS_DIR, "node_modules", ".bin", "opencode");
export const OPENCODE_INSTALLED = existsSync(OPENCODE_BIN);
export const COPILOT_BIN = join(HOSTS_DIR, "node_modules", ".bin", "copilot");
export const COPILOT_INSTALLED = existsSync(COPILOT_BIN);
export const SKIP_REASON = "host CLIs not installed (npm install --prefix test/hosts --no-save; .ci/run does it)";

export interface HostRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a host CLI without blocking this process's event loop (the model stand-in lives in it). */
export async function runHost(
  cmd: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs?: number },
): Promise<HostRun> {
  const proc = Bun.spawn(cmd, { env: opts.env, cwd: opts.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Environment for Claude Code: the stand-in as its API, a dummy key, nothing non-essential. */
export function claudeEnv(base: Record<string, string>, model: ModelServer): Record<string, string> {
  return {
    ...base,
    PATH: `${HOST_BIN_DIR}:${base.PATH}`,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-stand-in",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}

/** Environment for Codex: the stand-in's key (its provider is given with -c on the command line). */
export function codexEnv(base: Record<string, string>): Record<string, string> {
  return { ...base, PATH: `${HOST_BIN_DIR}:${base.PATH}`, STAND_IN_KEY: "sk-stand-in" };
}

/** `codex exec` against the stand-in (Responses API, streaming). */
export function codexExecArgs(model: ModelServer, prompt: string): string[] {
  return [
    CODEX_BIN,
    "exec",
    "--skip-git-repo-check",
    "-c",
    `model_providers.standin={name="stand-in",base_url="${model.url}/v1",env_key="STAND_IN_KEY",wire_api="responses"}`,
    "-c",
    "model_provider=standin",
    "-m",
    "gpt-5",
    prompt,
  ];
}

/** `claude -p` with sqrl's tools allowed (headless runs cannot ask for permission). */
export function claudeArgs(prompt: string): string[] {
  return [CLAUDE_BIN, "-p", prompt, "--allowedTools", "mcp__sqrl"];
}

type Json = Record<string, unknown>;

export interface ForwardedResult {
  /** The tool as the model called it, e.g. mcp__sqrl__get_task_context. */
  tool: string;
  input: Json;
  /** The text the host put in front of the model, without the host's own framing. */
  text: string;
  isError: boolean;
  /** Claude Code's ToolSearch: the tools it loaded, in its order. */
  references: string[];
}

function blockText(content: unknown): { text: string; references: string[] } {
  if (typeof content === "string") return { text: content, references: [] };
  const blocks = Array.isArray(content) ? (content as Json[]) : [];
  return {
    text: blocks
      .filter((b) => b.type === "text")
      .map((b) => b.text as string)
      .join("\n"),
    references: blocks.filter((b) => b.type === "tool_reference").map((b) => b.tool_name as string),
  };
}

/** Every tool call and its result in the last main-agent request (the whole conversation). */
export function anthropicResults(requests: RecordedRequest[]): ForwardedResult[] {
  const last = requests
    .filter((r) => r.api === "anthropic" && Array.isArray(r.body.tools) && (r.body.tools as Json[]).length > 0)
    .at(-1);
  if (!last) return [];
  const calls = new Map<string, { tool: string; input: Json }>();
  const out: ForwardedResult[] = [];
  for (const m of last.body.messages as Json[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Json[]) {
      if (b.type === "tool_use") calls.set(b.id as string, { tool: b.name as string, input: b.input as Json });
      if (b.type === "tool_result") {
        const call = calls.get(b.tool_use_id as string);
        const { text, references } = blockText(b.content);
        out.push({ tool: call?.tool ?? "?", input: call?.input ?? {}, text, isError: b.is_error === true, references });
      }
    }
  }
  return out;
}

/** Codex frames an MCP result with a first item "Wall time: …\nOutput:"; the rest is the tool's. */
function codexOutput(output: unknown): { text: string; isError: boolean } {
  const items = Array.isArray(output) ? (output as Json[]) : [];
  const text =
    typeof output === "string"
      ? output
      : items
          .filter((i) => typeof i.text === "string")
          .map((i) => i.text as string)
          .join("\n");
  return { text: text.replace(/^Wall time: [\d.]+ seconds\nOutput:\n?/, ""), isError: false };
}

export function openaiResults(requests: RecordedRequest[]): ForwardedResult[] {
  const last = requests
    .filter((r) => r.api === "openai" && Array.isArray(r.body.tools) && (r.body.tools as Json[]).length > 0)
    .at(-1);
  if (!last) return [];
  const calls = new Map<string, { tool: string; input: Json }>();
  const out: ForwardedResult[] = [];
  for (const item of last.body.input as Json[]) {
    if (item.type === "function_call") {
      const tool = item.namespace ? `${item.namespace as string}__${item.name as string}` : (item.name as string);
      calls.set(item.call_id as string, { tool, input: JSON.parse((item.arguments as string) || "{}") as Json });
    }
    if (item.type === "function_call_output") {
      const call = calls.get(item.call_id as string);
      out.push({ tool: call?.tool ?? "?", input: call?.input ?? {}, ...codexOutput(item.output), references: [] });
    }
  }
  return out;
}

/**
 * The system text of the first main-agent Anthropic request: the `system` field and the
 * `role: "system"` messages (where Claude Code puts hook context).
 */
export function anthropicSystem(requests: RecordedRequest[]): string {
  const first = requests.find((r) => r.api === "anthropic" && Array.isArray(r.body.tools));
  const texts = (content: unknown): string[] =>
    typeof content === "string"
      ? [content]
      : Array.isArray(content)
        ? (content as Json[]).map((b) => String(b.text ?? ""))
        : [];
  const systemMessages = ((first?.body.messages as Json[] | undefined) ?? [])
    .filter((m) => m.role === "system")
    .flatMap((m) => texts(m.content));
  return [...texts(first?.body.system), ...systemMessages].join("\n");
}

/** The tools offered to the model in the first main-agent request (names; Codex: namespace children too). */
export function offeredTools(requests: RecordedRequest[], api: "anthropic" | "openai"): Json[] {
  const first = requests.find((r) => r.api === api && Array.isArray(r.body.tools));
  return (first?.body.tools as Json[] | undefined) ?? [];
}

// ---- signed-in stand-in accounts --------------------------------------------------------------

/** The OAuth access token of the stand-in Claude account (what `claude -p` must send, never an API key). */
export const CLAUDE_OAUTH_TOKEN = "sk-ant-oat01-stand-in-subscription";
export const STAND_IN_EMAIL = "dev@example.com";

/**
 * A Claude Code sign-in as `/login` leaves it on Linux: the OAuth credentials in
 * `$CLAUDE_CONFIG_DIR/.credentials.json` and the account in `$CLAUDE_CONFIG_DIR/.claude.json`.
 */
export function signInClaude(configDir: string, plan = "max"): void {
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, ".credentials.json"),
    JSON.stringify({
      claudeAiOauth: {
        accessToken: CLAUDE_OAUTH_TOKEN,
        refreshToken: "sk-ant-ort01-stand-in",
        expiresAt: Date.now() + 365 * 86_400_000,
        scopes: ["user:inference", "user:profile", "user:sessions:claude_code"],
        subscriptionType: plan,
      },
    }),
    { mode: 0o600 },
  );
  const configFile = join(configDir, ".claude.json");
  const config = existsSync(configFile)
    ? (JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>)
    : {};
  writeFileSync(
    configFile,
    JSON.stringify({
      ...config,
      hasCompletedOnboarding: true,
      oauthAccount: {
        accountUuid: "00000000-0000-4000-8000-000000000001",
        emailAddress: STAND_IN_EMAIL,
        organizationUuid: "00000000-0000-4000-8000-000000000002",
        organizationName: "Stand-in",
      },
    }),
  );
}

function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.c3RhbmQtaW4`;
}

/** A Codex ChatGPT sign-in as `codex login` leaves it: `$CODEX_HOME/auth.json` with the account's tokens. */
export function signInCodex(codexHome: string, plan = "plus"): string {
  mkdirSync(codexHome, { recursive: true });
  const exp = Math.floor(Date.now() / 1000) + 365 * 86_400;
  const auth = {
    "https://api.openai.com/auth": {
      chatgpt_plan_type: plan,
      chatgpt_account_id: "acct-stand-in",
      chatgpt_user_id: "user-stand-in",
    },
  };
  const access = jwt({ exp, ...auth });
  writeFileSync(
    join(codexHome, "auth.json"),
    JSON.stringify({
      auth_mode: "chatgpt",
      OPENAI_API_KEY: null,
      tokens: {
        id_token: jwt({ email: STAND_IN_EMAIL, exp, ...auth }),
        access_token: access,
        refresh_token: "rt-stand-in",
        account_id: "acct-stand-in",
      },
      last_refresh: new Date().toISOString(),
    }),
    { mode: 0o600 },
  );
  return access;
}

/** Every file under `dir` (relative paths), for "no new transcript appeared" checks. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(join(dir, p)).isFile()).sort();
}

// ---- Qwen Code and the scripted piece of work ------------------------------------------------------

/**
 * Environment for Qwen Code: its home in `QWEN_HOME` (of `base`), telemetry, usage statistics and
 * update checks off in its user settings (kept when sqrl registers itself there), git identity set.
 */
export function qwenEnv(base: Record<string, string>): Record<string, string> {
  const qwenHome = base.QWEN_HOME ?? join(base.HOME!, ".qwen");
  mkdirSync(qwenHome, { recursive: true });
  const settingsPath = join(qwenHome, "settings.json");
  const settings = existsSync(settingsPath) ? (JSON.parse(readFileSync(settingsPath, "utf8")) as Json) : {};
  writeFileSync(
    settingsPath,
    JSON.stringify({
      ...settings,
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    }),
  );
  return {
    ...base,
    ...GIT_IDENTITY,
    ...QUIET_NPM,
    PATH: `${HOST_BIN_DIR}:${base.PATH}`,
    QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
  };
}

/** `qwen` one-shot against the stand-in (OpenAI Responses API), every tool call allowed. */
export function qwenArgs(model: ModelServer, prompt: string): string[] {
  return [
    QWEN_BIN,
    "--auth-type",
    "openai-responses",
    "--openai-base-url",
    `${model.url}/v1`,
    "--openai-api-key",
    "sk-stand-in",
    "-m",
    "gpt-5",
    "--yolo",
    prompt,
  ];
}

/** Keeps the scripted `npm test` off the registry (npm's update check). */
export const QUIET_NPM = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };

export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Dev",
  GIT_AUTHOR_EMAIL: "dev@example.com",
  GIT_COMMITTER_NAME: "Dev",
  GIT_COMMITTER_EMAIL: "dev@example.com",
};

export const WORK_PROMPT = "The add test fails; fix it and commit.";
export const WORK_COMMIT = "Fix add: it subtracted";

/** A git repo whose one test fails: `add` subtracts. */
export function buggyRepo(repo: string): void {
  mkdirSync(join(repo, "src"), { recursive: true });
  writeFileSync(join(repo, "src", "add.js"), "exports.add = (a, b) => a - b;\n");
  writeFileSync(
    join(repo, "add.test.js"),
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('./src/add.js');\ntest('add', () => assert.strictEqual(add(2, 3), 5));\n",
  );
  writeFileSync(
    join(repo, "package.json"),
    JSON.stringify({ name: "calc", private: true, scripts: { test: "node --test" } }),
  );
  const env = { ...process.env, ...GIT_IDENTITY };
  for (const args of [
    ["init", "-q"],
    ["add", "-A"],
    ["commit", "-q", "-m", "Add add()"],
  ])
    Bun.spawnSync(["git", ...args], { cwd: repo, env });
}

/**
 * The model's side of the work in `buggyRepo`, in a host's tool names: read the file, run the
 * failing test, fix, run it green, commit, say so.
 */
export function workSteps(
  repo: string,
  tools: { read: string; shell: string; edit: string },
  shellInput: (command: string) => Record<string, unknown> = (command) => ({ command }),
): Step[] {
  const file = join(repo, "src", "add.js");
  return [
    { tool: tools.read, input: { file_path: file } },
    { tool: tools.shell, input: shellInput("npm test") },
    { tool: tools.edit, input: { file_path: file, old_string: "a - b", new_string: "a + b" } },
    { tool: tools.shell, input: shellInput("npm test") },
    { tool: tools.shell, input: shellInput(`git commit -qam '${WORK_COMMIT}'`) },
    { text: "Fixed: add adds again; the test passes and the fix is committed." },
  ];
}

// ---- OpenCode -----------------------------------------------------------------------------------

/**
 * Environment for OpenCode: its config (`$XDG_CONFIG_HOME/opencode/opencode.json`, entries sqrl
 * wrote kept) names the stand-in as a custom provider on the Anthropic Messages API with one model,
 * every permission allowed, no sharing and no autoupdate; its env turns off the models.dev fetch,
 * LSP downloads and default plugins, so it talks to nothing but the stand-in.
 */
export function opencodeEnv(base: Record<string, string>, model: ModelServer): Record<string, string> {
  const dir = join(base.XDG_CONFIG_HOME ?? join(base.HOME!, ".config"), "opencode");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "opencode.json");
  const config = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Json) : {};
  writeFileSync(
    path,
    JSON.stringify({
      ...config,
      autoupdate: false,
      share: "disabled",
      permission: "allow",
      model: "standin/claude-stand-in",
      provider: {
        standin: {
          npm: "@ai-sdk/anthropic",
          name: "stand-in",
          options: { baseURL: `${model.url}/v1`, apiKey: "sk-ant-stand-in" },
          models: { "claude-stand-in": { name: "stand-in", tool_call: true } },
        },
      },
    }),
  );
  return {
    ...base,
    ...GIT_IDENTITY,
    ...QUIET_NPM,
    PATH: `${HOST_BIN_DIR}:${base.PATH}`,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
  };
}

/** `opencode run` one-shot, permissions auto-approved. */
export function opencodeArgs(prompt: string): string[] {
  return [OPENCODE_BIN, "run", "--auto", prompt];
}

/** The scripted work in OpenCode's tool names and camelCase inputs. */
export function opencodeWorkSteps(repo: string): Step[] {
  return workSteps(repo, { read: "read", shell: "bash", edit: "edit" }, (command) => ({
    command,
    description: "Run it",
  })).map((s) =>
    "tool" in s && s.input.file_path !== undefined
      ? {
          tool: s.tool,
          input: Object.fromEntries(
            Object.entries(s.input).map(([k, v]) => [k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()), v]),
          ),
        }
      : s,
  );
}

// ---- GitHub Copilot CLI ------------------------------------------------------------------------------

/**
 * Environment for Copilot CLI in its offline BYOK mode (`COPILOT_OFFLINE`: no GitHub sign-in, no
 * telemetry, no auto-update, no GitHub MCP server) with the stand-in as an Anthropic provider.
 */
export function copilotEnv(base: Record<string, string>, model: ModelServer): Record<string, string> {
  return {
    ...base,
    ...GIT_IDENTITY,
    ...QUIET_NPM,
    PATH: `${HOST_BIN_DIR}:${base.PATH}`,
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: model.url,
    COPILOT_PROVIDER_TYPE: "anthropic",
    COPILOT_PROVIDER_API_KEY: "sk-ant-stand-in",
    COPILOT_MODEL: "claude-sonnet-4.5",
  };
}

/** `copilot -p` one-shot, every tool allowed. */
export function copilotArgs(prompt: string): string[] {
  return [COPILOT_BIN, "-p", prompt, "--allow-all-tools", "--disable-client-telemetry", "--no-auto-update"];
}

/** The scripted work in Copilot CLI's tool names (`view`, `bash`, `edit` with path/old_str/new_str). */
export function copilotWorkSteps(repo: string): Step[] {
  return workSteps(repo, { read: "view", shell: "bash", edit: "edit" }, (command) => ({
    command,
    description: "Run it",
  })).map((s) => {
    if (!("tool" in s) || s.input.file_path === undefined) return s;
    const { file_path, old_string, new_string } = s.input as Record<string, string>;
    return {
      tool: s.tool,
      input:
        old_string === undefined ? { path: file_path } : { path: file_path, old_str: old_string, new_str: new_string },
    };
  });
}

// ---- What a host sends sqrl's MCP server ----------------------------------------------------------

/**
 * Put a copy of everything the host writes to sqrl's MCP server into `record` (one JSON-RPC message
 * a line): the `mcpServers.sqrl` entry of the host's config file at `configPath` runs the same
 * command behind `tee`. Returns the function that puts the entry back as it was.
 */
export function recordServerInput(configPath: string, record: string): () => void {
  const before = readFileSync(configPath, "utf8");
  const config = JSON.parse(before) as { mcpServers: Record<string, { command: string; args?: string[] }> };
  const entry = config.mcpServers.sqrl!;
  config.mcpServers.sqrl = {
    ...entry,
    command: "/bin/sh",
    args: ["-c", 'tee -a "$0" | exec "$@"', record, entry.command, ...(entry.args ?? [])],
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return () => writeFileSync(configPath, before);
}

/** The `clientInfo` of the first `initialize` request in a record made by `recordServerInput`. */
export function recordedClientInfo(record: string): Json {
  for (const line of readFileSync(record, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line) as Json;
    if (msg.method === "initialize") return (msg.params as Json).clientInfo as Json;
  }
  throw new Error("the host sent no initialize request");
}

/** What a host suite runs against: sqrl's home, the registered repo, the model stand-in and the host's environment. */
export interface HostSetup {
  home: DaemonHome;
  repo: string;
  model: ModelServer;
  env: Record<string, string>;
}

/**
 * The setup every host suite shares: a sqrl home whose config (`watch`) leaves only this host's capture
 * on, the buggy git repo (`buggyRepo`), the model stand-in, the host's environment, the repo registered
 * the way a user does it (`sqrl init --yes --hosts=<host>`, over the host's own config files), and the
 * daemon capturing. `seed` stores the MCP fixtures' memories before the daemon starts.
 */
export function setUpHost(o: {
  host: string;
  watch: string;
  env: (base: Record<string, string>, model: ModelServer) => Record<string, string>;
  seed?: (repo: string) => void;
}): HostSetup {
  const home = makeHome(o.watch);
  const repo = join(home.root, "repo");
  buggyRepo(repo);
  const model = startModelServer();
  const env = o.env(home.env, model);
  const init = runSqrl(["init", repo, "--yes", `--hosts=${o.host}`], { env });
  expect(init.code, init.stderr).toBe(0);
  o.seed?.(repo);
  startDaemon(home);
  return { home, repo, model, env };
}

export async function tearDownHost(s: HostSetup | undefined): Promise<void> {
  s?.model.stop();
  await s?.home.cleanup();
}

/** An event row as the host suites read it. */
export interface EventRow {
  event_type: string;
  content_json: string;
  source_tool: string;
}

/** The events one source stored in the repo's data.db. */
export function sourceRows(repo: string, sourceTool: string): EventRow[] {
  return queryProject<EventRow>(
    repo,
    "SELECT event_type, content_json, source_tool FROM events WHERE source_tool = ?",
    sourceTool,
  );
}

export const rowContent = (r: EventRow) => JSON.parse(r.content_json) as Record<string, unknown>;
