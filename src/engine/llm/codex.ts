/**
 * The `codex` provider: the user's own Codex CLI, headless (`codex exec`), on the account it is
 * signed in with. Each call is a bare one-turn run: `--ephemeral` (no session file), the user's
 * config.toml not loaded (so no MCP servers, sqrl's included, and no hooks), every tool feature off,
 * sqrl's system prompt as the model's instructions, the answer's JSON Schema through
 * `--output-schema`, read-only sandbox, in a private folder outside every project. API keys in
 * sqrl's environment are withheld unless `llm.billing = api_key`.
 *
 * Codex models whose catalog entry asks for code mode, multi-agent or patch tools get them whatever
 * the features say, so the run gets a catalog (`model_catalog_json`) holding that model's own entry
 * (from `codex debug models`) with those tool fields taken out.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { type CliAccount, cliAccount } from "./cli-account.ts";
import { assertUsable, type CliProviderOptions } from "./claude-code.ts";
import { cliEnv, failureKind, makeRunDir, removeRunDir, runCli } from "./cli-run.ts";
import { LlmCallError, type LlmProvider, type LlmRequest, type LlmResponse } from "./types.ts";

/** Features that put a tool (or a server that brings tools) in front of the model. */
const TOOL_FEATURES = [
  "shell_tool",
  "unified_exec",
  "code_mode_host",
  "apps",
  "plugins",
  "view_image",
  "image_generation",
  "goals",
  "sleep_tool",
  "multi_agent",
  "multi_agent_v2",
  "browser_use",
  "computer_use",
  "in_app_browser",
  "tool_suggest",
  "skill_search",
];

/** `-c` settings of every run: no web search, no question tool, no bundled skills, no extra context. */
const SETTINGS = [
  'web_search="disabled"',
  "tools.experimental_request_user_input={enabled=false}",
  "skills.bundled.enabled=false",
  "include_environment_context=false",
  "include_apps_instructions=false",
  "include_collaboration_mode_instructions=false",
  'model_reasoning_effort="low"',
];

const Catalog = z.object({ models: z.array(z.looseObject({ slug: z.string() })) });
type CatalogEntry = z.infer<typeof Catalog>["models"][number];

/** Catalog fields that add tools to every turn of the model. */
const TOOL_FIELDS = ["tool_mode", "apply_patch_tool_type", "multi_agent_version"];

/** The model's catalog entry with its tools taken out and sqrl's prompt as its instructions. */
export function toolFreeEntry(entry: CatalogEntry, instructions: string): CatalogEntry {
  const out: Record<string, unknown> = { ...entry };
  for (const f of TOOL_FIELDS) delete out[f];
  return {
    ...out,
    slug: entry.slug,
    experimental_supported_tools: [],
    supports_search_tool: false,
    base_instructions: instructions,
  };
}

const toml = (s: string) => JSON.stringify(s);

/** The model's own instructions in a distilling run; sqrl's system prompt opens the message. */
const RUN_INSTRUCTIONS =
  "You have no tools. Do exactly what the message asks and answer with the JSON object it describes, nothing else.";

/** The argv of one distilling run (the prompt goes on stdin). */
export function codexArgs(
  bin: string,
  o: { model: string; dir: string; baseURL?: string; catalog?: string; instructions: string; schema?: string },
): string[] {
  return [
    bin,
    "exec",
    "--ephemeral",
    "--ignore-user-config",
    "--ignore-rules",
    "--skip-git-repo-check",
    "--sandbox",
    "read-only",
    "--json",
    "--color",
    "never",
    "-C",
    o.dir,
    "-m",
    o.model,
    ...TOOL_FEATURES.flatMap((f) => ["--disable", f]),
    ...SETTINGS.flatMap((s) => ["-c", s]),
    "-c",
    `model_instructions_file=${toml(o.instructions)}`,
    ...(o.catalog ? ["-c", `model_catalog_json=${toml(o.catalog)}`] : []),
    ...(o.baseURL ? ["-c", `openai_base_url=${toml(o.baseURL)}`] : []),
    ...(o.schema ? ["--output-schema", o.schema] : []),
    "-",
  ];
}

const Event = z.looseObject({
  type: z.string(),
  message: z.string().optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
  item: z.looseObject({ type: z.string().optional(), text: z.string().optional() }).optional(),
  usage: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
});

/** What a `codex exec --json` run said: the last agent message, usage, the failure if any. */
export function readEvents(stdout: string): {
  text: string | null;
  input: number;
  output: number;
  failure: string | null;
} {
  let text: string | null = null;
  let input = 0;
  let output = 0;
  let failure: string | null = null;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    let e: z.infer<typeof Event>;
    try {
      const r = Event.safeParse(JSON.parse(line));
      if (!r.success) continue;
      e = r.data;
    } catch {
      continue;
    }
    if (e.type === "item.completed" && e.item?.type === "agent_message" && e.item.text !== undefined)
      text = e.item.text;
    if (e.type === "turn.completed") {
      input += e.usage?.input_tokens ?? 0;
      output += e.usage?.output_tokens ?? 0;
    }
    if (e.type === "turn.failed") failure = e.error?.message ?? "turn failed";
    if (e.type === "error" && e.message && !failure) failure = e.message;
  }
  if (text !== null && failure?.startsWith("Reconnecting")) failure = null;
  return { text, input, output, failure };
}

