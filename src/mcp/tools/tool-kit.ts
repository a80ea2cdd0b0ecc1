/** What every sqrl tool shares: its read-only annotations, its definition helper and the compact answer it hands the host. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { resolve } from "node:path";
import { z } from "zod";
import { Budget } from "../../shared/api.ts";
import { describeError, SqrlError, UsageError } from "../../shared/errors.ts";
import { packLimit } from "../../shared/tokens.ts";
import { log } from "../../shared/log.ts";
import { linkedWorkTree, listProjects } from "../../shared/projects.ts";
import { configBudgets } from "../budgets.ts";
import type { McpDeps, ToolBudgets } from "../deps.ts";
import { resolveProjectRoot } from "../project-root.ts";
import type { TokenCounter } from "../../shared/tokens.ts";
import { forwardingOf, type HostForwarding } from "../hosts/forwarding.ts";
import {
  configCounter,
  forwardedText,
  hasFooter,
  projectName,
  scrubPaths,
  settleFooter,
  ToolAnswer,
} from "./tool-answer.ts";

/** Every sqrl tool reads memory and nothing else: read-only, closed world. */
export const READ_ONLY_ANNOTATIONS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
} as const;

/**
 * Claude Code defers MCP tools behind its keyword ToolSearch, which scores each query word against
 * the tool's name parts, then this hint (`_meta["anthropic/searchHint"]`, first 80 characters), then
 * the description. The hint holds the words a model types when it looks for the tool.
 */
export const SEARCH_HINT_MAX = 80;
export function searchHint(hint: string): Record<string, string> {
  if (hint.length > SEARCH_HINT_MAX) throw new Error(`search hint over ${SEARCH_HINT_MAX} characters: ${hint}`);
  return { "anthropic/searchHint": hint };
}

/** Input fields shared by the tools (reference §6 plus `include_seen`). */
export const projectRootField = z
  .string()
  .min(1)
  .optional()
  .describe(
    "Absolute path of the repository (default: the folder the host started sqrl in; a subfolder maps to its project).",
  );
export const budgetField = (dflt: string) =>
  Budget.optional().describe(
    `Hard ceiling on the tokens of the whole result (default: config ${dflt}). Small models: 150-256; large: 400-800.`,
  );
export const includeSeenField = z
  .boolean()
  .optional()
  .describe(
    "Repeat memories already delivered earlier in this session (default false: they are left out and counted).",
  );
export const userIdField = z.string().min(1).optional().describe("Whose style to use (default: the configured user).");

/** What a tool's API call gets after the shared steps ran. */
export interface CallContext {
  projectId: string;
  budget: number;
  exclude: string[];
  /** The linked git worktree the call comes from, when it is one (memories are checked against it). */
  workTree: string | undefined;
}

/** Fields every engine answer carries (timeline/recall have no de-dup fields). */
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
  /** The engine's answer schema: every answer is checked through its `parse`. */
  output: z.ZodType<T>;
  /** Did the engine find anything relevant? */
  relevant: (answer: T) => boolean;
  call: (ctx: CallContext) => Promise<unknown>;
}

/** Tries at a smaller engine budget before the answer's lines are cut instead. */
const FIT_ATTEMPTS = 5;

/**
 * The shape every sqrl tool shares: resolve the project, default the budget, exclude memories this
 * session already delivered, call the daemon, and hand back a compact `ToolAnswer` such that what the
 * host forwards fits the budget: the JSON, or for a host that forwards the JSON and the markdown both
 * (src/mcp/hosts/forwarding.ts) the two together, so the engine gets about half. The engine is asked
 * for less until it fits; the footer then reports what is forwarded. Remember what it delivered, trace
 * the call. Failures become `isError` results whose text says what to do; they never throw into the
 * SDK. Paths of this machine never leave.
 */
