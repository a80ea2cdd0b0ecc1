/**
 * Which agent CLI is installed and whose account it would use: `claude auth status --json` and
 * `codex login status`, asked with the environment a distilling run gets (API keys withheld unless
 * `llm.billing = api_key`), so the answer is the account and billing sqrl would really use.
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { z } from "zod";
import { type CliBilling, cliEnv } from "./cli-run.ts";

export type CliName = "claude_code" | "codex";

export interface CliAccount {
  cli: CliName;
  /** Absolute path of the CLI, or null when it is not installed. */
  bin: string | null;
  signedIn: boolean;
  /** What a call is billed to: the signed-in plan, per-token API use, a cloud account; null when signed out. */
  billing: "subscription" | "api_key" | "cloud" | null;
  /** The plan or account kind as the CLI names it ("Claude Max", "ChatGPT"), when known. */
  plan: string | null;
  email: string | null;
}

const COMMAND: Record<CliName, string> = { claude_code: "claude", codex: "codex" };
export const CLI_LABEL: Record<CliName, string> = { claude_code: "Claude Code", codex: "Codex" };

/** The CLI's absolute path: `configured` when set (llm.cli_path; a bare name is looked up on PATH), else the first on PATH. */
export function findCli(cli: CliName, configured: string, env: Record<string, string | undefined>): string | null {
  if (configured && isAbsolute(configured)) return existsSync(configured) ? configured : null;
  return Bun.which(configured || COMMAND[cli], { PATH: env.PATH ?? "" }) ?? null;
}

const ClaudeStatus = z.object({
  loggedIn: z.boolean(),
  authMethod: z.string().optional(),
  apiProvider: z.string().optional(),
  apiKeySource: z.string().optional(),
  email: z.string().nullable().optional(),
  subscriptionType: z.string().nullable().optional(),
});

async function run(bin: string, args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  try {
    const proc = Bun.spawn([bin, ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    const code = await proc.exited;
    clearTimeout(timer);
    return { code, out: `${stdout}\n${stderr}` };
  } catch {
    return { code: -1, out: "" };
  }
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Claude Code's sign-in, as `claude auth status --json` reports it with the run's environment. */
async function claudeAccount(bin: string, env: Record<string, string>): Promise<CliAccount> {
  const res = await run(bin, ["auth", "status", "--json"], env);
  const json = /\{[\s\S]*\}/.exec(res.out)?.[0];
  let parsed: z.infer<typeof ClaudeStatus> | null = null;
  try {
    const r = ClaudeStatus.safeParse(JSON.parse(json ?? ""));
    parsed = r.success ? r.data : null;
  } catch {
    parsed = null;
  }
  const base: CliAccount = { cli: "claude_code", bin, signedIn: false, billing: null, plan: null, email: null };
  if (!parsed?.loggedIn) return base;
  const billing =
    parsed.apiProvider && parsed.apiProvider !== "firstParty"
      ? "cloud"
      : parsed.apiKeySource || /api.?key/i.test(parsed.authMethod ?? "")
        ? "api_key"
        : "subscription";
  return {
    ...base,
    signedIn: true,
    billing,
    plan: parsed.subscriptionType ? `Claude ${capitalize(parsed.subscriptionType)}` : null,
    email: parsed.email ?? null,
  };
}

/** Codex's sign-in, as `codex login status` reports it ("Logged in using ChatGPT" / "… an API key"). */
async function codexAccount(bin: string, env: Record<string, string>): Promise<CliAccount> {
  const res = await run(bin, ["login", "status"], env);
  const base: CliAccount = { cli: "codex", bin, signedIn: false, billing: null, plan: null, email: null };
  if (res.code !== 0 || /not logged in/i.test(res.out)) return base;
  if (/logged in using chatgpt/i.test(res.out))
    return { ...base, signedIn: true, billing: "subscription", plan: "ChatGPT" };
  if (/logged in using an? api key/i.test(res.out)) return { ...base, signedIn: true, billing: "api_key" };
  return /logged in/i.test(res.out) ? { ...base, signedIn: true, billing: "api_key" } : base;
}

/** Installed? Signed in? Billed to what? Asked the way a distilling run would be. */
export async function cliAccount(
  cli: CliName,
  opts: { configuredPath: string; billing: CliBilling; env: Record<string, string | undefined> },
): Promise<CliAccount> {
  const bin = findCli(cli, opts.configuredPath, opts.env);
  if (!bin) return { cli, bin: null, signedIn: false, billing: null, plan: null, email: null };
  const env = cliEnv(cli, opts.billing, opts.env);
  return cli === "claude_code" ? claudeAccount(bin, env) : codexAccount(bin, env);
}

/** One line: whose account a call uses and what it is billed to. */
export function describeAccount(a: CliAccount): string {
  const label = CLI_LABEL[a.cli];
  if (!a.bin) return `${label} is not installed`;
  if (!a.signedIn) return `${label} is not signed in (run \`${COMMAND[a.cli]}\` and sign in)`;
  const who = [a.plan, a.email].filter(Boolean).join(", ");
  const bill =
    a.billing === "subscription"
      ? "billed to the plan's usage, no API charge"
      : a.billing === "api_key"
        ? "billed per token to an API key"
        : "billed to a cloud provider account";
  return `${label} signed in${who ? ` (${who})` : ""}, ${bill}`;
}
