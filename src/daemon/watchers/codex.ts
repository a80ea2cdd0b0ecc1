/**
 * Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, and `rollout-*.jsonl.zst` once Codex
 * has compressed a rollout idle for a week (read whole, like a document).
 */
import { basename, join } from "node:path";
import { codexHome } from "../../shared/paths.ts";
import { CodexNormalizer } from "../normalize/codex.ts";
import { isZstd } from "../tail.ts";
import type { TranscriptSource } from "./transcript-source.ts";

export const codexSource: TranscriptSource = {
  name: "codex",
  enabledKey: "watch.codex",
  root: () => join(codexHome(), "sessions"),
  matches: (path) => /^rollout-.*\.jsonl(\.zst)?$/.test(basename(path)),
  isDocument: (path) => isZstd(path),
  createNormalizer: (path, deps) => new CodexNormalizer({ filePath: path, lookupToolUse: deps.lookupToolUse }),
};
