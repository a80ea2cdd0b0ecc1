/**
 * Claude Code transcripts (`~/.claude/projects/<slug>/<session>.jsonl`, subagents under
 * `<session>/subagents/agent-*.jsonl`) → normalized events.
 *
 * - `user` string/text content → user_message (meta records and local-command output skipped);
 *   `isCompactSummary` → session_summary; `tool_result` blocks → command_run / test_run (Bash),
 *   error (a failed other tool) or tool_result.
 * - `assistant` text blocks → one assistant_response per `message.id` (its split lines joined);
 *   `tool_use` blocks → code_change (Edit/Write/MultiEdit/NotebookEdit) or tool_call.
 * - `summary` (old compaction/title records) → session_summary; `system` api errors → error.
 * - Everything else (progress, file-history-snapshot, queue-operation, …) is not an event.
 */
import { basename } from "node:path";
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { summarizeEditTool } from "./diff-summary.ts";
import { compactToolUse, type SliceAssumptions, type SliceAware, type SliceSeed, type SliceState } from "./slice.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr, type LineNormalizer, type NormalizerOptions, type ToolUseInfo } from "./types.ts";

export const CLAUDE_EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
export const CLAUDE_SHELL_TOOLS = new Set(["Bash"]);

/** Record types that end a pending assistant response (a different turn began). */
const TURN_TYPES = new Set(["user", "assistant", "system", "summary"]);

interface PendingResponse {
  msgId: string;
  texts: string[];
  raws: unknown[];
  lineStart: number;
  timestamp: string;
  cwd: string | null;
  sessionId: string | null;
  sidechain: boolean;
}

interface Waiting {
  event: NormalizedEvent;
  lineStart: number;
  needsTimestamp: boolean;
}

/** Text of a message content: a string, or the text blocks of an array (images noted). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const b of content) {
    const block = asRecord(b);
    if (!block) continue;
    if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
    else if (block.type === "image") parts.push("[image]");
    else if (block.type === "tool_reference" && typeof block.tool_name === "string")
      parts.push(`[tool ${block.tool_name}]`);
  }
  return parts.join("\n");
}

function isLocalCommandOutput(text: string): boolean {
  const t = text.trimStart();
  return (
    t.startsWith("<local-command-stdout>") ||
    t.startsWith("<local-command-stderr>") ||
    t.startsWith("<local-command-caveat>")
  );
}

/** Paths a tool input names (file_path, notebook_path, path). */
export function inputPaths(input: unknown): string[] {
  const inp = asRecord(input);
  if (!inp) return [];
  const out: string[] = [];
  for (const k of ["file_path", "notebook_path", "absolute_path", "path"]) {
    const v = asString(inp[k]);
    if (v && v.length > 0 && v.length < 1024) out.push(v);
  }
  return [...new Set(out)];
}

/**
 * `toolUseResult` repeats what the tool_result block already says and adds whole file bodies
 * (`originalFile` before an edit, `file.content` of a Read): those are replaced by their size.
 */
function slimToolUseResult(tur: unknown): unknown {
  const t = asRecord(tur);
  if (!t) return tur;
  const out: Record<string, unknown> = { ...t };
  if (typeof t.originalFile === "string") out.originalFile = `[omitted: ${t.originalFile.length} chars]`;
  const file = asRecord(t.file);
  if (file && typeof file.content === "string")
    out.file = { ...file, content: `[omitted: ${file.content.length} chars]` };
  return out;
}

/** Exit status of a Bash result: "Exit code N" on errors, 0 on success, null when interrupted. */
function bashExitCode(output: string, isError: boolean, interrupted: boolean): number | null {
  if (interrupted) return null;
  if (!isError) return 0;
  const m = /^\s*Exit code (\d+)/m.exec(output);
  return m ? Number(m[1]) : null;
}

/** The assistant_response of a joined response. */
function pendingEvent(p: PendingResponse): NormalizedEvent {
  const content: EventContent = {
    text: p.texts.join("\n\n"),
    record_id: p.msgId,
    raw: p.raws.length === 1 ? p.raws[0] : { records: p.raws },
  };
  if (p.sidechain) content.sidechain = true;
  return {
    source_tool: "claude_code",
    session_id: p.sessionId,
    timestamp: p.timestamp,
    event_type: "assistant_response",
    content,
    file_paths: [],
    cwd: p.cwd,
  };
}

