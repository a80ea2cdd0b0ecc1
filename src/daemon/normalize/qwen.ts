/**
 * Qwen Code chats (`~/.qwen/projects/<encoded cwd>/chats/<session>.jsonl`) → normalized events.
 *
 * Checked against the pinned `@qwen-code/qwen-code` 0.24.4: an append-only JSONL of self-contained
 * records `{uuid, parentUuid, sessionId, timestamp, type, cwd, message: {role, parts}}`, Gemini-style
 * parts. `user` (provenance `real_user`) carries the request; `assistant` carries text parts and
 * `functionCall` parts; `tool_result` carries `functionResponse` parts (`response.output|error`) and
 * `toolCallResult` (`status`, `resultDisplay`, shell `exitCode`); `system` records (telemetry,
 * attribution snapshots) are not events, except a `chat_compression` summary. Every record has its
 * cwd, so nothing waits: each line gives its events at once.
 */
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { inputPaths } from "./claude-code.ts";
import { summarizeEditTool } from "./diff-summary.ts";
import { GEMINI_EDIT_TOOLS, GEMINI_SHELL_TOOLS } from "./gemini.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr, type LineNormalizer, type NormalizerOptions, type ToolUseInfo } from "./types.ts";

type Rec = Record<string, unknown>;

function parts(r: Rec): Rec[] {
  const p = asRecord(r.message)?.parts;
  return Array.isArray(p) ? p.map(asRecord).filter((x): x is Rec => x !== undefined) : [];
}

/** The visible text of a record's parts (thoughts left out). */
function partsText(ps: Rec[]): string {
  return ps
    .filter((p) => p.thought !== true)
    .map((p) => asString(p.text) ?? "")
    .filter((t) => t.length > 0)
    .join("\n");
}

export class QwenNormalizer implements LineNormalizer {
  private readonly calls = new Map<string, ToolUseInfo>();

  constructor(private readonly opts: NormalizerOptions = {}) {}

  push(record: unknown, _lineStart: number): NormalizedEvent[] {
    const r = asRecord(record);
    if (!r) return [];
    const type = asString(r.type);
    if (type === "user") return this.user(r);
    if (type === "assistant") return this.assistant(r);
    if (type === "tool_result") return this.toolResults(r);
    if (type === "system" && asString(r.subtype) === "chat_compression") {
      const text = partsText(parts(r)) || asString(asRecord(r.systemPayload)?.summary) || "";
      return text.trim() ? [this.make(r, "session_summary", { text, record_id: asString(r.uuid), raw: r })] : [];
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
    if (r.isSidechain === true || typeof r.agentId === "string") content.sidechain = true;
    return {
      source_tool: "qwen_code",
      session_id: asString(r.sessionId) ?? null,
      timestamp: isoOr(r.timestamp, new Date(0).toISOString()),
      event_type: type,
      content,
      file_paths: filePaths,
      cwd: asString(r.cwd) ?? null,
    };
  }

  private user(r: Rec): NormalizedEvent[] {
    const provenance = asString(r.provenance);
    if (provenance !== undefined && provenance !== "real_user") return [];
    const text = partsText(parts(r));
    return text.trim() ? [this.make(r, "user_message", { text, record_id: asString(r.uuid), raw: r })] : [];
  }

  private assistant(r: Rec): NormalizedEvent[] {
    const uuid = asString(r.uuid) ?? "";
    const ps = parts(r);
    const out: NormalizedEvent[] = [];
    const text = partsText(ps);
    if (text.trim()) {
      const { usageMetadata: _u, ...raw } = r;
      out.push(this.make(r, "assistant_response", { text, record_id: uuid, raw }));
    }
    for (const p of ps) {
      const fc = asRecord(p.functionCall);
      if (!fc) continue;
      const callId = asString(fc.id) ?? "";
      const tool = asString(fc.name) ?? "unknown";
      const input = fc.args;
      this.calls.set(callId, { tool, input });
      const record_id = `${uuid}:${callId}:call`;
      if (GEMINI_EDIT_TOOLS.has(tool)) {
        const s = summarizeEditTool(tool, input);
        out.push(
          this.make(
            r,
            "code_change",
            { tool, tool_use_id: callId, input, diff_summary: s?.summary ?? tool, record_id, raw: fc },
            s?.paths ?? inputPaths(input),
          ),
        );
      } else
        out.push(
          this.make(r, "tool_call", { tool, tool_use_id: callId, input, record_id, raw: fc }, inputPaths(input)),
        );
    }
    return out;
  }

  private toolResults(r: Rec): NormalizedEvent[] {
    const uuid = asString(r.uuid) ?? "";
    const result = asRecord(r.toolCallResult);
    const out: NormalizedEvent[] = [];
    for (const p of parts(r)) {
      const fr = asRecord(p.functionResponse);
      if (!fr) continue;
      const callId = asString(fr.id) ?? asString(result?.callId) ?? "";
      const info =
        this.calls.get(callId) ??
        this.opts.lookupToolUse?.(asString(r.cwd) ?? null, asString(r.sessionId) ?? null, callId);
      const tool = info?.tool ?? asString(fr.name) ?? "unknown";
      const input = info?.input;
      const resp = asRecord(fr.response);
      const output = asString(resp?.output) ?? asString(resp?.error) ?? asString(resp?.content) ?? "";
      const status = asString(result?.status) ?? (resp?.error !== undefined ? "error" : "success");
      const record_id = `${uuid}:${callId}:result`;
      const display = asRecord(result?.resultDisplay);
      const raw = { id: callId, name: tool, status, response: resp };
      const paths = inputPaths(input);
      if (GEMINI_SHELL_TOOLS.has(tool)) {
        const command = asString(asRecord(input)?.command) ?? "";
        const m = /^Exit Code: (-?\d+)/m.exec(output);
        const exit_code =
          typeof display?.exitCode === "number" ? display.exitCode : m ? Number(m[1]) : status === "success" ? 0 : null;
        const is_error = status !== "success" || (exit_code !== null && exit_code !== 0);
        const shell = shellEvent({ tool, tool_use_id: callId, command, exit_code, output, is_error, record_id, raw });
        out.push(this.make(r, shell.type, shell.content));
      } else if (status !== "success")
        out.push(
          this.make(
            r,
            "error",
            { text: output || status, tool, tool_use_id: callId, is_error: true, record_id, raw },
            paths,
          ),
        );
      else
        out.push(
          this.make(r, "tool_result", { tool, tool_use_id: callId, output, is_error: false, record_id, raw }, paths),
        );
      this.calls.delete(callId);
    }
    return out;
  }
}
