/**
 * GitHub Copilot CLI: `$COPILOT_HOME/session-state/<session>/events.jsonl`. Only `session.start`
 * names the cwd; a read resumed mid-file takes it from the folder's `workspace.yaml` (`cwd: …`).
 */
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { copilotHome } from "../../shared/paths.ts";
import { CopilotNormalizer } from "../normalize/copilot.ts";
import type { TranscriptSource } from "./transcript-source.ts";

/** The `cwd:` of a session folder's workspace.yaml (a flat YAML map), or null. */
export function workspaceCwd(eventsPath: string): string | null {
  try {
    const text = readFileSync(join(dirname(eventsPath), "workspace.yaml"), "utf8");
    const m = /^cwd:\s*(.+?)\s*$/m.exec(text);
    if (!m) return null;
    const v = m[1]!.replace(/^(['"])(.*)\1$/, "$2");
    return v ? resolve(v) : null;
  } catch {
    return null;
  }
}

export const copilotSource: TranscriptSource = {
  name: "copilot",
  enabledKey: "watch.copilot",
  root: () => join(copilotHome(), "session-state"),
  matches: (path) => basename(path) === "events.jsonl",
  isDocument: () => false,
  createNormalizer: (path, deps) =>
    new CopilotNormalizer({ filePath: path, lookupToolUse: deps.lookupToolUse, resolveCwd: () => workspaceCwd(path) }),
};
