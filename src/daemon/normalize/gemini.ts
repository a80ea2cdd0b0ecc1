/**
 * Gemini CLI chats (`~/.gemini/tmp/<project-id>/chats/session-*.json|.jsonl`) → normalized events.
 *
 * Two formats:
 * - up to v0.38: one JSON document `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`
 *   rewritten whole on every change — re-read the whole document when it changes;
 * - v0.39+: JSONL — a metadata line, then message records re-appended as they update (the last
 *   write of an id wins), `{"$set": {...}}` metadata patches (`$set.messages` replaces the list) and
 *   `{"$rewindTo": id}` (drops that message and everything after it; an unknown id clears all).
 *
 * Both fold into one message list. A message becomes events once a later message exists (it can
 * no longer change) or at flush (end of file / idle). Gemini records carry no cwd: the project
 * comes from the file's metadata through `resolveCwd`.
 */
import { basename } from "node:path";
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { inputPaths } from "./claude-code.ts";
import { summarizeEditTool } from "./diff-summary.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr, type LineNormalizer, type NormalizerOptions } from "./types.ts";

export const GEMINI_EDIT_TOOLS = new Set(["replace", "write_file", "edit", "smart_edit", "edit_file", "create_file"]);
export const GEMINI_SHELL_TOOLS = new Set(["run_shell_command", "shell"]);

type Msg = Record<string, unknown>;

/** Text of a Gemini content: a string, or parts `[{text}]`. */
export function geminiText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => asString(asRecord(p)?.text) ?? "")
      .filter((t) => t.length > 0)
      .join("\n");
  const obj = asRecord(content);
  if (obj && Array.isArray(obj.parts)) return geminiText(obj.parts);
  return "";
}

/** Output of a tool call: functionResponse.response.output|error, else resultDisplay. */
function toolOutput(tc: Record<string, unknown>): string {
  const parts: string[] = [];
  const result = Array.isArray(tc.result) ? tc.result : tc.result !== undefined ? [tc.result] : [];
  for (const item of result) {
    const fr = asRecord(asRecord(item)?.functionResponse);
    const resp = asRecord(fr?.response);
    const text = asString(resp?.output) ?? asString(resp?.error) ?? asString(resp?.content);
    if (text) parts.push(text);
  }
  if (parts.length === 0) {
    const display = tc.resultDisplay;
    if (typeof display === "string") parts.push(display);
    else if (display !== undefined && display !== null) parts.push(JSON.stringify(display));
  }
  return parts.join("\n");
}

export class GeminiNormalizer implements LineNormalizer {
  private meta: Record<string, unknown> = {};
  private messages = new Map<string, Msg>();
  /** Message id → signature of the version already turned into events. */
  private readonly emitted = new Map<string, string>();
  private cwd: string | null = null;
  private readonly fileSessionId: string | null;

  constructor(private readonly opts: NormalizerOptions = {}) {
    const m = /session-.*-([0-9a-f]{8})\.jsonl?$/i.exec(basename(opts.filePath ?? ""));
    this.fileSessionId = m ? m[1]! : null;
  }

  /** One JSONL line (or, for the document format, the whole document). */
  push(record: unknown, _lineStart: number): NormalizedEvent[] {
    const r = asRecord(record);
    if (!r) return [];
    if (typeof r.$rewindTo === "string") {
      const ids = [...this.messages.keys()];
      const at = ids.indexOf(r.$rewindTo);
      for (const id of at < 0 ? ids : ids.slice(at)) this.messages.delete(id);
    } else if (typeof r.id === "string" && typeof r.type === "string") {
      // Last write wins, and an updated message keeps its place in the conversation.
      this.messages.set(r.id, r);
    } else {
      const patch = asRecord(r.$set) ?? r;
      const { messages, ...rest } = patch;
      this.meta = { ...this.meta, ...rest };
      if (Array.isArray(messages)) {
        this.messages = new Map();
        for (const m of messages) {
          const msg = asRecord(m);
          if (msg && typeof msg.id === "string") this.messages.set(msg.id, msg);
        }
      }
    }
    return [];
  }

  /** Replace the state with a whole JSON document (the rewritten-JSON format). */
  loadDocument(doc: unknown): void {
    this.meta = {};
    this.messages = new Map();
    this.push(doc, 0);
  }

  afterBatch(): NormalizedEvent[] {
    return this.drain(false);
  }

  flush(): NormalizedEvent[] {
    return this.drain(true);
  }

  heldFrom(): number | null {
    // The fold lives in memory: until everything is emitted, a restart must re-read from the start.
    return this.hasUnemitted() ? 0 : null;
  }

