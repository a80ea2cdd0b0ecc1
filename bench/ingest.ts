/**
 * Ingest throughput end to end into SQLite: a large synthetic Claude Code transcript built from the
 * real fixtures in ../shared (every copy gets its own uuids/message ids/tool ids so all events are
 * distinct), read → normalize → redact → truncate → hash → insert into a temp project's data.db.
 * Also times the same file again (all duplicates) and the normalize step alone.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { initProject } from "../src/cli/init-project.ts";
import { ingestFileOnce, TRANSCRIPT_SOURCES } from "../src/daemon/backfill.ts";
import { ProjectDbPool } from "../src/daemon/ingest.ts";
import { newTailFile, readTail } from "../src/daemon/tail.ts";
import { listProjects } from "../src/shared/projects.ts";
import { fmt, table, type Bench, type BenchReport } from "./report.ts";

const SHARED = resolve(import.meta.dir, "../../shared/fixtures/transcripts/claude-code");

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".jsonl") ? [p] : [];
  });
}

/** One copy of every Claude fixture, cwd → repo, ids made unique with the copy number. */
function buildCopy(sources: string[], repo: string, copy: number): string {
  const idRe = /\b(msg_[A-Za-z0-9]+|toolu_[A-Za-z0-9]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/g;
  return sources
    .map((text) => text.replace(/"cwd":"[^"]*"/g, `"cwd":${JSON.stringify(repo)}`).replace(idRe, (m) => `${m}x${copy}`))
    .map((t) => (t.endsWith("\n") ? t : `${t}\n`))
    .join("");
}

export default (async (opts) => {
  if (!existsSync(SHARED)) {
    return { title: "Ingest throughput", markdown: "Skipped: needs ../shared/fixtures/transcripts beside the repo.", headline: ["skipped (no ../shared)"] } satisfies BenchReport;
  }
  const targetEvents = opts.quick ? 8_000 : 30_000;
  const work = join(tmpdir(), `sqrl-bench-ingest-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const saved = process.env.SQRL_HOME;
  process.env.SQRL_HOME = join(work, "sqrl");
  try {
    const repo = join(work, "repo");
    mkdirSync(repo);
    initProject(repo);
    const sources = walk(SHARED).sort().map((p) => readFileSync(p, "utf8"));
    const file = join(work, "big.jsonl");
    writeFileSync(file, "");
    // Events per copy: normalize one copy once.
    writeFileSync(join(work, "one.jsonl"), buildCopy(sources, repo, 0));
    const claude = TRANSCRIPT_SOURCES.claude;
    const deps = { projects: () => [repo] };
    const one = newTailFile(join(work, "one.jsonl"), "claude", false, claude.createNormalizer(join(work, "one.jsonl"), deps));
    const perCopy = readTail(one, { final: true, renew: () => claude.createNormalizer(join(work, "one.jsonl"), deps) }).events.length;
    const copies = Math.ceil(targetEvents / perCopy);
    for (let i = 1; i <= copies; i++) appendFileSync(file, buildCopy(sources, repo, i));
    const bytes = statSync(file).size;

    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    // Normalize only (read + parse + normalize), no SQLite.
    let c0 = cpu();
    let t0 = performance.now();
    const tf = newTailFile(file, "claude", false, claude.createNormalizer(file, deps));
    let normalized = 0;
    readTail(tf, { final: true, renew: () => claude.createNormalizer(file, deps), sink: (e) => (normalized += e.length) });
    const normalizeMs = performance.now() - t0;
    const normalizeCpu = cpu() - c0;

    const pool = new ProjectDbPool();
    const ctx = { projects: listProjects(), userId: "bench", pool };
    c0 = cpu();
    t0 = performance.now();
    const first = await ingestFileOnce(file, "claude", false, ctx);
    const firstMs = performance.now() - t0;
    const firstCpu = cpu() - c0;
    c0 = cpu();
    t0 = performance.now();
    const again = await ingestFileOnce(file, "claude", false, ctx);
    const againMs = performance.now() - t0;
    const againCpu = cpu() - c0;
    pool.close();
    const dbBytes = statSync(join(repo, ".ctx", "data.db")).size;

    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
    const fmtRate = (n: number, ms: number) => rate(n, ms).toLocaleString("en-US");
    const rows = [
      ["normalize only (read, parse, normalize)", normalized, fmt(normalizeMs, 0), fmtRate(normalized, normalizeMs), fmt(normalizeCpu, 0), fmtRate(normalized, normalizeCpu)],
      ["end to end, new events (+ redact, truncate, hash, insert)", first.added, fmt(firstMs, 0), fmtRate(first.events, firstMs), fmt(firstCpu, 0), fmtRate(first.events, firstCpu)],
      ["end to end, same file again (all duplicates)", again.duplicates, fmt(againMs, 0), fmtRate(again.events, againMs), fmt(againCpu, 0), fmtRate(again.events, againCpu)],
    ];
    const load = (await import("node:os")).loadavg()[0] ?? 0;
    const markdown = [
      `Synthetic Claude Code transcript: ${copies} copies of the ${sources.length} real Claude fixtures (unique ids per copy), ${(bytes / 2 ** 20).toFixed(1)} MiB, ${first.events.toLocaleString("en-US")} events; one temp project; data.db afterwards ${(dbBytes / 2 ** 20).toFixed(1)} MiB.`,
      "",
      table(["step", "events", "wall ms", "events/s (wall)", "CPU ms", "events per CPU-s"], rows),
      "",
      `Goal: ≥ 20,000 events/s end to end. Malformed lines: ${first.malformed}; skipped (unregistered cwd): ${first.skipped}. Load average during the run: ${load.toFixed(1)} (other processes share the machine; the CPU columns are this process only).`,
    ].join("\n");
    return {
      title: "Ingest throughput",
      markdown,
      headline: [`${fmtRate(first.events, firstMs)} events/s end to end wall, ${fmtRate(first.events, firstCpu)} per CPU-second (${first.events.toLocaleString("en-US")} events, goal ≥ 20,000)`],
    } satisfies BenchReport;
  } finally {
    if (saved === undefined) delete process.env.SQRL_HOME;
    else process.env.SQRL_HOME = saved;
    rmSync(work, { recursive: true, force: true });
  }
}) satisfies Bench;