export class ClaudeCodeNormalizer implements LineNormalizer, SliceAware {
  private readonly tools = new Map<string, ToolUseInfo>();
  private cwd: string | null = null;
  private lastTimestamp = "";
  private readonly fileSessionId: string | null;
  private readonly subagentFile: boolean;
  private pending: PendingResponse | null = null;
  /** The response an idle flush released last: a later block of the same message grows it (one event). */
  private released: PendingResponse | null = null;
  private waiting: Waiting[] = [];
  /** What this normalizer took for granted about lines it never saw (see slice.ts). */
  private readonly assumed: SliceAssumptions = {
    usedInitialCwd: false,
    usedInitialTimestamp: false,
    sawTurn: false,
    firstTurnMsgId: undefined,
    missedToolIds: [],
    toolUses: [],
  };
  /** tool_use ids set since `sliceAssumptions` last reported them. */
  private newToolIds: string[] = [];

  constructor(private readonly opts: NormalizerOptions = {}) {
    const file = opts.filePath ?? "";
    this.subagentFile = /[\\/]subagents[\\/]/.test(file);
    const stem = basename(file).replace(/\.jsonl$/, "");
    this.fileSessionId = stem.length > 0 && !this.subagentFile ? stem : null;
  }

  push(record: unknown, lineStart: number): NormalizedEvent[] {
    const r = asRecord(record);
    if (!r) return [];
    const out: NormalizedEvent[] = [];
    const type = asString(r.type) ?? "";
    const ts = asString(r.timestamp);
    if (ts && Number.isFinite(Date.parse(ts))) this.lastTimestamp = isoOr(ts, this.lastTimestamp);
    const cwd = asString(r.cwd);
    if (cwd && cwd.length > 0) {
      this.cwd = cwd;
      if (this.waiting.length > 0) out.push(...this.releaseWaiting());
    }
    if (!this.assumed.sawTurn && TURN_TYPES.has(type)) {
      this.assumed.sawTurn = true;
      this.assumed.firstTurnMsgId = type === "assistant" ? asString(asRecord(r.message)?.id) : undefined;
    }
    if (this.pending && TURN_TYPES.has(type)) {
      const msgId = type === "assistant" ? asString(asRecord(r.message)?.id) : undefined;
      if (msgId !== this.pending.msgId) out.push(...this.emit(this.flushPending(), lineStart));
    }
    let events: NormalizedEvent[] = [];
    if (type === "user") events = this.user(r);
    else if (type === "assistant") events = this.assistant(r, lineStart);
    else if (type === "summary") events = this.summary(r);
    else if (type === "system") events = this.system(r);
    out.push(...this.emit(events, lineStart));
    return out;
  }

  flush(opts: { idle?: boolean } = {}): NormalizedEvent[] {
    const idle = opts.idle === true;
    const p = this.pending;
    const out = this.emit(this.flushPending(), 0);
    if (idle && p) this.released = p;
    // In a live file, records without a cwd (a session summary written before the session's first
    // record) wait for it; at the end of a read, what never met a cwd is dropped at ingest.
    if (idle) return out;
    for (const w of this.waiting) out.push(w.event);
    this.waiting = [];
    return out;
  }

  sliceState(): SliceState {
    const p = this.pending;
    return {
      cwd: this.cwd,
      lastTimestamp: this.lastTimestamp,
      pendingMsgId: p ? p.msgId : null,
      pendingComplete: p !== null && p.cwd !== null && p.timestamp !== "",
      waiting: this.waiting.length,
    };
  }

  flushPreview(): NormalizedEvent[] | null {
    if (this.waiting.length > 0) return null;
    const p = this.pending;
    if (!p) return [];
    // a complete response is released as is by flush(); nothing else is held
    return p.cwd !== null && p.timestamp !== "" ? [pendingEvent(p)] : null;
  }

  sliceAssumptions(): SliceAssumptions {
    const toolUses: Array<[string, ToolUseInfo]> = [];
    for (const id of this.newToolIds) {
      const info = this.tools.get(id);
      if (info) toolUses.push([id, compactToolUse(info)]);
    }
    this.newToolIds = [];
    return { ...this.assumed, missedToolIds: [...this.assumed.missedToolIds], toolUses };
  }

  seed(seed: SliceSeed): void {
    if (this.cwd === null) this.cwd = seed.cwd;
    if (this.lastTimestamp === "") this.lastTimestamp = seed.lastTimestamp;
    for (const [id, info] of seed.toolUses) if (!this.tools.has(id)) this.tools.set(id, info);
  }

  heldFrom(): number | null {
    const starts: number[] = [];
    if (this.pending) starts.push(this.pending.lineStart);
    if (this.waiting.length > 0) starts.push(this.waiting[0]!.lineStart);
    return starts.length > 0 ? Math.min(...starts) : null;
  }

  // ---- record kinds ------------------------------------------------------------------------

