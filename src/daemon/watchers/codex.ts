import { basename, join } from "node:path";
import { codexHome } from "../../shared/paths.ts";
import { CodexNormalizer } from "../normalize/codex.ts";
import type { TranscriptSource } from "./transcript-source.ts";

/** Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`. */
export const codexSource: TranscriptSource = {
  name: "codex",
  enabledKey: "watch.codex",
  root: () => join(codexHome(), "sessions"),
  matches: (path) => /^rollout-.*\.jsonl$/.test(basename(path)),
  isDocument: () => false,
  createNormalizer: (path, deps) => new CodexNormalizer({ filePath: path, lookupToolUse: deps.lookupToolUse }),
};
