/**
 * Helpers for the capture tests: isolated homes (SQRL_HOME, CLAUDE_CONFIG_DIR, CODEX_HOME,
 * GEMINI_HOME, QWEN_HOME) set on process.env and restored, a registered temp repo, fixtures copied with their
 * cwd rewritten to that repo, and SQLite reads of what landed.
 */
import { Database } from "bun:sqlite";
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { initProject } from "../../../src/cli/init-project.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import { SHARED_DIR, tempDir } from "../../helpers/sqrl.ts";

export const CAPTURE_FIXTURES = resolve(import.meta.dir, "../../fixtures/capture");
export const SHARED_TRANSCRIPTS = join(SHARED_DIR, "fixtures", "transcripts");

const ENV_KEYS = [
  "SQRL_HOME",
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "GEMINI_HOME",
  "QWEN_HOME",
  "SQRL_LOG_LEVEL",
] as const;

export interface CaptureHome {
  root: string;
  sqrlHome: string;
  claudeDir: string;
  codexDir: string;
  geminiDir: string;
  qwenDir: string;
  copilotDir: string;
  /** A registered project folder. */
  repo: string;
  /** Register another project folder. */
  addRepo(name: string): string;
  restore(): void;
}

/** Isolated homes on process.env (restore() puts the old values back and removes the temp dir). */
export function makeCaptureHome(config = ""): CaptureHome {
  const dir = tempDir("sqrl-capture-");
  const saved = new Map(ENV_KEYS.map((k) => [k, process.env[k]]));
  const home: CaptureHome = {
    root: dir.path,
    sqrlHome: join(dir.path, "sqrl"),
    claudeDir: join(dir.path, "claude"),
    codexDir: join(dir.path, "codex"),
    geminiDir: join(dir.path, "gemini"),
    qwenDir: join(dir.path, "qwen"),
    copilotDir: join(dir.path, "copilot"),
    repo: "",
    addRepo(name: string) {
      const repo = join(dir.path, name);
      mkdirSync(repo, { recursive: true });
      initProject(repo);
      return repo;
    },
    restore() {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      dir.cleanup();
    },
  };
  process.env.SQRL_HOME = home.sqrlHome;
  process.env.CLAUDE_CONFIG_DIR = home.claudeDir;
  process.env.CODEX_HOME = home.codexDir;
  process.env.GEMINI_HOME = home.geminiDir;
  process.env.QWEN_HOME = home.qwenDir;
  process.env.COPILOT_HOME = home.copilotDir;
  process.env.SQRL_LOG_LEVEL = "1";
  mkdirSync(home.sqrlHome, { recursive: true });
  if (config) writeFileSync(join(home.sqrlHome, "config.toml"), config);
  home.repo = home.addRepo("repo");
  return home;
}

export function sha256(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

/** Copy a fixture, rewriting the placeholder cwd `/REPO` (and `REPOHASH`) to a real folder. */
export function rewriteFixture(text: string, repo: string): string {
  return text.replaceAll("/REPO", repo).replaceAll("REPOHASH", sha256(repo));
}

export function installFixture(src: string, dest: string, repo: string): string {
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, rewriteFixture(readFileSync(src, "utf8"), repo));
  return dest;
}

/** Rewrite every `"cwd":"…"` of a real transcript (and Gemini's projectHash) to `repo`. */
export function retargetTranscript(text: string, repo: string): string {
  return text
    .replace(/"cwd":"[^"]*"/g, `"cwd":${JSON.stringify(repo)}`)
    .replace(/"cwd": "[^"]*"/g, `"cwd": ${JSON.stringify(repo)}`)
    .replace(/"projectHash":\s*"[0-9a-f]{64}"/g, `"projectHash":"${sha256(repo)}"`);
}

export interface StoredEvent {
  id: string;
  event_type: string;
  source_tool: string;
  session_id: string | null;
  timestamp: string;
  content: Record<string, unknown>;
  file_paths: string[];
  hash: string;
}

export function readEvents(repo: string): StoredEvent[] {
  const db = new Database(projectPaths.db(repo), { readonly: true });
  try {
    const rows = db.query(`SELECT * FROM events ORDER BY timestamp, id`).all() as Array<Record<string, string>>;
    return rows.map((r) => ({
      id: r.id!,
      event_type: r.event_type!,
      source_tool: r.source_tool!,
      session_id: r.session_id ?? null,
      timestamp: r.timestamp!,
      content: JSON.parse(r.content_json!) as Record<string, unknown>,
      file_paths: JSON.parse(r.file_paths!) as string[],
      hash: r.hash!,
    }));
  } finally {
    db.close();
  }
}