  private base(r: Record<string, unknown>): {
    session_id: string | null;
    timestamp: string;
    cwd: string | null;
    sidechain: boolean;
  } {
    const own = isoOr(r.timestamp, "");
    if (own === "" && this.lastTimestamp === "") this.assumed.usedInitialTimestamp = true;
    const cwd = asString(r.cwd);
    if (cwd === undefined && this.cwd === null) this.assumed.usedInitialCwd = true;
    return {
      session_id: asString(r.sessionId) ?? this.fileSessionId,
      timestamp: own === "" ? this.lastTimestamp : own,
      cwd: cwd ?? this.cwd,
      sidechain: r.isSidechain === true || this.subagentFile,
    };
  }

  private make(
    b: ReturnType<ClaudeCodeNormalizer["base"]>,
    type: EventType,
    content: EventContent,
    filePaths: string[] = [],
  ): NormalizedEvent {
    if (b.sidechain) content.sidechain = true;
    return {
      source_tool: "claude_code",
      session_id: b.session_id,
      timestamp: b.timestamp,
      event_type: type,
      content,
      file_paths: filePaths,
      cwd: b.cwd,
    };
  }

  private user(r: Record<string, unknown>): NormalizedEvent[] {
    const b = this.base(r);
    const msg = asRecord(r.message);
    const content = msg?.content;
    const uuid = asString(r.uuid);
    if (r.isCompactSummary === true) {
      const text = contentText(content);
      return text.trim() ? [this.make(b, "session_summary", { text, record_id: uuid, raw: r })] : [];
    }
    if (typeof content === "string") {
      if (r.isMeta === true || isLocalCommandOutput(content) || content.trim().length === 0) return [];
      return [this.make(b, "user_message", { text: content, record_id: uuid, raw: r })];
    }
    if (!Array.isArray(content)) return [];
    const out: NormalizedEvent[] = [];
    const textBlocks = content.filter((x) => asRecord(x)?.type === "text");
    const text = contentText(textBlocks);
    if (text.trim() && r.isMeta !== true && !isLocalCommandOutput(text)) {
      const { toolUseResult: _t, ...rest } = r;
      out.push(
        this.make(b, "user_message", {
          text,
          record_id: uuid,
          raw: { ...rest, message: { ...msg, content: textBlocks } },
        }),
      );
    }
    const results = content.map(asRecord).filter((x): x is Record<string, unknown> => x?.type === "tool_result");
    for (const block of results)
      out.push(this.toolResult(r, b, block, results.length === 1 ? r.toolUseResult : undefined));
    return out;
  }

  private toolResult(
    r: Record<string, unknown>,
    b: ReturnType<ClaudeCodeNormalizer["base"]>,
    block: Record<string, unknown>,
    toolUseResult: unknown,
  ): NormalizedEvent {
    const id = asString(block.tool_use_id) ?? "";
    let info = this.tools.get(id);
    if (!info && id) {
      this.assumed.missedToolIds.push(id);
      info = this.opts.lookupToolUse?.(b.cwd, b.session_id, id);
    }
    const tur = asRecord(toolUseResult);
    const output =
      contentText(block.content) || [asString(tur?.stdout), asString(tur?.stderr)].filter((s) => s).join("\n");
    const isError = block.is_error === true;
    const msg = asRecord(r.message);
    const { toolUseResult: _all, ...rest } = r;
    const raw = {
      ...rest,
      message: { ...msg, content: [block] },
      ...(toolUseResult !== undefined ? { toolUseResult: slimToolUseResult(toolUseResult) } : {}),
    };
    const record_id = `${asString(r.uuid) ?? ""}:${id}`;
    const looksLikeShell = tur !== undefined && "stdout" in tur && "stderr" in tur;
    const tool = info?.tool ?? (looksLikeShell ? "Bash" : "unknown");
    if (CLAUDE_SHELL_TOOLS.has(tool)) {
      const command = asString(asRecord(info?.input)?.command) ?? "";
      const exit_code = bashExitCode(output, isError, tur?.interrupted === true);
      const shell = shellEvent({
        tool,
        tool_use_id: id,
        command,
        exit_code,
        output,
        is_error: isError || exit_code === null,
        record_id,
        raw,
      });
      return this.make(b, shell.type, shell.content);
    }
    const paths = info ? inputPaths(info.input) : [];
    if (isError)
      return this.make(b, "error", { text: output, tool, tool_use_id: id, is_error: true, record_id, raw }, paths);
    return this.make(b, "tool_result", { tool, tool_use_id: id, output, is_error: false, record_id, raw }, paths);
  }

