/**
 * The SessionStart context: the user's style and the project brief under one budget, with no line said twice.
 */
import { z } from "zod";
import { ProjectBriefView, UserStyleView } from "../shared/api.ts";
import { resolve } from "node:path";
import { linkedWorkTree, listProjects } from "../shared/projects.ts";
import type { DaemonBridge } from "./daemon-bridge.ts";
import { resolveProjectRoot } from "./project-root.ts";

/** What Claude Code sends a SessionStart hook on stdin (only the fields sqrl reads). */
export const SessionStartInput = z
  .object({
    session_id: z.string().optional(),
    transcript_path: z.string().optional(),
    cwd: z.string().optional(),
    hook_event_name: z.string().optional(),
    source: z.string().optional(),
  })
  .loose();
export type SessionStartInput = z.infer<typeof SessionStartInput>;

/** Claude Code's cap on a hook's additionalContext. */
export const HOST_CONTEXT_CAP = 10_000;
/** sqrl stays well under it. */
const CONTEXT_CHAR_LIMIT = 9_500;
/** Share of the total budget the style block may take; the brief gets the rest (style wins when tight). */
const STYLE_SHARE = 0.6;
/** Below this many tokens a block is not worth asking for. */
const MIN_BLOCK_TOKENS = 16;

const HEADER = "sqrl memory for this repo (more on demand: get_task_context, search_project_memory):";

export interface SessionStartDeps {
  bridge: DaemonBridge;
  totalBudget: number;
  projects?: () => string[];
  fallbackCwd?: string;
}

export interface SessionStartContext {
  additionalContext: string;
  project_id: string | null;
  budget: number;
  style_budget: number;
  brief_budget: number;
  /** Upper bound of the tokens of additionalContext (views' own counts + a conservative header count). */
  token_estimate: number;
  memory_ids: string[];
  dropped_brief_lines: number;
  error: string | null;
}

/** Conservative count for sqrl's own glue text (real BPE averages ~4 chars a token on prose). */
function glueTokens(text: string): number {
  return Math.ceil(text.length / 3) + 1;
}