export function countByType(events: readonly { event_type: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.event_type] = (out[e.event_type] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Poll until `check` returns true (or fail after `timeoutMs`). */
export async function waitFor(check: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return;
    await Bun.sleep(25);
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A Claude Code transcript that stresses slice cuts: responses split over lines, results far from their tool_use, lines without cwd or timestamp, other projects, junk. */
export function adversarialTranscript(repo: string, seed: number): string {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const lines: string[] = [];
  const toolIds: string[] = [];
  let msg = 0;
  let t = Date.parse("2025-03-01T10:00:00.000Z");
  for (let i = 0; i < 400; i++) {
    const r = rnd();
    const base: Record<string, unknown> = { uuid: `u${i}`, sessionId: rnd() < 0.05 ? "s2" : "s1" };
    if (rnd() > 0.1) base.timestamp = new Date((t += Math.floor(rnd() * 100_000))).toISOString();
    if (rnd() > 0.15) base.cwd = rnd() < 0.1 ? "/elsewhere" : rnd() < 0.3 ? join(repo, "sub") : repo;
    if (r < 0.25) {
      const id = rnd() < 0.7 ? `msg_${msg++}` : `msg_${Math.max(0, msg - 1)}`;
      const content: unknown[] = [];
      if (rnd() < 0.7)
        content.push({ type: "text", text: `thinking ${i}${rnd() < 0.05 ? " password=hunter2222" : ""}` });
      if (rnd() < 0.5) {
        const tid = rnd() < 0.05 && toolIds.length > 0 ? toolIds[Math.floor(rnd() * toolIds.length)]! : `toolu_${i}`;
        toolIds.push(tid);
        const bash = rnd() < 0.5;
        content.push({
          type: "tool_use",
          id: tid,
          name: bash ? "Bash" : "Edit",
          input: bash
            ? { command: rnd() < 0.5 ? "bun test" : "ls -la" }
            : { file_path: join(repo, `f${i}.ts`), old_string: "a", new_string: "b" },
        });
      }
      lines.push(JSON.stringify({ ...base, type: "assistant", message: { id, role: "assistant", content } }));
    } else if (r < 0.5 && toolIds.length > 0) {
      const tid = rnd() < 0.6 ? toolIds[toolIds.length - 1]! : toolIds[Math.floor(rnd() * toolIds.length)]!;
      const tur = rnd() < 0.5 ? { stdout: `out ${i}`, stderr: "", interrupted: false } : undefined;
      lines.push(
        JSON.stringify({
          ...base,
          type: "user",
          message: {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: tid, content: `out ${i} 3 passed, 1 failed`, is_error: rnd() < 0.2 },
            ],
          },
          toolUseResult: tur,
        }),
      );
    } else if (r < 0.65)
      lines.push(JSON.stringify({ ...base, type: "user", message: { role: "user", content: `prompt ${i}` } }));
    else if (r < 0.72) lines.push(JSON.stringify({ type: "summary", summary: `summary ${i}`, leafUuid: `u${i}` }));
    else if (r < 0.78)
      lines.push(
        JSON.stringify({ ...base, type: "system", subtype: "api_error", level: "error", content: `boom ${i}` }),
      );
    else if (r < 0.85) lines.push(`not json ${i}`);
    else lines.push(JSON.stringify({ ...base, type: "progress", data: `p${i}` }));
  }
  return `${lines.join("\n")}\n`;
}

// ---- OpenCode's store ------------------------------------------------------------------------------

export type OpenCodeRows = Record<"session" | "message" | "part", Array<Record<string, string | number | null>>>;

/** The columns of OpenCode's session/message/part tables that sqrl reads (OpenCode 1.18 has more). */
const OPENCODE_SCHEMA = `
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);`;

export function insertOpenCodeRow(
  db: Database,
  table: keyof OpenCodeRows,
  row: Record<string, string | number | null>,
): void {
  const cols = Object.keys(row);
  db.query(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(
    ...cols.map((c) => row[c]!),
  );
}

/** An OpenCode store at `path` in WAL mode holding `rows`, its writer connection left open (the caller closes it). */
export function writeOpenCodeStore(path: string, rows: OpenCodeRows): Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(OPENCODE_SCHEMA);
  for (const t of ["session", "message", "part"] as const) for (const r of rows[t]) insertOpenCodeRow(db, t, r);
  return db;
}

/** Slices of `text` (a file's bytes) are consecutive, cover it from 0 to the end, and start at line starts. */
export function expectLineSlices(
  slices: ReadonlyArray<{ from: number; until: number | null }>,
  text: Uint8Array,
  atLeast: number,
): void {
  expect(slices.length).toBeGreaterThan(atLeast);
  expect(slices[0]!.from).toBe(0);
  expect(slices.at(-1)!.until).toBeNull();
  for (let i = 1; i < slices.length; i++) {
    expect(slices[i]!.from).toBe(slices[i - 1]!.until!);
    expect(slices[i]!.from).toBeGreaterThan(slices[i - 1]!.from);
    expect(text[slices[i]!.from - 1]).toBe(10); // a line start
  }
}
