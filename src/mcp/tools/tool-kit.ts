import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { Budget } from "../../shared/api.ts";
import { describeError } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import { configBudgets } from "../budgets.ts";
import type { McpDeps, ToolBudgets } from "../deps.ts";
import { resolveProjectRoot } from "../project-root.ts";

/** Every sqrl tool reads memory and nothing else: read-only, closed world. */
export const READ_ONLY_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** Input fields shared by the tools (reference §6 plus `include_seen`). */
export const projectRootField = z
  .string()
  .min(1)
  .optional()
  .describe("Absolute path of the repository (default: the folder the host started sqrl in; a subfolder maps to its project).");
export const budgetField = (dflt: string) =>
  Budget.optional().describe(`Hard ceiling on the tokens of the returned markdown (default: config ${dflt}). Small models: 150-256; large: 400-800.`);
export const includeSeenField = z
  .boolean()
  .optional()
  .describe("Repeat memories already delivered earlier in this session (default false: they are left out and counted).");
export const userIdField = z.string().min(1).optional().describe("Whose style to use (default: the configured user).");

/** What a tool's API call gets after the shared steps ran. */
export interface CallContext {
  projectId: string;
  budget: number;
  exclude: string[];
}

/** Fields sqrl's answers carry for per-session de-dup (timeline/recall have none). */
interface AnswerShape {
  markdown: string;
  token_estimate: number;
  memory_ids?: string[];
  omitted_seen?: number;
}

export interface ToolRun<T extends AnswerShape> {
  tool: string;
  args: { project_root?: string; context_budget_tokens?: number; include_seen?: boolean } & Record<string, unknown>;
  budgetKey: keyof ToolBudgets;
  /** The output schema: `structuredContent` is always built through its `parse`. */
  output: z.ZodType<T>;
  call: (ctx: CallContext) => Promise<unknown>;
}

/**
 * The shape every sqrl tool shares: resolve the project, default the budget, exclude memories this
 * session already delivered, make the one daemon call, pass the answer through the output schema,
 * remember what it delivered, trace the call. Failures become `isError` results whose text says
 * what to do; they never throw into the SDK.
 */
export async function runTool<T extends AnswerShape>(deps: McpDeps, run: ToolRun<T>): Promise<CallToolResult> {
  const started = performance.now();
  let projectId: string | undefined;
  try {
    projectId = resolveProjectRoot(run.args.project_root, deps.cwd, deps.projects?.());
    const budgets = await (deps.budgets ?? configBudgets)();
    const budget = run.args.context_budget_tokens ?? budgets[run.budgetKey];
    const exclude = deps.dedup.excludeFor(run.args.include_seen);
    const answer = run.output.parse(await run.call({ projectId, budget, exclude }));
    const ids = answer.memory_ids ?? [];
    deps.dedup.record(ids);
    trace(deps, projectId, run, started, ids, answer.token_estimate, null);
    // The engine's footer already says how many memories were omitted as already shown; nothing is
    // appended here, since the markdown was packed to the budget.
    return { content: [{ type: "text", text: answer.markdown }], structuredContent: answer as unknown as Record<string, unknown> };
  } catch (err) {
    const message = describeError(err);
    if (projectId) trace(deps, projectId, run, started, [], null, message);
    return { isError: true, content: [{ type: "text", text: `${run.tool} failed: ${message}` }] };
  }
}

function trace<T extends AnswerShape>(
  deps: McpDeps,
  projectId: string,
  run: ToolRun<T>,
  started: number,
  memoryIds: string[],
  tokenEstimate: number | null,
  error: string | null,
): void {
  if (!deps.tracer) return;
  const latencyMs = performance.now() - started;
  deps.tracer.record(projectId, { tool: run.tool, args: run.args, memoryIds, tokenEstimate, latencyMs, error }).catch((err: unknown) => {
    log.warn(`trace failed: ${(err as Error).message}`);
  });
}
