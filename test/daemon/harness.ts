/**
 * Helpers for the daemon tests: isolated homes, the compiled binary as a real process, waiting on
 * observable state (files, HTTP, SQLite rows), and Claude Code transcripts written the way Claude
 * Code writes them (one JSON record per line under $CLAUDE_CONFIG_DIR/projects/<slug>/).
 */
import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, runSqrl, SQRL_BIN, tempDir, type RunResult } from "../helpers/sqrl.ts";

export { SQRL_BIN, runSqrl };

export interface RuntimeJson {
  pid: number;
  host: string;
  port: number;
  token: string;
  started_at: string;
}

export interface DaemonHome {
  root: string;
  env: Record<string, string>;
  sqrlHome: string;
  claudeDir: string;
  sqrl(args: string[]): RunResult;
  /** Stop the daemon (graceful, then force) and kill any engine left behind; remove the temp dir. */
  cleanup(): Promise<void>;
}

/** A fresh isolated home; `config` is written to config.toml (e.g. short batch intervals). */
export function makeHome(config = "", extraEnv: Record<string, string> = {}): DaemonHome {
  const dir = tempDir("sqrl-daemon-");
  const env = isolatedEnv(dir.path, { SQRL_LOG_LEVEL: "4", ...extraEnv });
  const sqrlHome = env.SQRL_HOME!;
  mkdirSync(sqrlHome, { recursive: true });
  mkdirSync(env.HOME!, { recursive: true });
  if (config) writeFileSync(join(sqrlHome, "config.toml"), config);
  const home: DaemonHome = {
    root: dir.path,
    env,
    sqrlHome,
    claudeDir: env.CLAUDE_CONFIG_DIR!,
    sqrl: (args) => runSqrl(args, { env }),
    cleanup: async () => {
      const daemon = readRuntime(home, "daemon");
      runSqrl(["daemon", "stop", "--timeout", "10"], { env });
      for (const pid of [daemon?.pid, readRuntime(home, "engine")?.pid]) if (pid) killQuietly(pid, "SIGKILL");
      dir.cleanup();
    },
  };
  return home;
}

export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Alive and not a zombie (this container's pid 1 reaps orphans slowly). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return !existsSync("/proc/self");
  }
}

export function readRuntime(home: DaemonHome, kind: "daemon" | "engine"): RuntimeJson | undefined {
  const path = join(home.sqrlHome, kind === "daemon" ? "daemon.json" : "memory-service.json");
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as RuntimeJson;
  } catch {
    return undefined;
  }
}

/** Poll `probe` until it returns a truthy value; fail with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await Bun.sleep(everyMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`,
  );
}

/** `sqrl daemon start --json`, asserting it worked; returns daemon.json. */
export function startDaemon(home: DaemonHome): RuntimeJson {
  const res = home.sqrl(["daemon", "start", "--json", "--timeout", "30"]);
  if (res.code !== 0) throw new Error(`daemon start failed (${res.code}): ${res.stderr}${res.stdout}`);
  const info = readRuntime(home, "daemon");
  if (!info) throw new Error("daemon start succeeded but there is no daemon.json");
  return info;
}

/** A request to the daemon with its token (or with `headers` overriding). */
export async function daemonFetch(
  home: DaemonHome,
  path: string,
  init: RequestInit & { token?: string | null } = {},
): Promise<Response> {
  const info = readRuntime(home, "daemon");
  if (!info) throw new Error("no daemon.json");
  const headers = new Headers(init.headers);
  if (init.token !== null && !headers.has("authorization"))
    headers.set("authorization", `Bearer ${init.token ?? info.token}`);
  return fetch(`http://127.0.0.1:${info.port}${path}`, { ...init, headers });
}

export interface DaemonStatusJson {
  pid: number;
  port: number;
  uptime_s: number;
  projects: Array<{
    project_id: string;
    events: number;
    queue_depth: number;
    last_batch_at: string | null;
    last_error: string | null;
  }>;
  sources: Array<{ name: string; enabled: boolean; path: string; files: number }>;
  engine: { healthy: boolean; pid: number | null; port: number | null; restarts: number; last_error: string | null };
  last_error: string | null;
}

export async function daemonStatus(home: DaemonHome): Promise<DaemonStatusJson> {
  const res = await daemonFetch(home, "/status");
  if (!res.ok) throw new Error(`/status answered ${res.status}`);
  return (await res.json()) as DaemonStatusJson;
}

