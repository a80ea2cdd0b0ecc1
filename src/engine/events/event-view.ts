/**
 * The engine's view of one stored event: `content_json` parsed once, with the fields every rule
 * needs (text, command, outcome) pulled out. Rules read these, never the raw JSON.
 */
import type { EventDTO, EventContent, EventType } from "../../shared/event.ts";
import { isoToMs } from "../../shared/time.ts";

export interface EngineEvent {
  id: string;
  ms: number;
  iso: string;
  type: EventType;
  session: string | null;
  source: string;
  filePaths: string[];
  content: EventContent;
  /** User/assistant/error/summary text (empty for tool events). */
  text: string;
  command: string;
  exitCode: number | null;
  isError: boolean;
  output: string;
  tool: string;
  toolUseId: string;
  /** The user refused this tool call (Claude's "doesn't want to proceed", an interrupt). */
  rejected: boolean;
  sidechain: boolean;
}

const REJECTION = /doesn't want to proceed with this tool use|tool use was rejected|\[Request interrupted by user/i;

function parseContent(json: string): EventContent {
  try {
    const v = JSON.parse(json) as unknown;
    return v !== null && typeof v === "object" ? (v as EventContent) : {};
  } catch {
    return {};
  }
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export function toEngineEvent(e: EventDTO): EngineEvent {
  const c = parseContent(e.content_json);
  const output = str(c.output);
  const text = str(c.text);
  return {
    id: e.id,
    ms: isoToMs(e.timestamp),
    iso: e.timestamp,
    type: e.event_type,
    session: e.session_id,
    source: e.source_tool,
    filePaths: e.file_paths,
    content: c,
    text,
    command: str(c.command),
    exitCode: typeof c.exit_code === "number" ? c.exit_code : null,
    isError: c.is_error === true,
    output,
    tool: str(c.tool),
    toolUseId: str(c.tool_use_id),
    rejected: REJECTION.test(output) || (e.event_type === "error" && REJECTION.test(text)),
    sidechain: c.sidechain === true,
  };
}

const WRAPPER_PREFIXES = [
  /^<command-name>/,
  /^<command-message>/,
  /^<local-command-/,
  /^Caveat: The messages below/,
  /^<local-command-caveat>/,
  /^\[Request interrupted/,
  /^<user-prompt-submit-hook>/,
  // The repository's guidance as the agent injects it, not the user's words: a Claude Code skill's
  // SKILL.md, Codex's AGENTS.md ("# AGENTS.md instructions for …", older `<user_instructions>`).
  /^Base directory for this skill:/,
  /^#\s*AGENTS\.md instructions for\b/,
  /^<user_instructions>/,
];

/**
 * What the human actually typed: system reminders, slash-command wrappers and IDE context stripped.
 * Returns "" for records that are not the user's own words.
 */
export function cleanUserText(raw: string): string {
  let t = raw.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").replace(/<private>[\s\S]*?<\/private>/g, "");
  const codexRequest = /## My request for Codex:\s*([\s\S]*)$/.exec(t);
  if (codexRequest?.[1]) t = codexRequest[1];
  t = t.replace(/<environment_context>[\s\S]*?<\/environment_context>/g, "").trim();
  if (WRAPPER_PREFIXES.some((re) => re.test(t))) return "";
  if (/^This session is being continued from a previous conversation/.test(t)) return "";
  return t;
}

/**
 * The user's messages of an episode, cleaned, with the event they came from. The expansion of a
 * slash command (the prompt template sent right after `<command-name>/x</command-name>`) is the
 * command's text, not something the user typed, and is left out.
 */
export function userMessages(events: readonly EngineEvent[]): Array<{ ev: EngineEvent; text: string }> {
  const out: Array<{ ev: EngineEvent; text: string }> = [];
  let commandAt = -Infinity;
  for (const ev of events) {
    if (ev.type !== "user_message" || ev.sidechain) continue;
    if (
      /<command-name>\/?[\w:-]+<\/command-name>/.test(ev.text) &&
      !/<command-name>\/(?:exit|clear|compact|mcp|help|cost|status)<\/command-name>/.test(ev.text)
    ) {
      commandAt = ev.ms;
      continue;
    }
    const text = cleanUserText(ev.text);
    if (text.length === 0) continue;
    if (ev.ms - commandAt <= 2000) continue;
    out.push({ ev, text });
  }
  return out;
}

function isCall(e: EngineEvent): boolean {
  return e.type === "code_change" || e.type === "tool_call";
}

/**
 * Tool results paired with their calls in time order: a result answers the latest call before it
 * with the same tool_use_id that is still unanswered. (Ids are unique in real logs, but a reused id
 * must not let one refused edit void every other edit that carried it.)
 */
function pairResults(events: readonly EngineEvent[]): Map<EngineEvent, EngineEvent> {
  // Within one millisecond a call comes before its result, whatever the ids' order.
  const ordered = events
    .filter((e) => e.toolUseId)
    .sort((a, b) => a.ms - b.ms || Number(!isCall(a)) - Number(!isCall(b)));
  const open = new Map<string, EngineEvent>();
  const orphans = new Map<string, EngineEvent>();
  const callOf = new Map<EngineEvent, EngineEvent>();
  for (const e of ordered) {
    if (isCall(e)) {
      const early = orphans.get(e.toolUseId);
      orphans.delete(e.toolUseId);
      // A result stamped just before its call (clock skew between records) still answers it.
      if (early && e.ms - early.ms <= 2000) callOf.set(early, e);
      else open.set(e.toolUseId, e);
      continue;
    }
    const call = open.get(e.toolUseId);
    if (call) {
      callOf.set(e, call);
      open.delete(e.toolUseId);
    } else orphans.set(e.toolUseId, e);
  }
  return callOf;
}

/** Is this a change that really happened (an edit whose result was not an error or a refusal)? */
export function appliedChanges(events: readonly EngineEvent[]): EngineEvent[] {
  const failed = new Set<EngineEvent>();
  for (const [result, call] of pairResults(events)) {
    if (
      (result.type === "tool_result" || result.type === "error") &&
      (result.isError || result.type === "error" || result.rejected)
    )
      failed.add(call);
  }
  return events.filter((e) => e.type === "code_change" && !failed.has(e) && !e.rejected);
}

/** Edits the user refused (the tool result of the edit was a rejection). */
export function rejectedCalls(events: readonly EngineEvent[]): Array<{ call: EngineEvent; result: EngineEvent }> {
  const callOf = pairResults(events);
  const out: Array<{ call: EngineEvent; result: EngineEvent }> = [];
  for (const e of events) {
    if (!e.rejected || !e.toolUseId) continue;
    const call = callOf.get(e);
    if (call && call !== e) out.push({ call, result: e });
    else if (e.type === "command_run" || e.type === "test_run") out.push({ call: e, result: e });
  }
  return out;
}

/** An approved plan handed back as the user's message (Claude Code's plan mode): the assistant's words, not the user's. */
export function isPlanMessage(text: string): boolean {
  return /^(?:implement the following plan|here is the plan|execute (?:this|the following) plan)\s*:/i.test(
    text.trim(),
  );
}

/** Trim a string to `max` characters on a word boundary, with an ellipsis when cut. */
export function clip(s: string, max: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  if (one.length <= max) return one;
  const cut = one.slice(0, max - 1);
  const sp = cut.lastIndexOf(" ");
  return `${(sp > max * 0.6 ? cut.slice(0, sp) : cut).trimEnd()}…`;
}

/** A stable slug for keys: lower-case words joined by `_`, at most `maxWords`. */
export function slug(s: string, maxWords = 5): string {
  return s
    .toLowerCase()
    .replace(/[`'"“”‘’]/g, "")
    .split(/[^a-z0-9.+#-]+/)
    .map((w) => w.replace(/^[.-]+|[.-]+$/g, ""))
    .filter((w) => w.length > 0)
    .slice(0, maxWords)
    .join("_");
}

/** Input of a tool call as an object (edits carry old_string/new_string/content). */
export function toolInput(e: EngineEvent): Record<string, unknown> {
  const input = e.content.input;
  return input !== null && typeof input === "object" ? (input as Record<string, unknown>) : {};
}
