/**
 * OpenCode (≥ 1.2) sessions → normalized events. OpenCode keeps them in SQLite
 * (`~/.local/share/opencode/opencode.db`): `session` (id, directory, parent_id), `message` (id,
 * session_id, data JSON `{role, time: {created, completed?}, path: {cwd}}`) and `part` (id,
 * message_id, session_id, time_updated, data JSON). Checked against the pinned `opencode-ai` 1.18.33:
 * a part is `text` (user request or model answer; `synthetic` ones are OpenCode's own), `tool`
 * (`tool`, `callID`, `state: {status, input, output, metadata: {exit}}`, updated in place from
 * pending to completed/error), `step-start`/`step-finish`/`patch`/`snapshot` (bookkeeping, not
 * events) or `compaction`. A part becomes events once it is final: a tool part completed or failed,
 * a text part of a user message or of a completed assistant message. A child session (`parent_id`,
 * a `task` subagent) is marked sidechain. The project comes from the session's directory.
 */
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { summarizeEditTool } from "./diff-summary.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr } from "./types.ts";

export interface OpenCodeRow {
  partId: string;
  sessionId: string;
  directory: string;
  parentId: string | null;
  /** message.data, parsed. */
  message: Record<string, unknown>;
  /** part.data, parsed. */
  part: Record<string, unknown>;
  timeCreated: number;
}

const EDIT_TOOLS = new Set(["edit", "write", "multiedit", "patch", "apply_patch"]);
const SHELL_TOOLS = new Set(["bash", "shell"]);

/** OpenCode's camelCase edit input in the shape the shared edit summary reads. */
function editInput(input: unknown): Record<string, unknown> | undefined {
  const i = asRecord(input);
  if (!i) return undefined;
  return {
    file_path: i.filePath ?? i.file_path,
    old_string: i.oldString,
    new_string: i.newString,
    content: i.content,
    replace_all: i.replaceAll,
  };
}

function inputPath(input: unknown): string[] {
  const i = asRecord(input);
  const p = asString(i?.filePath) ?? asString(i?.file_path) ?? asString(i?.path);
  return p ? [p] : [];
}

/** Is this part final (it will not change any more)? */
export function partIsFinal(row: Pick<OpenCodeRow, "message" | "part">): boolean {
  const type = asString(row.part.type);
  if (type === "tool") {
    const status = asString(asRecord(row.part.state)?.status);
    return status === "completed" || status === "error";
  }
  if (type === "text") return row.message.role === "user" || asRecord(row.message.time)?.completed !== undefined;
  return true;
}

/** Events of one final part (none for bookkeeping parts). */
export function openCodePartEvents(row: OpenCodeRow): NormalizedEvent[] {
  const part = row.part;
  const type = asString(part.type);
  const make = (t: EventType, content: EventContent, filePaths: string[] = []): NormalizedEvent => {
    if (row.parentId) content.sidechain = true;
    return {
      source_tool: "opencode",
      session_id: row.sessionId,
      timestamp: isoOr(
        asRecord(asRecord(part.state)?.time)?.start ?? asRecord(part.time)?.start,
        isoOr(row.timeCreated, new Date(0).toISOString()),
      ),
      event_type: t,
      content,
      file_paths: filePaths,
      cwd: row.directory || null,
    };
  };
  if (type === "text") {
    const text = asString(part.text) ?? "";
    if (!text.trim() || part.synthetic === true || part.ignored === true) return [];
    const user = row.message.role === "user";
    const kind = row.message.summary === true ? "session_summary" : user ? "user_message" : "assistant_response";
    return [make(kind, { text, record_id: row.partId, raw: part })];
  }
  if (type === "compaction") {
    const text = asString(part.text) ?? "";
    return text.trim() ? [make("session_summary", { text, record_id: row.partId, raw: part })] : [];
  }
  if (type !== "tool") return [];
  const tool = asString(part.tool) ?? "unknown";
  const callId = asString(part.callID) ?? row.partId;
  const state = asRecord(part.state) ?? {};
  const input = state.input;
  const status = asString(state.status) ?? "";
  const output = asString(state.output) ?? asString(state.error) ?? "";
  const metadata = asRecord(state.metadata);
  const raw = {
    id: callId,
    tool,
    status,
    input,
    output: state.output,
    error: state.error,
    metadata: { exit: metadata?.exit },
  };
  const out: NormalizedEvent[] = [];
  const callRecord = `${row.partId}:call`;
  const resultRecord = `${row.partId}:result`;
  if (EDIT_TOOLS.has(tool)) {
    const s = summarizeEditTool(tool === "write" ? "write_file" : "edit", editInput(input));
    out.push(
      make(
        "code_change",
        { tool, tool_use_id: callId, input, diff_summary: s?.summary ?? tool, record_id: callRecord, raw },
        s?.paths ?? inputPath(input),
      ),
    );
  } else
    out.push(make("tool_call", { tool, tool_use_id: callId, input, record_id: callRecord, raw }, inputPath(input)));
  if (SHELL_TOOLS.has(tool)) {
    const command = asString(asRecord(input)?.command) ?? "";
    const exit_code = typeof metadata?.exit === "number" ? metadata.exit : status === "completed" ? 0 : null;
    const is_error = status !== "completed" || (exit_code !== null && exit_code !== 0);
    const shell = shellEvent({
      tool,
      tool_use_id: callId,
      command,
      exit_code,
      output,
      is_error,
      record_id: resultRecord,
      raw,
    });
    out.push(make(shell.type, shell.content));
  } else if (status === "error")
    out.push(
      make(
        "error",
        { text: output || "error", tool, tool_use_id: callId, is_error: true, record_id: resultRecord, raw },
        inputPath(input),
      ),
    );
  else
    out.push(
      make(
        "tool_result",
        { tool, tool_use_id: callId, output, is_error: false, record_id: resultRecord, raw },
        inputPath(input),
      ),
    );
  return out;
}
