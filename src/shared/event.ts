/**
 * The event contract: sources, types, content and the EventDTO row stored in data.db and sent to the engine.
 */
import { z } from "zod";

/** Where an event came from (`events.source_tool`). */
export const SOURCE_TOOLS = [
  "claude_code",
  "codex",
  "gemini_cli",
  "qwen_code",
  "opencode",
  "copilot_cli",
  "git",
] as const;
export type SourceTool = (typeof SOURCE_TOOLS)[number];

/**
 * Normalized event types (`events.event_type`). What each carries in `content_json`:
 * - user_message        text typed by the human (not tool results)
 * - assistant_response  text of one model response (the split lines of one message joined)
 * - tool_call           tool, tool_use_id, input — any tool use except edits (Bash too: its outcome is the command_run)
 * - code_change         tool, tool_use_id, input (cut), diff_summary; file_paths = edited files
 * - tool_result         tool, tool_use_id, output (cut), is_error — results of non-shell tools
 * - command_run         command, exit_code, output (cut), is_error — a shell command's outcome
 * - test_run            as command_run plus runner, passed, failed (counts when readable)
 * - error               text, tool?, tool_use_id? — a failed non-shell tool or an API/system error
 * - git_commit          commit {hash, author, message, files, insertions, deletions}
 * - session_summary     text — compaction summaries and old `summary` records
 */
export const EVENT_TYPES = [
  "user_message",
  "assistant_response",
  "tool_call",
  "tool_result",
  "code_change",
  "command_run",
  "test_run",
  "error",
  "git_commit",
  "session_summary",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The normalized fields of `content_json`; `raw` is the source record (redacted, large outputs cut). */
export const EventContent = z
  .object({
    text: z.string().optional(),
    tool: z.string().optional(),
    tool_use_id: z.string().optional(),
    input: z.unknown().optional(),
    output: z.string().optional(),
    is_error: z.boolean().optional(),
    command: z.string().optional(),
    exit_code: z.number().int().nullable().optional(),
    runner: z.string().optional(),
    passed: z.number().int().nonnegative().optional(),
    failed: z.number().int().nonnegative().optional(),
    diff_summary: z.string().optional(),
    commit: z
      .object({
        hash: z.string(),
        author: z.string(),
        message: z.string(),
        files: z.array(z.string()),
        insertions: z.number().int().nonnegative(),
        deletions: z.number().int().nonnegative(),
      })
      .optional(),
    /** The record's own id in its source (Claude `uuid`, message id…), part of the dedup struct. */
    record_id: z.string().optional(),
    /** Set on subagent/sidechain records. */
    sidechain: z.boolean().optional(),
    raw: z.unknown().optional(),
  })
  .loose();
export type EventContent = z.infer<typeof EventContent>;

/** One row of `events`, as stored and as sent to the engine in `POST /process_events`. */
export const EventDTO = z.object({
  id: z.string().min(1),
  project_id: z.string().min(1),
  user_id: z.string().min(1),
  source_tool: z.string().min(1),
  session_id: z.string().nullable(),
  timestamp: z.string().min(1),
  event_type: z.enum(EVENT_TYPES),
  content_json: z.string(),
  file_paths: z.array(z.string()),
  hash: z.string().min(1),
  processed_at: z.string().nullable(),
});
export type EventDTO = z.infer<typeof EventDTO>;

/** An event as produced by a normalizer, before ids, hash and project are assigned. */
export interface NormalizedEvent {
  source_tool: SourceTool;
  session_id: string | null;
  timestamp: string;
  event_type: EventType;
  content: EventContent;
  /** Repo-relative where the project is known; absolute paths are made relative at ingest. */
  file_paths: string[];
  /** Working directory of the record: decides the project. */
  cwd: string | null;
}
