/**
 * An issue-tracker ticket the session fetched, as the task's own statement. A developer who says
 * "work on ENT-98" leaves the why in the ticket ("I tried to move the commands out before, it was too
 * fraught"), and the agent reads it through a tool: an MCP server's get-issue call (Linear, GitHub,
 * Jira) or `gh issue view`. Without this the model sees "tool mcp__linear-server__get_issue" and
 * nothing of what it said.
 *
 * Only the ticket's id, title and description are kept; links are dropped, so no tracker URL reaches
 * the model. Any other tool result stays unshown.
 */
import { z } from "zod";

export interface Ticket {
  id: string;
  title: string;
  body: string;
}

/** A tool whose name says it reads an issue, ticket or pull request. */
const TICKET_TOOL =
  /(?:^|[_\W])(?:get|read|view|fetch|show)_?(?:jira_?)?(?:issue|ticket|pull_?request|pr)\b|issue_read\b/i;

const Id = z.union([z.string().min(1).max(80), z.number().int().nonnegative()]).transform(String);
const Text = z.string().trim().min(1);

/** Linear ({identifier, title, description}), GitHub ({number, title, body}) and Jira ({key, fields: {summary, description}}). */
const TicketJson = z.union([
  z.object({ identifier: Id, title: Text, description: Text }).transform((t) => ({
    id: t.identifier,
    title: t.title,
    body: t.description,
  })),
  z
    .object({ number: Id, title: Text, body: Text })
    .transform((t) => ({ id: `#${t.number}`, title: t.title, body: t.body })),
  z.object({ key: Id, fields: z.object({ summary: Text, description: Text }) }).transform((t) => ({
    id: t.key,
    title: t.fields.summary,
    body: t.fields.description,
  })),
]);

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

/** `gh issue view N` without a terminal prints `title:\t…` header lines, a `--` line, then the body. */
function ghIssueText(output: string): Ticket | null {
  const [head, ...rest] = output.split(/\r?\n--\r?\n/);
  if (!head || rest.length === 0) return null;
  const field = (name: string) => new RegExp(`^${name}:\\t(.*)$`, "m").exec(head)?.[1]?.trim() ?? "";
  const title = field("title");
  const number = field("number");
  const body = rest.join("\n--\n").trim();
  return title && number && body ? { id: `#${number}`, title, body } : null;
}

function withoutLinks(s: string): string {
  return s
    .replace(/\[([^\]]*)\]\(https?:\/\/[^)\s]*\)/g, "$1")
    .replace(/<?https?:\/\/[^\s>)\]]*[^\s>)\].,;:]>?/g, "")
    .replace(/[ \t]+/g, " ")
    .trim();
}

/**
 * The ticket a tool result or command output holds: `tool` is the tool's name (an MCP tool) or
 * `command` the shell command (`gh issue view`). Null for anything else.
 */
export function ticketIn(output: string, source: { tool?: string; command?: string }): Ticket | null {
  let t: Ticket | null = null;
  if (source.command !== undefined) {
    if (!/\bgh\s+(?:issue|pr)\s+view\b/.test(source.command)) return null;
    const json = TicketJson.safeParse(parseJson(output.trim()));
    t = json.success ? json.data : ghIssueText(output);
  } else if (source.tool !== undefined && TICKET_TOOL.test(source.tool)) {
    const json = TicketJson.safeParse(parseJson(output.trim()));
    t = json.success ? json.data : null;
  }
  if (!t) return null;
  const body = withoutLinks(t.body);
  return body ? { id: t.id, title: withoutLinks(t.title), body } : null;
}