  private hasUnemitted(): boolean {
    for (const [id, m] of this.messages) if (this.emitted.get(id) !== signature(m)) return true;
    return false;
  }

  private drain(final: boolean): NormalizedEvent[] {
    if (this.cwd === null) this.cwd = this.opts.resolveCwd?.(this.meta) ?? null;
    const list = [...this.messages.values()];
    const upto = final ? list.length : list.length - 1;
    const out: NormalizedEvent[] = [];
    for (let i = 0; i < upto; i++) {
      const m = list[i]!;
      const id = m.id as string;
      const sig = signature(m);
      if (this.emitted.get(id) === sig) continue;
      this.emitted.set(id, sig);
      out.push(...this.messageEvents(m));
    }
    return out;
  }

  private make(m: Msg, type: EventType, content: EventContent, filePaths: string[] = []): NormalizedEvent {
    const kind = asString(this.meta.kind);
    if (kind !== undefined && kind !== "main") content.sidechain = true;
    return {
      source_tool: "gemini_cli",
      session_id: asString(this.meta.sessionId) ?? this.fileSessionId,
      timestamp: isoOr(m.timestamp, isoOr(this.meta.startTime, new Date(0).toISOString())),
      event_type: type,
      content,
      file_paths: filePaths,
      cwd: this.cwd,
    };
  }

  private messageEvents(m: Msg): NormalizedEvent[] {
    const id = m.id as string;
    const type = asString(m.type);
    const text = geminiText(m.content);
    if (type === "user") return text.trim() ? [this.make(m, "user_message", { text, record_id: id, raw: m })] : [];
    if (type === "error")
      return text.trim() ? [this.make(m, "error", { text, is_error: true, record_id: id, raw: m })] : [];
    if (type !== "gemini" && type !== "model") return [];
    const out: NormalizedEvent[] = [];
    const { toolCalls, thoughts: _t, ...rest } = m;
    if (text.trim()) out.push(this.make(m, "assistant_response", { text, record_id: id, raw: rest }));
    const calls = Array.isArray(toolCalls) ? toolCalls : [];
    for (const c of calls) {
      const tc = asRecord(c);
      if (tc) out.push(...this.toolCallEvents(m, tc));
    }
    return out;
  }

  private toolCallEvents(m: Msg, tc: Record<string, unknown>): NormalizedEvent[] {
    const msgId = m.id as string;
    const callId = asString(tc.id) ?? "";
    const tool = asString(tc.name) ?? "unknown";
    const input = tc.args;
    const { result: _r, resultDisplay: _d, ...callRaw } = tc;
    const paths = inputPaths(input);
    const callEvent = GEMINI_EDIT_TOOLS.has(tool)
      ? (() => {
          const s = summarizeEditTool(tool, input);
          return this.make(
            m,
            "code_change",
            {
              tool,
              tool_use_id: callId,
              input,
              diff_summary: s?.summary ?? tool,
              record_id: `${msgId}:${callId}:call`,
              raw: callRaw,
            },
            s?.paths ?? paths,
          );
        })()
      : this.make(
          m,
          "tool_call",
          { tool, tool_use_id: callId, input, record_id: `${msgId}:${callId}:call`, raw: callRaw },
          paths,
        );
    const status = asString(tc.status) ?? "";
    if (
      status === "" ||
      status === "executing" ||
      status === "scheduled" ||
      status === "awaiting_approval" ||
      status === "validating"
    )
      return [callEvent];
    const output = toolOutput(tc);
    const record_id = `${msgId}:${callId}:result`;
    const raw = { id: callId, name: tool, status, result: tc.result, resultDisplay: tc.resultDisplay };
    if (GEMINI_SHELL_TOOLS.has(tool)) {
      const command = asString(asRecord(input)?.command) ?? "";
      const m2 = /^Exit Code: (-?\d+)/m.exec(output);
      const exit_code = m2 ? Number(m2[1]) : status === "success" ? 0 : null;
      const is_error = status !== "success" || (exit_code !== null && exit_code !== 0);
      const shell = shellEvent({ tool, tool_use_id: callId, command, exit_code, output, is_error, record_id, raw });
      return [callEvent, this.make(m, shell.type, shell.content)];
    }
    if (status !== "success")
      return [
        callEvent,
        this.make(
          m,
          "error",
          { text: output || status, tool, tool_use_id: callId, is_error: true, record_id, raw },
          paths,
        ),
      ];
    return [
      callEvent,
      this.make(m, "tool_result", { tool, tool_use_id: callId, output, is_error: false, record_id, raw }, paths),
    ];
  }
}

function signature(m: Msg): string {
  const { thoughts: _t, tokens: _k, ...rest } = m;
  return JSON.stringify(rest);
}
