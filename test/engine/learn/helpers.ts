import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ClaudeCodeNormalizer } from "../../../src/daemon/normalize/claude-code.ts";
import { CodexNormalizer } from "../../../src/daemon/normalize/codex.ts";
import type { LineNormalizer } from "../../../src/daemon/normalize/types.ts";
import { toEventRow } from "../../../src/daemon/ingest.ts";
import { loadConfig } from "../../../src/shared/config.ts";
import type { ConfigValues } from "../../../src/shared/config-keys.ts";
import type { EventContent, EventDTO, EventType, NormalizedEvent } from "../../../src/shared/event.ts";
import { StateDbLedger } from "../../../src/engine/llm/usage.ts";
import type { EngineDeps } from "../../../src/engine/learn/process-events.ts";
import type { RuleInput } from "../../../src/engine/learn/extract/candidate.ts";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { insertEvents } from "../../../src/sql/events.ts";
import { openDatabase, openProjectDb } from "../../../src/sql/open.ts";
import { SHARED_DIR, tempDir } from "../../helpers/sqrl.ts";

export const TRANSCRIPTS = join(SHARED_DIR, "fixtures", "transcripts");
export const ENGINE_FIXTURES = join(import.meta.dir, "..", "..", "fixtures", "engine");
export const USER = "dev@example.com";

/** A temp project (repo root with .ctx/data.db) plus private user.db and state.db files. */
export interface Sandbox {
  root: string;
  home: string;
  db: Database;
  deps(extra?: Partial<EngineDeps>): Partial<EngineDeps>;
  userDb(): Database;
  stateDb(): Database;
  cleanup(): void;
}

