/**
 * An episode as the model reads it: one numbered line per event, long text cut, the middle dropped
 * when it still does not fit the context window. What carries the reasons gets the room:
 * - the episode's opening request (often an approved plan, whose "why" lines are the decisions) and a
 *   compaction summary (its request, errors and fixes, problem solving and the user's own messages, not
 *   its code listings) get up to `lead` characters; the user's later messages `user`;
 * - the user's answers to the agent's questions (a tool result, not a user message) are shown as theirs,
 *   and a ticket the session fetched (ticket-text.ts) as the task's statement;
 * - a command's output keeps its start and its end, and a failure its telling lines, distinct, last ones
 *   included: a test run logs the same expected error a hundred times before the real one at the end.
 * Measured on the labelled sessions (issue 26, session 9): with every user message and summary cut at
 * 700 characters and only a failure's first three telling lines, the evidence of 16 of 65 labelled rules,
 * decisions and lessons never reached the model (10 of them in an opening plan).
 */
import { estimateTokens } from "../../../shared/tokens.ts";
import { commandOutcome, failureLines } from "../../events/commands.ts";
import { cleanUserText, clip, type EngineEvent } from "../../events/event-view.ts";
import { ticketIn, type Ticket } from "./ticket-text.ts";
import { answeredText } from "./user-answers.ts";

interface Limits {
  /** Assistant text and a subagent's task. */
  text: number;
  /** The user's later messages and answers. */
  user: number;
  /** The opening request and a compaction summary. */
  lead: number;
  output: number;
}

const START: Limits = { text: 700, user: 1500, lead: 6000, output: 500 };

