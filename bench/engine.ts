/**
 * Engine throughput: episodes + offline extraction (events/s) on the real fixture transcripts
 * replicated to 100k events (each copy a new session a day later), sent as the daemon sends them:
 * everything stored first, then `processEvents` in batches of 200 in timestamp order.
 * `--quick`: 5k events; `bun run bench engine 20000`: another size.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ClaudeCodeNormalizer } from "../src/daemon/normalize/claude-code.ts";
import { CodexNormalizer } from "../src/daemon/normalize/codex.ts";
import { toEventRow } from "../src/daemon/ingest.ts";
import { processEvents } from "../src/engine/learn/process-events.ts";
import { StateDbLedger } from "../src/engine/llm/usage.ts";
import { loadConfig } from "../src/shared/config.ts";
import type { ConfigValues } from "../src/shared/config-keys.ts";
import type { EventDTO, NormalizedEvent } from "../src/shared/event.ts";
import { insertEvents } from "../src/sql/events.ts";
import { openDatabase, openProjectDb } from "../src/sql/open.ts";
import { fmt, summarize, table, type Bench } from "./report.ts";

const TRANSCRIPTS = resolve(import.meta.dir, "..", "..", "shared", "fixtures", "transcripts");
const USER = "bench@example.com";

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}

function transcriptRows(root: string): EventDTO[] {
  const rows: EventDTO[] = [];
  for (const kind of ["claude-code", "codex"] as const) {
    const dir = join(TRANSCRIPTS, kind);
    if (!existsSync(dir)) continue;
    for (const file of files(dir)) {
      const norm =
        kind === "claude-code" ? new ClaudeCodeNormalizer({ filePath: file }) : new CodexNormalizer({ filePath: file });
      const evs: NormalizedEvent[] = [];
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (!line.trim()) continue;
        try {
          evs.push(...norm.push(JSON.parse(line), 0));
        } catch {
          // malformed line: skipped like capture does
        }
      }
      evs.push(...norm.flush());
      const cwd = evs.find((e) => e.cwd)?.cwd;
      if (!cwd) continue;
      const move = (p: string) => (p === cwd ? root : p.startsWith(`${cwd}/`) ? root + p.slice(cwd.length) : p);
      for (const e of evs) rows.push(toEventRow({ ...e, cwd: root, file_paths: e.file_paths.map(move) }, root, USER));
    }
  }
  return rows;
}

function handFixtureRows(root: string): EventDTO[] {
  const dir = resolve(import.meta.dir, "..", "test", "fixtures", "engine");
  const rows: EventDTO[] = [];
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith(".jsonl"))
    .sort()) {
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .forEach((l, i) => {
        const { t, type, session, source, paths, ...content } = JSON.parse(l) as Record<string, unknown> & {
          t: number;
          type: EventDTO["event_type"];
        };
        const id = `evt_${f}_${i}`;
        rows.push({
          id,
          project_id: root,
          user_id: USER,
          source_tool: (source as string) ?? "claude_code",
          session_id: session === undefined ? f : (session as string | null),
          timestamp: new Date(Date.parse("2026-03-02T09:00:00Z") + t * 1000).toISOString(),
          event_type: type,
          content_json: JSON.stringify(content),
          file_paths: (paths as string[]) ?? [],
          hash: `h_${id}`,
          processed_at: null,
        });
      });
  }
  return rows;
}

/** Copies of the base events, each shifted by `k` days with its own session and event ids. */
function replicate(base: readonly EventDTO[], target: number): EventDTO[] {
  const out: EventDTO[] = [];
  for (let k = 0; out.length < target; k++) {
    const shift = k * 86_400_000;
    for (const e of base) {
      if (out.length >= target) break;
      out.push({
        ...e,
        id: `${e.id}_${k}`,
        hash: `${e.hash}_${k}`,
        session_id: e.session_id === null ? null : `${e.session_id}_${k}`,
        timestamp: new Date(Date.parse(e.timestamp) + shift).toISOString(),
      });
    }
  }
  return out.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.id < b.id ? -1 : 1));
}

export default (async (opts) => {
  const requested = Number(opts.args[0]);
  const target = Number.isInteger(requested) && requested > 0 ? requested : opts.quick ? 5_000 : 100_000;
  const tmp = mkdtempSync(join(tmpdir(), "sqrl-bench-engine-"));
  const root = join(tmp, "repo");
  try {
    const db = openProjectDb(root);
    const fromTranscripts = existsSync(TRANSCRIPTS);
    const base = fromTranscripts ? transcriptRows(root) : handFixtureRows(root);
    const events = replicate(base, target);
    insertEvents(db, events);
    const cfg = { ...loadConfig(join(tmp, "none.toml")), user_id: USER } as ConfigValues;
    const now = () => Date.parse("2030-01-01T00:00:00Z");
    const deps = {
      config: cfg,
      llm: null,
      now,
      ledger: new StateDbLedger(0, now, () => openDatabase(join(tmp, "state.db"), "state")),
      openUserDb: () => openDatabase(join(tmp, "user.db"), "user"),
    };
    const batchMs: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < events.length; i += 200) {
      const s = performance.now();
      await processEvents({ project_id: root, user_id: USER, events: events.slice(i, i + 200) }, deps);
      batchMs.push(performance.now() - s);
    }
    const total = (performance.now() - t0) / 1000;
    const episodes = (db.query("SELECT COUNT(*) AS n FROM episodes").get() as { n: number }).n;
    const extracted = (
      db.query("SELECT COUNT(*) AS n FROM episode_state WHERE extracted_at IS NOT NULL").get() as { n: number }
    ).n;
    const items = (db.query("SELECT COUNT(*) AS n FROM memory_items").get() as { n: number }).n;
    const valid = (db.query("SELECT COUNT(*) AS n FROM memory_items WHERE deleted = 0").get() as { n: number }).n;
    db.close();
    const b = summarize(batchMs);
    const rate = events.length / total;
    const markdown = [
      `Base: ${base.length} events from ${fromTranscripts ? "the fixture transcripts (../shared)" : "the hand-written fixtures"}, replicated to ${events.length} (new sessions a day apart), stored first, then processed in batches of 200 like the daemon sends them. Offline extractor, no LLM.`,
      "",
      table(
        [
          "events",
          "episodes",
          "extracted",
          "memory rows (valid)",
          "total s",
          "events/s",
          "batch p50 ms",
          "batch p95 ms",
        ],
        [
          [
            events.length,
            episodes,
            extracted,
            `${items} (${valid})`,
            fmt(total, 1),
            Math.round(rate),
            fmt(b.p50, 1),
            fmt(b.p95, 1),
          ],
        ],
      ),
    ].join("\n");
    return {
      title: "Engine: episodes + offline extraction",
      markdown,
      headline: [`${Math.round(rate)} events/s (${events.length} events, ${episodes} episodes)`],
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}) satisfies Bench;
