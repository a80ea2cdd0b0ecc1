/**
 * The real home folder's sqrl-relevant paths, as a fingerprint: a test run must leave them byte-for-byte
 * as it found them. The preload (test/helpers/preload.ts) takes one before the first test and compares
 * after the last; `.ci/run` does the same around the whole `npm test`:
 *   bun test/helpers/real-home.ts snapshot <file>   # before
 *   bun test/helpers/real-home.ts compare <file>    # after: exit 1 naming what changed
 * Each file's size, mode, mtime and content hash is recorded (folders: their entries), so a write,
 * a new file, a removal or a chmod anywhere under these paths is a difference.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What sqrl (and the agent CLIs it drives in tests) could write under a home folder. */
export const WATCHED = [
  ".sqrl",
  ".claude.json",
  ".claude",
  ".codex",
  ".gemini",
  ".qwen",
  ".copilot",
  ".cursor",
  ".mcp.json",
  ".config/systemd/user",
  ".config/opencode",
  ".local/share/opencode",
  "Library/LaunchAgents",
] as const;

/** Stop walking after this many entries (a user's ~/.claude can hold years of transcripts). */
const MAX_ENTRIES = 200_000;
/** Hash files up to this size; larger ones are compared by size and mtime. */
const MAX_HASHED_BYTES = 4 * 1024 * 1024;

export type Fingerprint = Record<string, string>;

function describe(path: string, out: Fingerprint, rel: string): void {
  if (Object.keys(out).length >= MAX_ENTRIES) return;
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return; // absent: absent in the fingerprint too
  }
  const mode = (st.mode & 0o7777).toString(8);
  if (st.isDirectory()) {
    let names: string[] = [];
    try {
      names = readdirSync(path).sort();
    } catch {
      names = ["<unreadable>"];
    }
    out[rel] = `dir ${mode} ${names.length}`;
    for (const name of names) describe(join(path, name), out, `${rel}/${name}`);
  } else if (st.isFile()) {
    let hash = "-";
    if (st.size <= MAX_HASHED_BYTES) {
      try {
        hash = createHash("sha1").update(readFileSync(path)).digest("hex");
      } catch {
        hash = "<unreadable>";
      }
    }
    out[rel] = `file ${mode} ${st.size} ${Math.round(st.mtimeMs)} ${hash}`;
  } else {
    out[rel] = `${st.isSymbolicLink() ? "link" : "other"} ${mode} ${st.size} ${Math.round(st.mtimeMs)}`;
  }
}

/** The fingerprint of `home`'s watched paths. */
export function fingerprint(home: string): Fingerprint {
  const out: Fingerprint = {};
  for (const rel of WATCHED) describe(join(home, rel), out, `~/${rel}`);
  return out;
}

/** Human-readable differences between two fingerprints (empty when equal). */
export function differences(before: Fingerprint, after: Fingerprint, limit = 20): string[] {
  const lines: string[] = [];
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before)) lines.push(`added    ${k}`);
    else if (before[k] !== v) lines.push(`changed  ${k}`);
  }
  for (const k of Object.keys(before)) if (!(k in after)) lines.push(`removed  ${k}`);
  return lines.length > limit ? [...lines.slice(0, limit), `… and ${lines.length - limit} more`] : lines;
}

if (import.meta.main) {
  const [mode, file] = process.argv.slice(2);
  const home = process.env.HOME ?? "";
  if (!home || !file || (mode !== "snapshot" && mode !== "compare")) {
    process.stderr.write("usage: bun test/helpers/real-home.ts snapshot|compare <file>\n");
    process.exit(2);
  }
  if (mode === "snapshot") {
    writeFileSync(file, JSON.stringify(fingerprint(home)));
    process.stdout.write(`real home ${home}: fingerprint of ${WATCHED.join(", ")} taken\n`);
  } else {
    const diff = differences(JSON.parse(readFileSync(file, "utf8")) as Fingerprint, fingerprint(home));
    if (diff.length > 0) {
      process.stderr.write(`the test run changed the real home (${home}):\n${diff.map((l) => `  ${l}`).join("\n")}\n`);
      process.exit(1);
    }
    process.stdout.write(`real home ${home}: unchanged by the test run\n`);
  }
}