const ACCOUNT_TTL_MS = 10 * 60_000;

/** The CLI's own model catalog (`codex debug models`); empty when it cannot say. */
export async function readCodexCatalog(
  bin: string,
  env: Record<string, string>,
  baseURL?: string,
): Promise<CatalogEntry[]> {
  const dir = makeRunDir();
  try {
    const res = await runCli([bin, "debug", "models", ...(baseURL ? ["-c", `openai_base_url=${toml(baseURL)}`] : [])], {
      env,
      cwd: dir,
      timeoutMs: 30_000,
    });
    const parsed = Catalog.safeParse(JSON.parse(res.stdout));
    return parsed.success ? parsed.data.models : [];
  } catch {
    return [];
  } finally {
    removeRunDir(dir);
  }
}

/**
 * The model a distilling run uses when the user named none (or a Claude model): the catalog's
 * listed model that calls itself fast or affordable, the most prominent first; else the first listed.
 */
export function pickCodexModel(catalog: readonly CatalogEntry[]): string | null {
  const listed = catalog
    .filter((m) => m.visibility === undefined || m.visibility === "list")
    .sort((a, b) => Number(a.priority ?? 99) - Number(b.priority ?? 99));
  const cheap = listed.find((m) => /fast|affordable|mini|efficient|cheap/i.test(String(m.description ?? "")));
  return (cheap ?? listed[0])?.slug ?? null;
}

/** Is `model` one for Codex to run (not empty, not a Claude model left from the default)? */
export function isCodexModel(model: string): boolean {
  return model !== "" && !/^claude/i.test(model);
}

export class CodexProvider implements LlmProvider {
  readonly name = "codex" as const;
  private account: { at: number; value: CliAccount } | null = null;
  private catalog: CatalogEntry[] | null = null;
  private chosen: string | null;

  constructor(private readonly opts: CliProviderOptions) {
    this.chosen = isCodexModel(opts.model) ? opts.model : null;
  }

  /** The configured model; when none is (or a Claude one is), the catalog's fast model, once known. */
  get model(): string {
    return this.chosen ?? "codex-default";
  }

  private get env(): Record<string, string> {
    return cliEnv("codex", this.opts.billing, this.opts.env ?? process.env);
  }

  private async checkAccount(): Promise<void> {
    if (!this.account || Date.now() - this.account.at > ACCOUNT_TTL_MS)
      this.account = {
        at: Date.now(),
        value: await cliAccount("codex", { configuredPath: this.opts.bin, billing: this.opts.billing, env: this.env }),
      };
    assertUsable(this.account.value, this.opts.billing);
  }

  /** The CLI's model catalog, read once per provider. */
  private async models(): Promise<CatalogEntry[]> {
    this.catalog ??= await readCodexCatalog(this.opts.bin, this.env, this.opts.baseURL);
    return this.catalog;
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    try {
      await this.checkAccount();
    } catch (err) {
      this.account = null;
      throw err;
    }
    const catalog = await this.models();
    this.chosen ??= pickCodexModel(catalog);
    if (!this.chosen)
      throw new LlmCallError("Codex named no model to use; set llm.model (e.g. a model from `codex debug models`).");
    const model = this.chosen;
    const dir = makeRunDir();
    try {
      // Codex sends its instructions twice; sqrl's system prompt (~1k tokens) rides once, in the message.
      const instructions = join(dir, "instructions.md");
      writeFileSync(instructions, RUN_INSTRUCTIONS, { mode: 0o600 });
      const entry = catalog.find((m) => m.slug === model);
      let catalogFile: string | undefined;
      if (entry) {
        catalogFile = join(dir, "catalog.json");
        writeFileSync(catalogFile, JSON.stringify({ models: [toolFreeEntry(entry, RUN_INSTRUCTIONS)] }), {
          mode: 0o600,
        });
      }
      let schema: string | undefined;
      if (req.jsonSchema) {
        schema = join(dir, "schema.json");
        writeFileSync(schema, JSON.stringify(req.jsonSchema), { mode: 0o600 });
      }
      const args = codexArgs(this.opts.bin, {
        model,
        dir,
        instructions,
        ...(catalogFile ? { catalog: catalogFile } : {}),
        ...(schema ? { schema } : {}),
        ...(this.opts.baseURL ? { baseURL: this.opts.baseURL } : {}),
      });
      const res = await runCli(args, {
        env: this.env,
        cwd: dir,
        timeoutMs: this.opts.timeoutMs,
        stdin: `${req.system}\n\n${req.prompt}`,
      });
      if (res.spawnError)
        throw new LlmCallError(`Codex could not be started: ${res.spawnError}`, undefined, "unavailable");
      if (res.timedOut)
        throw new LlmCallError(`Codex did not answer within ${this.opts.timeoutMs} ms.`, undefined, "timeout");
      const out = readEvents(res.stdout);
      if (out.failure || out.text === null || res.code !== 0) {
        this.account = null;
        const said = (out.failure ?? res.stderr.trim().split("\n").at(-1) ?? "").slice(0, 300);
        throw new LlmCallError(`Codex call failed: ${said || `exit ${res.code}`}`, undefined, failureKind(said));
      }
      return { text: out.text, inputTokens: out.input, outputTokens: out.output };
    } finally {
      removeRunDir(dir);
    }
  }
}
