/**
 * Short, human-readable summaries of file edits ("src/a.ts: -3 +5 lines"), for `code_change` events.
 */
import { asRecord, asString } from "./types.ts";

function lineCount(s: string | undefined): number {
  if (!s) return 0;
  const n = s.split("\n").length;
  return s.endsWith("\n") ? n - 1 : n;
}

function firstLine(s: string | undefined): string {
  const line =
    (s ?? "")
      .split("\n")
      .find((l) => l.trim().length > 0)
      ?.trim() ?? "";
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

export interface EditSummary {
  paths: string[];
  summary: string;
}

/** Claude Code / Gemini edit tools: Edit, MultiEdit, Write, NotebookEdit, replace, write_file, edit_file. */
export function summarizeEditTool(tool: string, input: unknown): EditSummary | undefined {
  const inp = asRecord(input);
  if (!inp) return undefined;
  const path =
    asString(inp.file_path) ??
    asString(inp.notebook_path) ??
    asString(inp.absolute_path) ??
    asString(inp.path) ??
    asString(inp.target_file);
  if (!path) return undefined;
  const name = tool.toLowerCase();
  if (name === "multiedit") {
    const edits = Array.isArray(inp.edits) ? inp.edits.map(asRecord).filter((e) => e !== undefined) : [];
    const minus = edits.reduce((a, e) => a + lineCount(asString(e.old_string)), 0);
    const plus = edits.reduce((a, e) => a + lineCount(asString(e.new_string)), 0);
    return { paths: [path], summary: `${path}: ${edits.length} edits, -${minus} +${plus} lines` };
  }
  if (name === "write" || name === "write_file" || name === "create_file") {
    const content = asString(inp.content) ?? asString(inp.file_text);
    return {
      paths: [path],
      summary: `${path}: wrote ${lineCount(content)} lines${content ? ` (${firstLine(content)})` : ""}`,
    };
  }
  if (name === "notebookedit") {
    const mode = asString(inp.edit_mode) ?? "replace";
    return { paths: [path], summary: `${path}: notebook cell ${mode}, ${lineCount(asString(inp.new_source))} lines` };
  }
  // Edit, replace, edit_file, str_replace…
  const oldS = asString(inp.old_string) ?? asString(inp.old_str);
  const newS = asString(inp.new_string) ?? asString(inp.new_str) ?? asString(inp.content);
  const all = inp.replace_all === true ? " (all occurrences)" : "";
  return {
    paths: [path],
    summary: `${path}: -${lineCount(oldS)} +${lineCount(newS)} lines${all}${newS ? ` (${firstLine(newS)})` : ""}`,
  };
}

/** Codex `apply_patch` envelopes: `*** Update File: x` / `*** Add File: y` / `*** Delete File: z`. */
export function summarizePatch(patch: string): EditSummary | undefined {
  const files: Array<{ op: string; path: string; plus: number; minus: number }> = [];
  let current: { op: string; path: string; plus: number; minus: number } | undefined;
  for (const line of patch.split("\n")) {
    const m = /^\*\*\* (Update|Add|Delete) File: (.+)$/.exec(line);
    if (m) {
      current = { op: m[1]!.toLowerCase(), path: m[2]!.trim(), plus: 0, minus: 0 };
      files.push(current);
      continue;
    }
    const moved = /^\*\*\* Move to: (.+)$/.exec(line);
    if (moved && current) {
      current.path = moved[1]!.trim();
      continue;
    }
    if (!current || line.startsWith("***")) continue;
    if (line.startsWith("+")) current.plus++;
    else if (line.startsWith("-")) current.minus++;
  }
  if (files.length === 0) return undefined;
  return {
    paths: [...new Set(files.map((f) => f.path))],
    summary: files.map((f) => `${f.path}: ${f.op} -${f.minus} +${f.plus} lines`).join("; "),
  };
}

/** Is a shell command an `apply_patch` heredoc (Codex)? Returns the patch text. */
export function patchFromShell(command: string): string | undefined {
  if (!/\bapply_?patch\b/.test(command)) return undefined;
  const start = command.indexOf("*** Begin Patch");
  if (start < 0) return undefined;
  const end = command.indexOf("*** End Patch", start);
  return command.slice(start, end < 0 ? undefined : end + "*** End Patch".length);
}
