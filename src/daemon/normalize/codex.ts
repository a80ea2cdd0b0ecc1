/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, lines `{timestamp, type, payload}`)
 * → normalized events.
 *
 * Codex writes user and assistant text twice: as `response_item` messages (with injected
 * environment context and developer prompts) and as `event_msg` user_message / agent_message.
 * We take the cleaner `event_msg` stream for text and the `response_item` stream for tool calls
 * (function_call / custom_tool_call / local_shell_call and their outputs), which only it carries.
 * `session_meta` and `turn_context` give the cwd; `compacted` records are session summaries.
 */
import { basename } from "node:path";
import type { EventContent, EventType, NormalizedEvent } from "../../shared/event.ts";
import { patchFromShell, summarizePatch } from "./diff-summary.ts";
import { shellEvent } from "./test-runner.ts";
import { asRecord, asString, isoOr, type LineNormalizer, type NormalizerOptions, type ToolUseInfo } from "./types.ts";

const SHELL_NAMES = new Set([
  "shell",
  "container.exec",
  "exec_command",
  "local_shell",
  "shell_command",
  "unified_exec",
]);

interface CallInfo extends ToolUseInfo {
  kind: "shell" | "patch" | "other";
  command?: string;
}

/** The command line of a shell call's arguments: `["bash","-lc","script"]` → `script`. */
export function shellCommand(input: unknown): string | undefined {
  const inp = asRecord(input);
  const cmd = inp?.command ?? inp?.cmd ?? asRecord(inp?.action)?.command;
  if (typeof cmd === "string") return cmd;
  if (Array.isArray(cmd) && cmd.every((x) => typeof x === "string")) {
    const words = cmd as string[];
    if (words.length >= 3 && /(^|\/)(ba|z|da)?sh$/.test(words[0]!) && /^-l?c$|^-lc$/.test(words[1]!))
      return words.slice(2).join(" ");
    return words.join(" ");
  }
  return undefined;
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Output text and exit code of a call output (JSON `{output, metadata:{exit_code}}` or plain text). */
export function parseCallOutput(output: unknown): { text: string; exitCode: number | null } {
  let text = "";
  let exitCode: number | null = null;
  const obj = asRecord(typeof output === "string" && output.trimStart().startsWith("{") ? parseJson(output) : output);
  if (obj) {
    text = asString(obj.output) ?? asString(obj.content) ?? JSON.stringify(obj);
    const code = asRecord(obj.metadata)?.exit_code ?? obj.exit_code;
    if (typeof code === "number") exitCode = code;
  } else if (typeof output === "string") {
    text = output;
  } else if (Array.isArray(output)) {
    text = output.map((x) => asString(asRecord(x)?.text) ?? "").join("\n");
  }
  if (exitCode === null) {
    const m = /^(?:Exit code|Process exited with code):?\s*(-?\d+)/m.exec(text);
    if (m) exitCode = Number(m[1]);
  }
  return { text, exitCode };
}

export class CodexNormalizer implements LineNormalizer {
  private cwd: string | null = null;
  private sessionId: string | null;
  private lastTimestamp = "";
  private readonly calls = new Map<string, CallInfo>();

  constructor(private readonly opts: NormalizerOptions = {}) {
    const m = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$/i.exec(
      basename(opts.filePath ?? ""),
    );
    this.sessionId = m ? m[1]! : null;
  }

  push(record: unknown, _lineStart: number): NormalizedEvent[] {
    const r = asRecord(record);
    if (!r) return [];
    const p = asRecord(r.payload) ?? {};
    this.lastTimestamp = isoOr(r.timestamp, this.lastTimestamp);
    const type = asString(r.type) ?? "";
    if (type === "session_meta") {
      this.cwd = asString(p.cwd) ?? this.cwd;
      this.sessionId = asString(p.id) ?? this.sessionId;
      return [];
    }
    if (type === "turn_context") {
      this.cwd = asString(p.cwd) ?? this.cwd;
      return [];
    }
    if (type === "event_msg") return this.eventMsg(r, p);
    if (type === "response_item") return this.responseItem(r, p);
    if (type === "compacted") {
      const text = asString(p.message);
      return text?.trim()
        ? [this.make(r, "session_summary", { text, record_id: `compacted:${this.lastTimestamp}`, raw: r })]
        : [];
    }
    return [];
  }

  flush(): NormalizedEvent[] {
    return [];
  }

  heldFrom(): number | null {
    return null;
  }

  private make(
    r: Record<string, unknown>,
    type: EventType,
    content: EventContent,
    filePaths: string[] = [],
  ): NormalizedEvent {
    return {
      source_tool: "codex",
      session_id: this.sessionId,
      timestamp: this.lastTimestamp || isoOr(r.timestamp, new Date(0).toISOString()),
      event_type: type,
      content,
      file_paths: filePaths,
      cwd: this.cwd,
    };
  }

  private eventMsg(r: Record<string, unknown>, p: Record<string, unknown>): NormalizedEvent[] {
    const kind = asString(p.type);
    const text = asString(p.message) ?? "";
    const record_id = `${kind}:${asString(r.timestamp) ?? ""}`;
    if (kind === "user_message" && text.trim()) return [this.make(r, "user_message", { text, record_id, raw: r })];
    if (kind === "agent_message" && text.trim())
      return [this.make(r, "assistant_response", { text, record_id, raw: r })];
    if ((kind === "error" || kind === "stream_error") && text.trim())
      return [this.make(r, "error", { text, is_error: true, record_id, raw: r })];
    return [];
  }

  private responseItem(r: Record<string, unknown>, p: Record<string, unknown>): NormalizedEvent[] {
    const kind = asString(p.type) ?? "";
    const callId = asString(p.call_id) ?? asString(p.id) ?? "";
    if (kind === "function_call" || kind === "custom_tool_call" || kind === "local_shell_call") {
      const name = asString(p.name) ?? (kind === "local_shell_call" ? "local_shell" : "unknown");
      const rawArgs = kind === "custom_tool_call" ? p.input : (p.arguments ?? p.action);
      const input =
        typeof rawArgs === "string" && kind !== "custom_tool_call" ? (parseJson(rawArgs) ?? rawArgs) : rawArgs;
      return [this.call(r, callId, name, input, kind === "local_shell_call" ? { action: p.action } : input)];
    }
    if (kind === "function_call_output" || kind === "custom_tool_call_output" || kind === "local_shell_call_output") {
      return [this.output(r, callId, p.output)];
    }
    return [];
  }

  private call(
    r: Record<string, unknown>,
    callId: string,
    name: string,
    input: unknown,
    shellInput: unknown,
  ): NormalizedEvent {
    const record_id = `call:${callId}`;
    const patchText =
      name === "apply_patch"
        ? typeof input === "string"
          ? input
          : (asString(asRecord(input)?.input) ?? asString(asRecord(input)?.patch))
        : undefined;
    const command = SHELL_NAMES.has(name) ? shellCommand(shellInput) : undefined;
    const patch = patchText ?? (command ? patchFromShell(command) : undefined);
    if (patch) {
      const s = summarizePatch(patch);
      this.calls.set(callId, { tool: "apply_patch", input: { patch }, kind: "patch" });
      return this.make(
        r,
        "code_change",
        {
          tool: "apply_patch",
          tool_use_id: callId,
          input: { patch },
          diff_summary: s?.summary ?? "apply_patch",
          record_id,
          raw: r,
        },
        s?.paths ?? [],
      );
    }
    if (command !== undefined) {
      this.calls.set(callId, { tool: name, input, kind: "shell", command });
      return this.make(r, "tool_call", { tool: name, tool_use_id: callId, input, command, record_id, raw: r });
    }
    this.calls.set(callId, { tool: name, input, kind: "other" });
    return this.make(r, "tool_call", { tool: name, tool_use_id: callId, input, record_id, raw: r });
  }

  private output(r: Record<string, unknown>, callId: string, output: unknown): NormalizedEvent {
    const record_id = `out:${callId}`;
    let info = this.calls.get(callId);
    if (!info) {
      const found = this.opts.lookupToolUse?.(this.cwd, this.sessionId, callId);
      if (found) {
        const command = asString(asRecord(found.input)?.command) ?? shellCommand(found.input);
        info = {
          ...found,
          kind: found.tool === "apply_patch" ? "patch" : SHELL_NAMES.has(found.tool) ? "shell" : "other",
          command,
        };
      }
    }
    const { text, exitCode } = parseCallOutput(output);
    const tool = info?.tool ?? "unknown";
    if (info?.kind === "shell") {
      const command = info.command ?? "";
      const isError = exitCode !== 0;
      const shell = shellEvent({
        tool,
        tool_use_id: callId,
        command,
        exit_code: exitCode,
        output: text,
        is_error: isError,
        record_id,
        raw: r,
      });
      return this.make(r, shell.type, shell.content);
    }
    const isError =
      (exitCode !== null && exitCode !== 0) || /^(error|failed|apply_patch verification failed)/i.test(text.trim());
    if (isError) return this.make(r, "error", { text, tool, tool_use_id: callId, is_error: true, record_id, raw: r });
    return this.make(r, "tool_result", { tool, tool_use_id: callId, output: text, is_error: false, record_id, raw: r });
  }
}