/** Claude Code's compaction summary numbers its sections: "4. Errors and fixes:". */
const SECTION = /(?:^|\n)[ \t]*(?:#+[ \t]*)?\**(\d{1,2})\.[ \t]+\**([A-Z][A-Za-z ,&/'-]{2,60}?)\**:/g;
const KEPT_SECTION = /request|intent|error|fix|problem|user'?s? messages|decision|lesson/i;

/**
 * The parts of a compaction summary proper that hold reasons (request, errors and fixes, problem
 * solving, the user's messages), each cut to its share of `max`; its code listings, file lists and next
 * steps are left out. A summary without numbered sections is cut from its start.
 */
export function summaryDigest(text: string, max: number): string {
  // The summary proper follows its chronological analysis, which numbers its own steps.
  const at = text.search(/\n[ \t]*(?:#+[ \t]*)?\**Summary\**:[ \t]*\n/);
  const summary = at >= 0 ? text.slice(at) : text;
  const heads = [...summary.matchAll(SECTION)];
  const parts = heads
    .map((m, i) => ({
      title: m[2]!.trim(),
      body: summary.slice(m.index! + m[0].length, heads[i + 1]?.index ?? summary.length),
    }))
    .filter((p) => KEPT_SECTION.test(p.title) && p.body.trim().length > 0);
  if (parts.length === 0) return clip(text, max);
  const share = Math.floor(max / parts.length);
  return parts.map((p) => `${p.title}: ${clip(p.body, Math.max(80, share - p.title.length - 4))}`).join(" ¶ ");
}

/** Start and end of a long text, the middle dropped. */
function clipEnds(s: string, max: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  if (one.length <= max) return one;
  const head = Math.floor(max * 0.55);
  return `${clip(one, head)} … ${one.slice(one.length - (max - head - 3)).replace(/^\S*\s/, "")}`;
}

/** A fetched ticket, as the task's statement: its id, title and description. */
function ticketLine(n: number, t: Ticket, max: number): string {
  return `[${n}] ticket ${t.id} (the task as filed): ${clip(`${t.title}: ${t.body}`, max)}`;
}

/** A failure's telling lines, each once: the first and the last ones. */
function failureDetail(output: string, max: number): string {
  const lines = [...new Set(failureLines(output, 200))];
  const picked = lines.length <= max ? lines : [lines[0]!, ...lines.slice(lines.length - (max - 1))];
  return picked.join(" | ");
}

function renderEvent(e: EngineEvent, n: number, lim: Limits, opening: boolean): string | null {
  const paths = e.filePaths.length > 0 ? ` ${e.filePaths.slice(0, 4).join(", ")}` : "";
  switch (e.type) {
    case "user_message": {
      const t = cleanUserText(e.text);
      if (!t) return null;
      if (e.sidechain) return `[${n}] task given to a subagent: ${clip(t, lim.text)}`;
      return `[${n}] user: ${clip(t, opening ? lim.lead : lim.user)}`;
    }
    case "assistant_response":
      return `[${n}] assistant: ${clip(e.text, lim.text)}`;
    case "code_change":
      return `[${n}] edit${paths}: ${clip(e.content.diff_summary ?? e.tool, lim.output)}`;
    case "command_run":
    case "test_run": {
      const ticket = ticketIn(e.output, { command: e.command });
      if (ticket) return ticketLine(n, ticket, lim.user);
      const outcome = commandOutcome(e);
      const counts =
        e.type === "test_run" && (e.content.passed !== undefined || e.content.failed !== undefined)
          ? ` (${e.content.passed ?? 0} passed, ${e.content.failed ?? 0} failed)`
          : "";
      const telling = outcome === "fail" ? failureDetail(e.output, 4) : "";
      const detail = telling ? clip(telling, lim.output) : clipEnds(e.output, lim.output);
      return `[${n}] $ ${clip(e.command, 200)} → ${outcome}${counts}${detail ? `: ${detail}` : ""}`;
    }
    case "tool_call":
      return `[${n}] tool ${e.tool}${paths}`;
    case "tool_result": {
      if (e.isError) return `[${n}] tool error: ${clip(e.output, lim.output)}`;
      if (e.sidechain) return null;
      const answer = answeredText(e.output);
      if (answer) return `[${n}] user answered: ${clip(answer, lim.user)}`;
      const ticket = ticketIn(e.output, { tool: e.tool });
      return ticket ? ticketLine(n, ticket, lim.user) : null;
    }
    case "error":
      return `[${n}] ${e.rejected ? "user refused the previous tool call" : `error: ${clip(e.text, lim.output)}`}`;
    case "git_commit":
      return `[${n}] commit "${clip(e.content.commit?.message ?? "", 160)}" (${(e.content.commit?.files ?? []).slice(0, 5).join(", ")})`;
    case "session_summary":
      return `[${n}] earlier context: ${summaryDigest(e.text, lim.lead)}`;
  }
}

export interface Rendering {
  text: string;
  /** Event behind each [number] (1-based). */
  refs: EngineEvent[];
}

/** The episode as numbered lines, cut to fit `maxTokens`. */
export function renderEpisode(events: readonly EngineEvent[], maxTokens: number): Rendering {
  // Subagent work (edits, commands) is real work; its "user" turns are the parent agent's prompts, labelled as such.
  const main = [...events];
  const opening = main.find((e) => e.type === "user_message" && !e.sidechain && cleanUserText(e.text));
  let lim: Limits = START;
  for (let round = 0; round < 6; round++) {
    const lines: string[] = [];
    main.forEach((e, i) => {
      const l = renderEvent(e, i + 1, lim, e === opening);
      if (l) lines.push(l);
    });
    let text = lines.join("\n");
    if (estimateTokens(text) <= maxTokens || round === 5) {
      if (estimateTokens(text) > maxTokens) {
        // Keep the start (the goal) and the end (the outcome); drop the middle.
        const head = Math.max(1, Math.floor(lines.length * 0.3));
        let tail = lines.length - head;
        while (
          tail > 1 &&
          estimateTokens([...lines.slice(0, head), "[…]", ...lines.slice(lines.length - tail)].join("\n")) > maxTokens
        )
          tail = Math.floor(tail * 0.8);
        text = [
          ...lines.slice(0, head),
          `[… ${lines.length - head - tail} events omitted …]`,
          ...lines.slice(lines.length - tail),
        ].join("\n");
      }
      return { text, refs: main };
    }
    lim = {
      text: Math.floor(lim.text / 2),
      user: Math.floor(lim.user / 2),
      lead: Math.floor(lim.lead / 2),
      output: Math.floor(lim.output / 2),
    };
  }
  return { text: "", refs: main };
}