  private assistant(r: Record<string, unknown>, lineStart: number): NormalizedEvent[] {
    const b = this.base(r);
    const msg = asRecord(r.message);
    const uuid = asString(r.uuid);
    const msgId = asString(msg?.id) ?? uuid ?? `${b.timestamp}`;
    const blocks: unknown[] =
      typeof msg?.content === "string"
        ? [{ type: "text", text: msg.content }]
        : Array.isArray(msg?.content)
          ? msg.content
          : [];
    if (r.isApiErrorMessage === true) {
      const text = contentText(blocks);
      return text.trim() ? [this.make(b, "error", { text, is_error: true, record_id: uuid, raw: r })] : [];
    }
    const out: NormalizedEvent[] = [];
    const textBlocks: unknown[] = [];
    for (const x of blocks) {
      const block = asRecord(x);
      if (!block) continue;
      if (block.type === "text" && typeof block.text === "string" && block.text.trim()) textBlocks.push(block);
      else if (block.type === "tool_use") out.push(this.toolUse(r, b, block));
    }
    if (textBlocks.length > 0) {
      const raw = { ...r, message: { ...msg, content: textBlocks } };
      const text = contentText(textBlocks);
      if (this.pending && this.pending.msgId === msgId) {
        this.pending.texts.push(text);
        this.pending.raws.push(raw);
      } else if (!this.pending && this.released?.msgId === msgId) {
        // the same message goes on after an idle flush: the grown response replaces what was stored
        const r = this.released;
        this.pending = { ...r, texts: [...r.texts, text], raws: [...r.raws, raw] };
      } else {
        this.pending = {
          msgId,
          texts: [text],
          raws: [raw],
          lineStart,
          timestamp: b.timestamp,
          cwd: b.cwd,
          sessionId: b.session_id,
          sidechain: b.sidechain,
        };
      }
    }
    return out;
  }

  private toolUse(
    r: Record<string, unknown>,
    b: ReturnType<ClaudeCodeNormalizer["base"]>,
    block: Record<string, unknown>,
  ): NormalizedEvent {
    const id = asString(block.id) ?? "";
    const tool = asString(block.name) ?? "unknown";
    const input = block.input;
    if (id) {
      this.tools.set(id, { tool, input });
      this.newToolIds.push(id);
    }
    const raw = { ...r, message: { ...asRecord(r.message), content: [block] } };
    if (CLAUDE_EDIT_TOOLS.has(tool)) {
      const s = summarizeEditTool(tool, input);
      return this.make(
        b,
        "code_change",
        { tool, tool_use_id: id, input, diff_summary: s?.summary ?? tool, record_id: id, raw },
        s?.paths ?? inputPaths(input),
      );
    }
    return this.make(b, "tool_call", { tool, tool_use_id: id, input, record_id: id, raw }, inputPaths(input));
  }

  private summary(r: Record<string, unknown>): NormalizedEvent[] {
    const text = asString(r.summary);
    if (!text?.trim()) return [];
    const b = this.base(r);
    const leaf = asString(r.leafUuid);
    return [this.make(b, "session_summary", { text, record_id: leaf ? `summary:${leaf}` : undefined, raw: r })];
  }

  private system(r: Record<string, unknown>): NormalizedEvent[] {
    const subtype = asString(r.subtype) ?? "";
    if (subtype !== "api_error" && r.level !== "error") return [];
    const b = this.base(r);
    const err = r.error !== undefined ? JSON.stringify(r.error) : "";
    const text = asString(r.content) ?? (err || subtype);
    return [this.make(b, "error", { text, is_error: true, record_id: asString(r.uuid), raw: r })];
  }

  // ---- held-back events ----------------------------------------------------------------------

  private flushPending(): NormalizedEvent[] {
    const p = this.pending;
    if (!p) return [];
    this.pending = null;
    this.released = null;
    return [pendingEvent(p)];
  }

  /** Events without a cwd (or timestamp) wait for the first record that has one. */
  private emit(events: NormalizedEvent[], lineStart: number): NormalizedEvent[] {
    const ready: NormalizedEvent[] = [];
    for (const e of events) {
      const needsTimestamp = e.timestamp === "";
      if (e.cwd === null || needsTimestamp) this.waiting.push({ event: e, lineStart, needsTimestamp });
      else ready.push(e);
    }
    if (this.waiting.length > 0 && this.cwd !== null && this.lastTimestamp !== "")
      ready.unshift(...this.releaseWaiting());
    return ready;
  }

  private releaseWaiting(): NormalizedEvent[] {
    if (this.cwd === null || this.lastTimestamp === "") return [];
    const out = this.waiting.map((w) => ({
      ...w.event,
      cwd: w.event.cwd ?? this.cwd,
      timestamp: w.event.timestamp || this.lastTimestamp,
    }));
    this.waiting = [];
    return out;
  }
}
