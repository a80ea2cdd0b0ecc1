/**
 * The parts of the `claude_code` and `codex` providers that need no CLI: which variables are withheld
 * under each billing, how a CLI's words map onto LlmCallError kinds, how a `codex exec --json` stream
 * is read, which model Codex gets when none is named, the tool-free catalog entry, the argv that
 * keeps a run bare, and createProvider's choices. The CLIs themselves run in test/hosts/llm-providers.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { claudeArgs } from "../../../src/engine/llm/claude-code.ts";
import { BILLING_VARIABLES, cliEnv, failureKind, runCli } from "../../../src/engine/llm/cli-run.ts";
import { codexArgs, isCodexModel, pickCodexModel, readEvents, toolFreeEntry } from "../../../src/engine/llm/codex.ts";
import { CLI_MIN_TIMEOUT_MS, createProvider } from "../../../src/engine/llm/provider.ts";
import { effectiveModel } from "../../../src/engine/llm/usage-report.ts";

const ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/u",
  ANTHROPIC_API_KEY: "sk-ant-api03-x",
  ANTHROPIC_AUTH_TOKEN: "t",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
  CLAUDE_CODE_USE_BEDROCK: "1",
  OPENAI_API_KEY: "sk-proj-x",
  CODEX_API_KEY: "c",
  CLAUDECODE: "1",
};

describe("cliEnv: no surprise bills", () => {
  test("subscription withholds every key and cloud switch of that CLI, keeps the rest", () => {
    const claude = cliEnv("claude_code", "subscription", ENV);
    for (const k of BILLING_VARIABLES.claude_code) expect(claude[k]).toBeUndefined();
    expect(claude.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:1");
    expect(claude.HOME).toBe("/home/u");
    expect(claude.CLAUDECODE).toBeUndefined(); // a daemon started inside a session: the run is not nested
    const codex = cliEnv("codex", "subscription", ENV);
    expect(codex.OPENAI_API_KEY).toBeUndefined();
    expect(codex.CODEX_API_KEY).toBeUndefined();
  });

  test("api_key passes the environment as it is, extras on top", () => {
    const env = cliEnv("claude_code", "api_key", ENV, { DISABLE_AUTOUPDATER: "1" });
    expect(env.ANTHROPIC_API_KEY).toBe("sk-ant-api03-x");
    expect(env.DISABLE_AUTOUPDATER).toBe("1");
  });
});

describe("failureKind: what the CLI said → whether to wait", () => {
  test.each([
    ["You've hit your 5-hour limit · resets 6:33pm (UTC)", "rate_limited"],
    ["You’ve hit your usage limit. Upgrade to Pro or try again later.", "rate_limited"],
    ["API Error: 429 rate_limit_error", "rate_limited"],
    ["Not logged in · Please run /login", "signed_out"],
    ["Failed to authenticate. API Error: 401 OAuth token has expired.", "signed_out"],
    ["error sending request for url (https://auth.openai.com/oauth/token)", "signed_out"],
    ["Reconnecting... waiting for network (Connection failed: error sending request)", "unavailable"],
    ["API Error: 529 overloaded_error", "unavailable"],
    ["something else went wrong", "failed"],
  ] as const)("%s → %s", (text, kind) => {
    expect(failureKind(text)).toBe(kind);
  });
});

describe("codex exec --json", () => {
  test("the last agent message and the turn's usage; reconnect notices are not failures", () => {
    const out = readEvents(
      [
        '{"type":"thread.started","thread_id":"t"}',
        '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}',
        '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"{\\"summary\\":\\"s\\"}"}}',
        '{"type":"turn.completed","usage":{"input_tokens":1234,"cached_input_tokens":0,"output_tokens":56}}',
      ].join("\n"),
    );
    expect(out).toEqual({ text: '{"summary":"s"}', input: 1234, output: 56, failure: null });
  });

  test("a failed turn says why", () => {
    const out = readEvents(
      '{"type":"turn.started"}\n{"type":"turn.failed","error":{"message":"You’ve hit your usage limit."}}',
    );
    expect(out.text).toBeNull();
    expect(out.failure).toBe("You’ve hit your usage limit.");
  });

  const catalog = [
    { slug: "big", visibility: "list", priority: 1, description: "Frontier intelligence." },
    { slug: "small", visibility: "list", priority: 4, description: "Fast and affordable model for easier tasks." },
    { slug: "hidden", visibility: "hide", priority: 0, description: "fast" },
  ];

  test("no model named (or a Claude one): the listed model that calls itself fast or affordable", () => {
    expect(pickCodexModel(catalog)).toBe("small");
    expect(pickCodexModel(catalog.slice(0, 1))).toBe("big");
    expect(pickCodexModel([])).toBeNull();
    expect(isCodexModel("claude-haiku-4-5")).toBe(false);
    expect(isCodexModel("gpt-6-luna")).toBe(true);
  });

  test("the catalog entry keeps the model and loses its tools", () => {
    const entry = toolFreeEntry(
      {
        slug: "m",
        tool_mode: "code_mode_only",
        apply_patch_tool_type: "freeform",
        multi_agent_version: "v2",
        experimental_supported_tools: ["clock"],
        context_window: 272000,
      },
      "be brief",
    );
    expect(entry).toMatchObject({ slug: "m", context_window: 272000, experimental_supported_tools: [] });
    expect("tool_mode" in entry || "apply_patch_tool_type" in entry || "multi_agent_version" in entry).toBe(false);
  });

  test("the argv keeps the run bare: ephemeral, no user config, read-only, no tool features, prompt on stdin", () => {
    const argv = codexArgs("/bin/codex", { model: "m", dir: "/d", instructions: "/d/i.md", schema: "/d/s.json" });
    for (const flag of ["--ephemeral", "--ignore-user-config", "--ignore-rules", "--json"])
      expect(argv).toContain(flag);
    expect(argv.slice(argv.indexOf("--sandbox"), argv.indexOf("--sandbox") + 2)).toEqual(["--sandbox", "read-only"]);
    for (const f of ["shell_tool", "unified_exec", "apps", "multi_agent"])
      expect(argv.join(" ")).toContain(`--disable ${f}`);
    expect(argv).toContain('web_search="disabled"');
    expect(argv.at(-1)).toBe("-");
  });
});

describe("claude -p argv", () => {
  test("no tools, no MCP server, no settings (so no hooks), no session file, sqrl's prompt; no --json-schema", () => {
    const argv = claudeArgs("/bin/claude", "claude-haiku-4-5", "SYSTEM");
    const after = (flag: string) => argv[argv.indexOf(flag) + 1];
    expect(after("--tools")).toBe("");
    expect(after("--setting-sources")).toBe("");
    expect(argv).toContain("--strict-mcp-config");
    expect(JSON.parse(after("--mcp-config")!)).toEqual({ mcpServers: {} });
    expect(argv).toContain("--no-session-persistence");
    expect(after("--system-prompt")).toBe("SYSTEM");
    expect(argv).not.toContain("--json-schema");
  });
});

describe("createProvider for the CLIs", () => {
  const base = {
    "llm.model": "claude-haiku-4-5",
    "llm.base_url": "",
    "llm.api_key_env": "ANTHROPIC_API_KEY",
    "llm.timeout_ms": 30_000,
  };

  test("claude_code and codex need no API key; codex with a Claude model name picks its own", async () => {
    const claude = await createProvider({ ...base, "llm.provider": "claude_code" }, { PATH: "/nonexistent" });
    expect(claude?.name).toBe("claude_code");
    expect(claude?.model).toBe("claude-haiku-4-5");
    const codex = await createProvider({ ...base, "llm.provider": "codex" }, { PATH: "/nonexistent" });
    expect(codex?.name).toBe("codex");
    expect(effectiveModel({ "llm.provider": "codex", "llm.model": "claude-haiku-4-5" })).toBe("the CLI's fast model");
    expect(CLI_MIN_TIMEOUT_MS).toBeGreaterThanOrEqual(120_000);
  });

  test("a CLI missing from PATH: the call fails as retryable `unavailable`", async () => {
    const p = await createProvider({ ...base, "llm.provider": "claude_code" }, { PATH: "/nonexistent" });
    const err = await p!.complete({ system: "s", prompt: "p", maxTokens: 10 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "unavailable", retryable: true });
  });
});

test("runCli: a missing executable comes back as spawnError, never a throw", async () => {
  const res = await runCli(["/nonexistent/claude", "-p"], { env: {}, cwd: "/", timeoutMs: 1000 });
  expect(res.spawnError).toBeDefined();
});
