/**
 * Appended line → stored event latency under the running watcher. Runs the CaptureService
 * in-process against temp homes (CLAUDE_CONFIG_DIR, QWEN_HOME, SQRL_HOME) with the daemon's default sweep
 * interval, appends user records to a live store of each source (Claude Code, Qwen Code and Copilot CLI transcripts, OpenCode's SQLite) and times each line from the
 * append to the commit of its event (the service's onEvents callback, after the transaction).
 * Two patterns: single lines spaced apart, and bursts of lines 1 ms apart (where Bun's watcher
 * may stay silent after the last write).
 */
import { Database } from "bun:sqlite";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { initProject } from "../src/cli/init-project.ts";
import { CaptureService } from "../src/daemon/capture-service.ts";
import { fmt, summarize, table, type Bench, type BenchReport } from "./report.ts";

const ENV_KEYS = [
  "SQRL_HOME",
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "GEMINI_HOME",
  "QWEN_HOME",
  "COPILOT_HOME",
  "XDG_DATA_HOME",
  "SQRL_LOG_LEVEL",
] as const;

export default (async (opts) => {
  const work = join(tmpdir(), `sqrl-bench-watch-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  const saved = new Map(ENV_KEYS.map((k) => [k, process.env[k]]));
  process.env.SQRL_HOME = join(work, "sqrl");
  process.env.CLAUDE_CONFIG_DIR = join(work, "claude");
  process.env.CODEX_HOME = join(work, "codex");
  process.env.GEMINI_HOME = join(work, "gemini");
  process.env.QWEN_HOME = join(work, "qwen");
  process.env.COPILOT_HOME = join(work, "copilot");
  process.env.XDG_DATA_HOME = join(work, "xdg-data");
  process.env.SQRL_LOG_LEVEL = "1";
  mkdirSync(join(work, "sqrl"), { recursive: true });
  writeFileSync(join(work, "sqrl", "config.toml"), "[watch]\ngit = false\n");
  const repo = join(work, "repo");
  mkdirSync(repo, { recursive: true });
  initProject(repo);
  const pending: number[] = [];
  let current: number[] = [];
  const service = new CaptureService({
    onEvents: (_p, added) => {
      const now = performance.now();
      for (let i = 0; i < added; i++) {
        const t = pending.shift();
        if (t !== undefined) current.push(now - t);
      }
    },
  });
  /** A transcript file a source appends lines to. */
  const fileSource = (name: string, file: string, line: (n: number) => string) => ({
    name,
    setup: () => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, "");
    },
    append: (n: number) => appendFileSync(file, line(n)),
  });
  // OpenCode's store: a SQLite file in WAL mode kept open by its writer, one user part per record.
  const opencodeDir = join(work, "xdg-data", "opencode");
  mkdirSync(opencodeDir, { recursive: true });
  const writer = new Database(join(opencodeDir, "opencode.db"), { create: true });
  writer.exec("PRAGMA journal_mode = WAL");
  writer.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);`);
  writer.query("INSERT INTO session (id, parent_id, directory) VALUES ('ses_bench', NULL, ?)").run(repo);
  /** Per source: how its live store is made and what one appended record looks like. */
  const sources = [
    fileSource(
      "Claude Code",
      join(work, "claude", "projects", "-bench", "live-session.jsonl"),
      (n) =>
        `${JSON.stringify({ type: "user", uuid: `lat-${n}`, sessionId: "live-session", cwd: repo, timestamp: new Date().toISOString(), message: { role: "user", content: `latency probe ${n}` } })}\n`,
    ),
    fileSource(
      "Qwen Code",
      join(work, "qwen", "projects", "-bench", "chats", "live-session.jsonl"),
      (n) =>
        `${JSON.stringify({ uuid: `lat-${n}`, parentUuid: null, sessionId: "live-session", timestamp: new Date().toISOString(), type: "user", provenance: "real_user", cwd: repo, version: "0.24.4", message: { role: "user", parts: [{ text: `latency probe ${n}` }] } })}\n`,
    ),
    fileSource("Copilot CLI", join(work, "copilot", "session-state", "live-session", "events.jsonl"), (n) =>
      n === 1
        ? `${JSON.stringify({ type: "session.start", data: { sessionId: "live-session", context: { cwd: repo } }, id: "start", timestamp: new Date().toISOString() })}\n${JSON.stringify({ type: "user.message", data: { content: `latency probe ${n}` }, id: `lat-${n}`, timestamp: new Date().toISOString() })}\n`
        : `${JSON.stringify({ type: "user.message", data: { content: `latency probe ${n}` }, id: `lat-${n}`, timestamp: new Date().toISOString() })}\n`,
    ),
    {
      name: "OpenCode (SQLite)",
      setup: () => {},
      append: (n: number) => {
        const now = Date.now();
        writer
          .query("INSERT INTO message VALUES (?, 'ses_bench', ?, ?, ?)")
          .run(`msg_${n}`, now, now, JSON.stringify({ role: "user", time: { created: now } }));
        writer
          .query("INSERT INTO part VALUES (?, ?, 'ses_bench', ?, ?, ?)")
          .run(`prt_${n}`, `msg_${n}`, now, now, JSON.stringify({ type: "text", text: `latency probe ${n}` }));
      },
    },
  ];
  const measured: Array<{ name: string; single: number[]; burst: number[] }> = [];
  try {
    await service.start();
    for (const src of sources) {
      const latencies = { name: src.name, single: [] as number[], burst: [] as number[] };
      measured.push(latencies);
      current = latencies.single;
      src.setup();
      await Bun.sleep(300); // let the watcher see the new folder
      let n = 0;
      const singles = opts.quick ? 15 : 100;
      for (let i = 0; i < singles; i++) {
        pending.push(performance.now());
        src.append(++n);
        await Bun.sleep(100);
      }
      await drain(pending);
      current = latencies.burst;
      const bursts = opts.quick ? 3 : 20;
      for (let b = 0; b < bursts; b++) {
        for (let i = 0; i < 10; i++) {
          pending.push(performance.now());
          src.append(++n);
          await Bun.sleep(1);
        }
        await Bun.sleep(400);
      }
      await drain(pending);
    }
  } finally {
    await service.stop();
    writer.close();
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(work, { recursive: true, force: true });
  }
  const every = measured.flatMap((m) => [...m.single, ...m.burst]);
  const all = summarize(every);
  const row = (label: string, xs: number[]) => {
    const st = summarize(xs);
    return [label, st.n, fmt(st.p50, 1), fmt(st.p95, 1), fmt(Math.max(...xs), 1)];
  };
  const rows = [
    ...measured.flatMap((m) => [
      row(`${m.name}: single lines, 100 ms apart`, m.single),
      row(`${m.name}: bursts of 10 lines 1 ms apart`, m.burst),
    ]),
    ["all", all.n, fmt(all.p50, 1), fmt(all.p95, 1), fmt(Math.max(...every), 1)],
  ];
  const markdown = [
    "CaptureService in-process (the daemon embeds the same service), recursive `fs.watch` + 50 ms trailing re-read + 250 ms re-check + 2 s sweep; latency = append → events committed to data.db.",
    "",
    table(["pattern", "lines", "p50 ms", "p95 ms", "max ms"], rows),
    "",
    "Goal: p95 ≤ 1000 ms.",
  ].join("\n");
  return {
    title: "Watch latency (appended line → stored event)",
    markdown,
    headline: [`p50 ${fmt(all.p50, 0)} ms, p95 ${fmt(all.p95, 0)} ms (goal p95 ≤ 1000 ms)`],
  } satisfies BenchReport;
}) satisfies Bench;

async function drain(pending: number[]): Promise<void> {
  const end = Date.now() + 10_000;
  while (pending.length > 0 && Date.now() < end) await Bun.sleep(20);
  if (pending.length > 0) throw new Error(`${pending.length} appended lines were never stored`);
}