/** Lower-case letters and digits only, single-spaced: how brief lines are compared to style items. */
export function normalizeLine(line: string): string {
  return line
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

const FOOTER = /^\s*[_*]*budget: ~/i;

/** Markdown lines without the per-view budget footer (the hook reports its own total). */
function bodyLines(markdown: string): string[] {
  return markdown.split("\n").filter((l) => !FOOTER.test(l));
}

/** Is this brief line a repeat of a style item? Exact after normalizing, or one containing the other. */
export function repeatsStyle(line: string, styleTexts: readonly string[]): boolean {
  const n = normalizeLine(line);
  if (n.length < 6) return false;
  return styleTexts.some((s) => s === n || (s.length >= 12 && n.includes(s)) || (n.length >= 12 && s.includes(n)));
}

function styleTextsOf(style: UserStyleView): string[] {
  const texts = [
    ...style.items.map((i) => i.summary),
    ...bodyLines(style.markdown).filter((l) => /^\s*[-*]\s/.test(l)),
  ];
  return [...new Set(texts.map(normalizeLine).filter((t) => t.length >= 6))];
}

/** Cut at a line boundary so the text stays under `limit` characters. */
function capChars(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  const nl = cut.lastIndexOf("\n");
  return nl > 0 ? cut.slice(0, nl) : cut;
}

function hasContent(view: UserStyleView | ProjectBriefView): boolean {
  return view.type === "user_style_view" ? view.items.length > 0 : view.key_facts.length > 0 || view.modules.length > 0;
}

/**
 * The cold-start context: the core user-style view and the core project brief under one total
 * budget. Style is asked first with at most STYLE_SHARE of it, the brief gets what style left (so
 * when the total is tight the brief is trimmed first), brief lines repeating a style item are
 * dropped. Memory that cannot be reached gives an empty context, never an error.
 */
export async function buildSessionStartContext(
  input: SessionStartInput,
  deps: SessionStartDeps,
): Promise<SessionStartContext> {
  const total = deps.totalBudget;
  const empty = (error: string | null, projectId: string | null = null): SessionStartContext => ({
    additionalContext: "",
    project_id: projectId,
    budget: total,
    style_budget: 0,
    brief_budget: 0,
    token_estimate: 0,
    memory_ids: [],
    dropped_brief_lines: 0,
    error,
  });
  let projectId: string;
  let workTree: string | undefined;
  try {
    const cwd = resolve(input.cwd ?? deps.fallbackCwd ?? process.cwd());
    const projects = (deps.projects ?? listProjects)();
    projectId = resolveProjectRoot(undefined, cwd, projects);
    workTree = linkedWorkTree(cwd, projects) ?? undefined;
  } catch (err) {
    return empty((err as Error).message);
  }
  try {
    const headerTokens = glueTokens(HEADER);
    const remaining = total - headerTokens;
    if (remaining < MIN_BLOCK_TOKENS) return empty(`budget ${total} is too small for any memory`, projectId);
    const styleBudget = Math.max(MIN_BLOCK_TOKENS, Math.floor(remaining * STYLE_SHARE));
    const style = await deps.bridge.request(
      "/views/user_style",
      { query: { project_id: projectId, mode: "core", context_budget_tokens: styleBudget } },
      UserStyleView,
    );
    const styleUsed = hasContent(style) ? style.token_estimate : 0;
    const briefBudget = remaining - styleUsed;
    let brief: ProjectBriefView | undefined;
    if (briefBudget >= MIN_BLOCK_TOKENS) {
      brief = await deps.bridge.request(
        "/views/project_brief",
        {
          query: {
            project_id: projectId,
            work_tree: workTree,
            mode: "core",
            context_budget_tokens: briefBudget,
            exclude_memory_ids: style.memory_ids,
          },
        },
        ProjectBriefView,
      );
    }
    const blocks: string[] = [];
    const ids: string[] = [];
    let estimate = headerTokens;
    if (hasContent(style)) {
      blocks.push(bodyLines(style.markdown).join("\n").trim());
      ids.push(...style.memory_ids);
      estimate += style.token_estimate;
    }
    let dropped = 0;
    if (brief && hasContent(brief)) {
      const styleTexts = hasContent(style) ? styleTextsOf(style) : [];
      const kept = bodyLines(brief.markdown).filter((l) => {
        const repeat = repeatsStyle(l, styleTexts);
        if (repeat) dropped++;
        return !repeat;
      });
      const text = kept.join("\n").trim();
      if (/[\p{L}\p{N}]/u.test(text)) {
        blocks.push(text);
        ids.push(...brief.memory_ids);
        estimate += brief.token_estimate;
      }
    }
    if (blocks.length === 0)
      return { ...empty(null, projectId), style_budget: styleBudget, brief_budget: Math.max(0, briefBudget) };
    const additionalContext = capChars([HEADER, ...blocks].join("\n\n"), CONTEXT_CHAR_LIMIT);
    return {
      additionalContext,
      project_id: projectId,
      budget: total,
      style_budget: styleBudget,
      brief_budget: Math.max(0, briefBudget),
      token_estimate: estimate,
      memory_ids: ids,
      dropped_brief_lines: dropped,
      error: null,
    };
  } catch (err) {
    return empty((err as Error).message, projectId);
  }
}

/** The JSON Claude Code reads from a SessionStart hook's stdout. */
export function sessionStartOutput(additionalContext: string): string {
  return JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "SessionStart",
      additionalContext: capChars(additionalContext, CONTEXT_CHAR_LIMIT),
    },
  });
}

/** Parse the hook's stdin; anything unreadable counts as no input (the host must never see a failure). */
export function parseHookInput(text: string): SessionStartInput {
  try {
    const parsed = SessionStartInput.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}