export function sandbox(config: Partial<ConfigValues> = {}): Sandbox {
  const t = tempDir("sqrl-engine-");
  const root = join(t.path, "repo");
  const home = join(t.path, "home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  const db = openProjectDb(root);
  const cfg = { ...loadConfig(join(home, "absent.toml")), user_id: USER, ...config } as ConfigValues;
  const userDb = () => openDatabase(join(home, "user.db"), "user");
  const stateDb = () => openDatabase(join(home, "state.db"), "state");
  return {
    root,
    home,
    db,
    userDb,
    stateDb,
    deps: (extra = {}) => ({
      config: cfg,
      llm: null,
      openUserDb: userDb,
      ledger: new StateDbLedger(
        cfg["llm.daily_token_cap"],
        extra.now ?? (() => Date.parse("2026-06-01T00:00:00Z")),
        stateDb,
      ),
      now: () => Date.parse("2026-06-01T00:00:00Z"),
      ...extra,
    }),
    cleanup: () => {
      db.close();
      t.cleanup();
    },
  };
}

// ---- hand-written fixtures ---------------------------------------------------------------------

/** One hand-written event: its type, where and when, and the rest is its content. */
export interface EventLine extends EventContent {
  /** Seconds after the base time (default: 20 s per line). */
  t?: number;
  type: EventType;
  session?: string | null;
  source?: string;
  paths?: string[];
}

const BASE = Date.parse("2026-03-02T09:00:00Z");

/** A stored event row for `line`, at `ms`, in `session` unless the line names its own. */
export function eventRow(root: string, id: string, line: EventLine, ms: number, session: string | null): EventDTO {
  const { t: _t, type, session: own, source, paths, ...content } = line;
  return {
    id,
    project_id: root,
    user_id: USER,
    source_tool: source ?? "claude_code",
    session_id: own === undefined ? session : own,
    timestamp: new Date(ms).toISOString(),
    event_type: type,
    content_json: JSON.stringify(content),
    file_paths: paths ?? [],
    hash: `h_${id}`,
    processed_at: null,
  };
}

/** An applied Edit of `file` (the change itself does not matter to the rules that read it). */
export const editLine = (file: string): EventLine => ({
  type: "code_change",
  tool: "Edit",
  input: { file_path: file, old_string: "a", new_string: "b" },
  paths: [file],
});

let rowSeq = 0;
/** Rows for hand-written lines, 20 s apart from `baseMs` (or at their own `t`), ids unique per run. */
export function eventRows(
  root: string,
  lines: readonly EventLine[],
  opts: { baseMs?: number; session?: string } = {},
): EventDTO[] {
  const base = opts.baseMs ?? BASE;
  return lines.map((l, i) =>
    eventRow(root, `evt_h${++rowSeq}`, l, base + (l.t ?? i * 20) * 1000, opts.session ?? "s1"),
  );
}

/** Events of a hand-written fixture (`test/fixtures/engine/<name>.jsonl`), ids stable per line. */
export function fixtureEvents(
  name: string,
  root: string,
  opts: { baseMs?: number; sessionPrefix?: string } = {},
): EventDTO[] {
  const lines = readFileSync(join(ENGINE_FIXTURES, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("//"));
  const base = opts.baseMs ?? BASE;
  return lines.map((l, i) => {
    const line = JSON.parse(l) as EventLine;
    const id = `evt_${name}_${String(i).padStart(3, "0")}${opts.sessionPrefix ?? ""}`;
    return eventRow(root, id, line, base + (line.t ?? 0) * 1000, `${opts.sessionPrefix ?? ""}${name}`);
  });
}

// ---- real transcripts through the real normalizers ---------------------------------------------

function normalizerFor(kind: "claude" | "codex", file: string): LineNormalizer {
  return kind === "claude" ? new ClaudeCodeNormalizer({ filePath: file }) : new CodexNormalizer({ filePath: file });
}

function rewritePath(p: string, from: string, to: string): string {
  return p === from ? to : p.startsWith(`${from}/`) ? `${to}${p.slice(from.length)}` : p;
}

/**
 * A real transcript as stored events of a temp repo: parsed by the capture normalizer, the recorded
 * cwd (and paths under it) rewritten to `root`, then the ingest row builder (redaction, repo-relative
 * paths, dedup hash) — exactly what the daemon would store.
 */
export function transcriptEvents(relPath: string, kind: "claude" | "codex", root: string): EventDTO[] {
  const file = join(TRANSCRIPTS, relPath);
  const norm = normalizerFor(kind, file);
  const out: NormalizedEvent[] = [];
  let offset = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const start = offset;
    offset += Buffer.byteLength(line) + 1;
    if (!line.trim()) continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    out.push(...norm.push(rec, start));
  }
  out.push(...(norm.afterBatch?.() ?? []), ...norm.flush());
  const cwd = out.find((e) => e.cwd)?.cwd ?? "/";
  return out
    .filter((e) => e.cwd !== null)
    .map((e) => {
      const moved: NormalizedEvent = {
        ...e,
        cwd: rewritePath(e.cwd!, cwd, root),
        file_paths: e.file_paths.map((p) => rewritePath(p, cwd, root)),
      };
      return toEventRow(moved, root, USER);
    });
}

/** The packmind project's sessions under ../shared (train and holdout), and whether they are there. */
export const PACKMIND_DIR = join(TRANSCRIPTS, "claude-code", "packmindhub-context-evaluator");
export const HAVE_PACKMIND = existsSync(PACKMIND_DIR);

/** A rule's input for one packmind session (`rel` like "7e/b9199a878a/0"), as the engine would see it. */
export function packmindInput(rel: string, root: string): RuleInput {
  const events = transcriptEvents(`claude-code/packmindhub-context-evaluator/${rel}/full.jsonl`, "claude", root);
  return ruleInput(`ep_${rel}`, root, events);
}

/** Store events like the daemon does before it sends them (so segmentation sees pending ones). */
export function store(db: Database, events: readonly EventDTO[]): void {
  insertEvents(db, events);
}

export function request(root: string, events: readonly EventDTO[]) {
  return { project_id: root, user_id: USER, events: [...events] };
}

export function transcriptName(relPath: string): string {
  return basename(relPath);
}
