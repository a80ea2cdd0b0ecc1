/** Claude Code: `$CLAUDE_CONFIG_DIR/projects/<slug>/<session>.jsonl` and `<session>/subagents/agent-*.jsonl`. */
import { join } from "node:path";
import { claudeHome } from "../../shared/paths.ts";
import { ClaudeCodeNormalizer } from "../normalize/claude-code.ts";
import type { TranscriptSource } from "./transcript-source.ts";

export const claudeSource: TranscriptSource = {
  name: "claude",
  enabledKey: "watch.claude",
  root: () => join(claudeHome(), "projects"),
  matches: (path) => path.endsWith(".jsonl"),
  isDocument: () => false,
  createNormalizer: (path, deps) => new ClaudeCodeNormalizer({ filePath: path, lookupToolUse: deps.lookupToolUse }),
};
