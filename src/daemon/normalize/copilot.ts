/**
 * GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`) → normalized events.
 *
 * Checked against the pinned `@github/copilot` 1.0.102 (its schema is undocumented): an append-only
 * JSONL of `{type, data, id, timestamp, parentId}`. `session.start` carries `data.sessionId` and
 * `data.context.cwd` (also in the folder's `workspace.yaml`, which `resolveCwd` reads when a
 * restart resumes mid-file); `user.message` the request (`data.content`); `assistant.message` the
 * answer (`data.content`) and `data.toolRequests[]` (`toolCallId`, `name`, `arguments`);
 * `tool.execution_complete` the outcome (`success`, `result.content`, `shellExecution.exitCode`);
 * `session.compaction_complete`-style summaries become session summaries. Records are complete
 * when written, so nothing is held back.
 */
import { basename, dirname } from "node:path";
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { summarizeEditTool } from "./diff-summary.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr, type LineNormalizer, type NormalizerOptions, type ToolUseInfo } from "./types.ts";

type Rec = Record<string, unknown>;

const EDIT_TOOLS = new Set(["edit", "create", "str_replace", "str_replace_editor", "write", "apply_patch"]);
const SHELL_TOOLS = new Set(["bash", "powershell", "shell"]);

function inputPath(input: unknown): string[] {
  const i = asRecord(input);
  const p = asString(i?.path) ?? asString(i?.file_path) ?? asString(i?.filePath);
  return p ? [p] : [];
}

export class CopilotNormalizer implements LineNormalizer {
  private readonly calls = new Map<string, ToolUseInfo>();
  private cwd: string | null = null;
  private sessionId: string | null;

  constructor(private readonly opts: NormalizerOptions = {}) {
    this.sessionId = opts.filePath ? basename(dirname(opts.filePath)) : null;
  }

  push(record: unknown, _lineStart: number): NormalizedEvent[] {
    const r = asRecord(record);
    if (!r) return [];
    const type = asString(r.type) ?? "";
    const data = asRecord(r.data) ?? {};
    if (type === "session.start" || type === "session.resume") {
      this.sessionId = asString(data.sessionId) ?? this.sessionId;
      this.cwd = asString(asRecord(data.context)?.cwd) ?? this.cwd;
      return [];
    }
    if (this.cwd === null) this.cwd = this.opts.resolveCwd?.({}) ?? null;
    if (type === "user.message") {
      const text = asString(data.content) ?? "";
      return text.trim() ? [this.make(r, "user_message", { text, record_id: asString(r.id), raw: r })] : [];
    }
    if (type === "assistant.message") return this.assistant(r, data);
    if (type === "tool.execution_complete") return this.result(r, data);
    if (/compaction|summary/.test(type)) {
      const text = asString(data.summary) ?? asString(data.content) ?? "";
      return text.trim() ? [this.make(r, "session_summary", { text, record_id: asString(r.id), raw: r })] : [];
    }
    return [];
  }

  flush(): NormalizedEvent[] {
    return [];
  }

  heldFrom(): number | null {
    return null;
  }

  private make(r: Rec, type: EventType, content: EventContent, filePaths: string[] = []): NormalizedEvent {
    return {
      source_tool: "copilot_cli",
      session_id: this.sessionId,
      timestamp: isoOr(r.timestamp, new Date(0).toISOString()),
      event_type: type,
      content,
      file_paths: filePaths,
      cwd: this.cwd,
    };
  }

  private assistant(r: Rec, data: Rec): NormalizedEvent[] {
    const id = asString(r.id) ?? "";
    const out: NormalizedEvent[] = [];
    const text = asString(data.content) ?? "";
    const { toolRequests, ...rest } = data;
    if (text.trim()) out.push(this.make(r, "assistant_response", { text, record_id: id, raw: rest }));
    for (const t of Array.isArray(toolRequests) ? toolRequests : []) {
      const req = asRecord(t);
      if (!req) continue;
      const callId = asString(req.toolCallId) ?? "";
      const tool = asString(req.name) ?? "unknown";
      const input = req.arguments;
      this.calls.set(callId, { tool, input });
      const record_id = `${id}:${callId}:call`;
      if (EDIT_TOOLS.has(tool)) {
        const s = summarizeEditTool(tool === "create" ? "create_file" : "edit", input);
        out.push(
          this.make(
            r,
            "code_change",
            { tool, tool_use_id: callId, input, diff_summary: s?.summary ?? tool, record_id, raw: req },
            s?.paths ?? inputPath(input),
          ),
        );
      } else
        out.push(
          this.make(r, "tool_call", { tool, tool_use_id: callId, input, record_id, raw: req }, inputPath(input)),
        );
    }
    return out;
  }

  private result(r: Rec, data: Rec): NormalizedEvent[] {
    const callId = asString(data.toolCallId) ?? "";
    const info = this.calls.get(callId) ?? this.opts.lookupToolUse?.(this.cwd, this.sessionId, callId);
    this.calls.delete(callId);
    const tool = info?.tool ?? "unknown";
    const input = info?.input;
    const result = asRecord(data.result);
    const error = asRecord(data.error);
    const output = asString(result?.content) ?? asString(error?.message) ?? asString(data.error) ?? "";
    const success = data.success !== false;
    const record_id = `${asString(r.id) ?? ""}:${callId}:result`;
    const raw = { toolCallId: callId, tool, success, result: result?.content, shellExecution: data.shellExecution };
    if (SHELL_TOOLS.has(tool)) {
      const command = asString(asRecord(input)?.command) ?? "";
      const exit = asRecord(data.shellExecution)?.exitCode;
      const exit_code = typeof exit === "number" ? exit : success ? 0 : null;
      const is_error = !success || (exit_code !== null && exit_code !== 0);
      const shell = shellEvent({ tool, tool_use_id: callId, command, exit_code, output, is_error, record_id, raw });
      return [this.make(r, shell.type, shell.content)];
    }
    if (!success)
      return [
        this.make(
          r,
          "error",
          { text: output || "tool failed", tool, tool_use_id: callId, is_error: true, record_id, raw },
          inputPath(input),
        ),
      ];
    return [
      this.make(
        r,
        "tool_result",
        { tool, tool_use_id: callId, output, is_error: false, record_id, raw },
        inputPath(input),
      ),
    ];
  }
}