/** Make a project folder and `sqrl init` it. */
export function initProject(home: DaemonHome, name: string): string {
  const dir = join(home.root, "projects", name);
  mkdirSync(dir, { recursive: true });
  const res = home.sqrl(["init", dir, "--yes", "--no-git"]);
  if (res.code !== 0) throw new Error(`sqrl init failed: ${res.stderr}`);
  return dir;
}

export interface EventCounts {
  total: number;
  unprocessed: number;
}

/** Events in a project's data.db (read-only; 0/0 when it does not exist yet). */
export function projectEvents(projectDir: string): EventCounts {
  const path = join(projectDir, ".ctx", "data.db");
  if (!existsSync(path)) return { total: 0, unprocessed: 0 };
  const db = new Database(path, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db
      .query("SELECT COUNT(*) AS total, COALESCE(SUM(processed_at IS NULL), 0) AS unprocessed FROM events")
      .get() as EventCounts;
  } finally {
    db.close();
  }
}

/** Run a read-only query on a project's data.db. */
export function queryProject<T>(projectDir: string, sql: string, ...params: Array<string | number>): T[] {
  const db = new Database(join(projectDir, ".ctx", "data.db"), { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.query(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

// ---- Claude Code transcripts -------------------------------------------------------------------

/** Claude Code's folder name for a launch directory: every non-alphanumeric character becomes `-`. */
export function claudeSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

export function transcriptPath(home: DaemonHome, cwd: string, sessionId: string): string {
  const dir = join(home.claudeDir, "projects", claudeSlug(cwd));
  mkdirSync(dir, { recursive: true });
  return join(dir, `${sessionId}.jsonl`);
}

export interface GeneratedTurns {
  lines: string[];
  /** uuid of every record written. */
  uuids: string[];
  /** uuid of every user record that carries typed text (each must become a user_message). */
  userTextUuids: string[];
}

/**
 * `turns` turns of a Claude Code session in its on-disk shape: a user prompt, an assistant record
 * with text and a Bash tool_use, the user record with the tool_result, and the assistant's answer.
 */
export function claudeTurns(opts: {
  cwd: string;
  sessionId: string;
  turns: number;
  startMs?: number;
  tag?: string;
}): GeneratedTurns {
  const lines: string[] = [];
  const uuids: string[] = [];
  const userTextUuids: string[] = [];
  const tag = opts.tag ?? "t";
  let ts = opts.startMs ?? Date.parse("2026-03-02T09:00:00.000Z");
  let parent: string | null = null;
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: opts.cwd,
    sessionId: opts.sessionId,
    version: "2.1.38",
    gitBranch: "main",
  };
  const push = (rec: Record<string, unknown>) => {
    const uuid = `${tag}-${opts.sessionId.slice(0, 8)}-${String(uuids.length).padStart(7, "0")}`;
    lines.push(JSON.stringify({ parentUuid: parent, ...base, ...rec, uuid, timestamp: new Date(ts).toISOString() }));
    uuids.push(uuid);
    parent = uuid;
    ts += 1000;
    return uuid;
  };
  for (let i = 0; i < opts.turns; i++) {
    const toolId = `toolu_${tag}${opts.sessionId.slice(0, 6)}${String(i).padStart(7, "0")}`;
    userTextUuids.push(
      push({
        type: "user",
        message: {
          role: "user",
          content: `Turn ${i}: please run the tests for module m${i % 37} and fix what fails (${tag})`,
        },
      }),
    );
    push({
      type: "assistant",
      message: {
        id: `msg_${tag}${i}a`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [
          { type: "text", text: `Running the suite for m${i % 37} first.` },
          {
            type: "tool_use",
            id: toolId,
            name: "Bash",
            input: { command: `bun test test/m${i % 37}.test.ts`, description: "Run tests" },
          },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 100, output_tokens: 20 },
      },
    });
    push({
      type: "user",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: toolId,
            content: ` 3 pass\n 0 fail\nRan 3 tests across 1 file. [${i}ms]`,
            is_error: false,
          },
        ],
      },
      toolUseResult: { stdout: ` 3 pass\n 0 fail\nRan 3 tests across 1 file.`, stderr: "", interrupted: false },
    });
    push({
      type: "assistant",
      message: {
        id: `msg_${tag}${i}b`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: `All 3 tests of m${i % 37} pass now (turn ${i}).` }],
        stop_reason: "end_turn",
        usage: { input_tokens: 120, output_tokens: 15 },
      },
    });
  }
  return { lines, uuids, userTextUuids };
}

export function appendLines(path: string, lines: readonly string[]): void {
  if (lines.length > 0) appendFileSync(path, `${lines.join("\n")}\n`);
}
