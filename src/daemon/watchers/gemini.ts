/** Gemini CLI: where its chats live, how a chat file is found and read as a document (both of its formats). */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { geminiHome } from "../../shared/paths.ts";
import { isWithin } from "../../shared/projects.ts";
import { GeminiNormalizer } from "../normalize/gemini.ts";
import { asRecord, asString } from "../normalize/types.ts";
import type { TranscriptSource } from "./transcript-source.ts";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** `<gemini>/tmp/<project-id>` for a chat file under it, else undefined. */
function projectTempDir(filePath: string): string | undefined {
  const tmp = join(geminiHome(), "tmp");
  if (!isWithin(filePath, tmp)) return undefined;
  const id = filePath.slice(tmp.length + 1).split(sep)[0];
  return id ? join(tmp, id) : undefined;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * The project folder of a Gemini chat. Gemini records carry no cwd; in order:
 * `<tmp>/<id>/.project_root` (v0.29+ marker), `~/.gemini/projects.json` (path → slug),
 * `projectHash` or the folder id = sha256 of a registered root (≤ v0.28), `directories[0]`.
 */
export function resolveGeminiCwd(
  filePath: string,
  meta: Record<string, unknown>,
  projects: readonly string[],
): string | null {
  const tempDir = projectTempDir(filePath);
  const id = tempDir ? tempDir.split(sep).at(-1) : undefined;
  if (tempDir) {
    const marker = join(tempDir, ".project_root");
    if (existsSync(marker)) {
      try {
        const owner = readFileSync(marker, "utf8").trim();
        if (owner) return resolve(owner);
      } catch {
        // unreadable marker: try the other ways
      }
    }
    const registry = asRecord(asRecord(readJson(join(geminiHome(), "projects.json")))?.projects);
    if (registry && id) for (const [path, slug] of Object.entries(registry)) if (slug === id) return resolve(path);
  }
  const hashes = new Set([asString(meta.projectHash), id].filter((x): x is string => typeof x === "string"));
  for (const root of projects) if (hashes.has(sha256(root))) return root;
  const dirs = Array.isArray(meta.directories) ? meta.directories : [];
  const first = dirs.find((d): d is string => typeof d === "string");
  return first ? resolve(first) : null;
}

/** Gemini CLI: `~/.gemini/tmp/<project-id>/chats/session-*.json` (rewritten) or `.jsonl` (appended). */
export const geminiSource: TranscriptSource = {
  name: "gemini",
  enabledKey: "watch.gemini",
  root: () => join(geminiHome(), "tmp"),
  matches: (path) => /\.jsonl?$/.test(path) && path.split(sep).includes("chats"),
  isDocument: (path) => path.endsWith(".json"),
  createNormalizer: (path, deps) =>
    new GeminiNormalizer({ filePath: path, resolveCwd: (meta) => resolveGeminiCwd(path, meta, deps.projects()) }),
};
