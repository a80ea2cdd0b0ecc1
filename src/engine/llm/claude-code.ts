/**
 * The `claude_code` provider: the user's own Claude Code, headless (`claude -p`), on the account it
 * is signed in with. Each call is a bare one-turn run: sqrl's system prompt instead of Claude Code's,
 * no tools, no MCP servers, no settings files (so no hooks, no sqrl SessionStart hook, no
 * apiKeyHelper), no session file, in a private folder outside every project. API keys in sqrl's
 * environment are withheld unless `llm.billing = api_key`: `claude -p` would otherwise bill the API.
 * `--json-schema` is not used: Claude Code implements it as a tool the model must call.
 */
import { z } from "zod";
import { type CliAccount, cliAccount, describeAccount } from "./cli-account.ts";
import { type CliBilling, cliEnv, failureKind, makeRunDir, removeRunDir, runCli } from "./cli-run.ts";
import { LlmCallError, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

const Result = z.looseObject({
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  api_error_status: z.number().nullable().optional(),
  api_error: z.string().nullable().optional(),
  usage: z
    .looseObject({
      input_tokens: z.number().optional(),
      cache_creation_input_tokens: z.number().optional(),
      cache_read_input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
    })
    .optional(),
});

/** No MCP server at all: with --strict-mcp-config only this (empty) set is loaded. */
const NO_MCP = JSON.stringify({ mcpServers: {} });

/** The argv of one distilling run (the prompt goes on stdin). */
export function claudeArgs(bin: string, model: string, system: string): string[] {
  return [
    bin,
    "-p",
    "--output-format",
    "json",
    "--no-session-persistence",
    "--tools",
    "",
    "--strict-mcp-config",
    "--mcp-config",
    NO_MCP,
    "--setting-sources",
    "",
    "--disable-slash-commands",
    "--model",
    model,
    "--system-prompt",
    system,
  ];
}

/** The account check is one extra process: asked again only after this long or after a failed call. */
const ACCOUNT_TTL_MS = 10 * 60_000;

export interface CliProviderOptions {
  bin: string;
  model: string;
  timeoutMs: number;
  billing: CliBilling;
  /** The model API the CLI talks to ("" = its own default). */
  baseURL?: string;
  env?: Record<string, string | undefined>;
}

/** Throw the LlmCallError that says why `account` cannot take a call under `billing`, if it cannot. */
export function assertUsable(account: CliAccount, billing: CliBilling): void {
  if (!account.bin)
    throw new LlmCallError(`${describeAccount(account)}; install it or set llm.cli_path.`, undefined, "unavailable");
  if (!account.signedIn) throw new LlmCallError(`${describeAccount(account)}.`, undefined, "signed_out");
  if (billing === "subscription" && account.billing !== "subscription")
    throw new LlmCallError(
      `${describeAccount(account)}: sqrl will not bill that without your say. Sign in with your plan, or set llm.billing = api_key.`,
      undefined,
      "signed_out",
    );
}

export class ClaudeCodeProvider implements LlmProvider {
  readonly name = "claude_code" as const;
  readonly model: string;
  private account: { at: number; value: CliAccount } | null = null;

  constructor(private readonly opts: CliProviderOptions) {
    this.model = opts.model;
  }

  private get env(): Record<string, string> {
    return cliEnv("claude_code", this.opts.billing, this.opts.env ?? process.env, {
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      // sqrl retries on its own schedule; the CLI's own backoff would outlast the timeout.
      CLAUDE_CODE_MAX_RETRIES: "1",
      ...(this.opts.baseURL ? { ANTHROPIC_BASE_URL: this.opts.baseURL } : {}),
    });
  }

  private async checkAccount(): Promise<void> {
    if (!this.account || Date.now() - this.account.at > ACCOUNT_TTL_MS)
      this.account = {
        at: Date.now(),
        value: await cliAccount("claude_code", {
          configuredPath: this.opts.bin,
          billing: this.opts.billing,
          env: this.env,
        }),
      };
    assertUsable(this.account.value, this.opts.billing);
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    try {
      await this.checkAccount();
    } catch (err) {
      this.account = null;
      throw err;
    }
    const dir = makeRunDir();
    try {
      const res = await runCli(claudeArgs(this.opts.bin, this.model, req.system), {
        env: this.env,
        cwd: dir,
        timeoutMs: this.opts.timeoutMs,
        stdin: req.prompt,
      });
      if (res.spawnError)
        throw new LlmCallError(`Claude Code could not be started: ${res.spawnError}`, undefined, "unavailable");
      if (res.timedOut)
        throw new LlmCallError(`Claude Code did not answer within ${this.opts.timeoutMs} ms.`, undefined, "timeout");
      const line = res.stdout
        .trim()
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("{"));
      let parsed: z.infer<typeof Result> | null = null;
      try {
        const r = Result.safeParse(JSON.parse(line ?? ""));
        parsed = r.success ? r.data : null;
      } catch {
        parsed = null;
      }
      if (!parsed || parsed.is_error || res.code !== 0) {
        this.account = null;
        const said = (parsed?.result ?? res.stderr.trim()).slice(0, 300);
        const status = parsed?.api_error_status ?? null;
        const kind =
          status === 429 || parsed?.api_error === "usage_limit_reached"
            ? "rate_limited"
            : status === 401 || status === 403
              ? "signed_out"
              : status !== null && status >= 500
                ? "unavailable"
                : failureKind(said);
        throw new LlmCallError(
          `Claude Code call failed${status ? ` (HTTP ${status})` : ""}: ${said || `exit ${res.code}`}`,
          undefined,
          kind,
        );
      }
      const u = parsed.usage ?? {};
      return {
        text: parsed.result ?? "",
        inputTokens: (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
        outputTokens: u.output_tokens ?? 0,
      };
    } finally {
      removeRunDir(dir);
    }
  }
}
