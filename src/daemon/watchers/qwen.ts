/** Qwen Code: `$QWEN_HOME/projects/<encoded cwd>/chats/<session>.jsonl` (each record carries its cwd). */
import { join, sep } from "node:path";
import { qwenHome } from "../../shared/paths.ts";
import { QwenNormalizer } from "../normalize/qwen.ts";
import type { TranscriptSource } from "./transcript-source.ts";

export const qwenSource: TranscriptSource = {
  name: "qwen",
  enabledKey: "watch.qwen",
  root: () => join(qwenHome(), "projects"),
  matches: (path) => path.endsWith(".jsonl") && path.split(sep).at(-2) === "chats",
  isDocument: () => false,
  createNormalizer: (path, deps) => new QwenNormalizer({ filePath: path, lookupToolUse: deps.lookupToolUse }),
};