export async function runTool<T extends AnswerShape>(deps: McpDeps, run: ToolRun<T>): Promise<CallToolResult> {
  const started = performance.now();
  let projectId: string | undefined;
  try {
    projectId = resolveProjectRoot(run.args.project_root, deps.cwd, deps.projects?.());
    const budgets = await (deps.budgets ?? configBudgets)();
    const budget = run.args.context_budget_tokens ?? budgets[run.budgetKey];
    const exclude = deps.dedup.excludeFor(run.args.include_seen);
    const workTree =
      linkedWorkTree(resolve(deps.cwd, run.args.project_root ?? "."), deps.projects?.() ?? listProjects()) ?? undefined;
    const counter = await configCounter();
    const project = projectName(projectId);
    const forwarding = forwardingOf(deps.clientInfo?.());
    // Each forwarded part (the JSON, the markdown) carries the markdown once.
    const copies = forwarding.parts.length;
    const target = fitTarget(budget, counter);
    const wrapper = counter.count(forwardedText({ project, has_relevant_memory: true, markdown: "" }, forwarding));
    const askFor = (b: number) => Math.max(1, Math.floor((fitTarget(b, counter) - wrapper) / copies));
    let ask = askFor(budget);
    let fitted: { answer: ToolAnswer; tokens: number; ids: string[] } | undefined;
    for (let attempt = 0; attempt < FIT_ATTEMPTS; attempt++) {
      let raw: T;
      try {
        raw = run.output.parse(await run.call({ projectId, budget: ask, exclude, workTree }));
      } catch (err) {
        if (!(err instanceof SqrlError && err.code === "budget_too_small")) throw err;
        if (fitted) break; // a smaller ask was refused: the last answer is cut to size below
        throw tooSmall(budget, err, askFor);
      }
      const compact: ToolAnswer = {
        project,
        has_relevant_memory: run.relevant(raw),
        markdown: scrubPaths(raw.markdown, projectId),
      };
      const settled = settleFooter(compact, budget, counter, forwarding);
      fitted = { ...settled, ids: raw.memory_ids ?? [] };
      if (settled.tokens <= target || ask <= 1) break;
      ask = Math.max(1, ask - Math.ceil((settled.tokens - target) / copies) - Math.ceil(ask * 0.05));
    }
    const { answer, tokens, ids } = cutToBudget(fitted!, target, counter, forwarding);
    const structured = ToolAnswer.parse(answer);
    deps.dedup.record(ids);
    trace(deps, projectId, run, started, ids, tokens, null);
    return { content: [{ type: "text", text: structured.markdown }], structuredContent: structured };
  } catch (err) {
    const message = scrubPaths(describeError(err), projectId ?? deps.cwd);
    if (projectId) trace(deps, projectId, run, started, [], null, message);
    return { isError: true, content: [{ type: "text", text: `${run.tool} failed: ${message}` }] };
  }
}

/**
 * The count the forwarded JSON is held to: the engine packer's own limit for the budget (the budget
 * less the reserve kept when the calibrated estimator counts, as it can undercount o200k a little).
 */
function fitTarget(budget: number, counter: TokenCounter): number {
  return packLimit(budget, counter);
}

/**
 * The engine refused the (smaller) budget sqrl asked it for: say, in one line, which budget of the
 * caller's would do (the smallest whose engine ask reaches what the engine needs).
 */
function tooSmall(budget: number, err: SqrlError, askFor: (b: number) => number): UsageError {
  const needed = Number(/needs (\d+) tokens/.exec(err.message)?.[1]);
  let want = Math.max(budget + 1, Number.isFinite(needed) ? needed : budget + 1);
  while (Number.isFinite(needed) && askFor(want) < needed) want++;
  return new UsageError(
    `context_budget_tokens ${budget} is too small for any answer here; the smallest needs ${Number.isFinite(needed) ? want : "more"} tokens.`,
    "budget_too_small",
  );
}

/**
 * Last resort when the engine cannot pack small enough (a budget near the JSON's own size): drop
 * whole lines above the footer, last first, until what the host forwards fits.
 */
function cutToBudget(
  fitted: { answer: ToolAnswer; tokens: number; ids: string[] },
  budget: number,
  counter: TokenCounter,
  forwarding: HostForwarding,
): { answer: ToolAnswer; tokens: number; ids: string[] } {
  if (fitted.tokens <= budget) return fitted;
  const lines = fitted.answer.markdown.split("\n");
  const footer = hasFooter(lines.at(-1) ?? "") ? lines.pop() : undefined;
  // Which memories the cut lines held is not known here: none is counted as delivered, so a later
  // call may show them again rather than never.
  let current = { ...fitted, ids: [] as string[] };
  while (current.tokens > budget && (lines.length > 0 || footer !== undefined)) {
    if (lines.length > 0) lines.pop();
    const markdown =
      lines.length > 0 ? [...lines, ...(footer ? ["", footer] : [])].join("\n").replace(/\n{3,}/g, "\n\n") : "";
    current = { ...settleFooter({ ...current.answer, markdown }, budget, counter, forwarding), ids: [] };
    if (lines.length === 0) break;
  }
  return current;
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
  deps.tracer
    .record(projectId, { tool: run.tool, args: run.args, memoryIds, tokenEstimate, latencyMs, error })
    .catch((err: unknown) => {
      log.warn(`trace failed: ${(err as Error).message}`);
    });
}
