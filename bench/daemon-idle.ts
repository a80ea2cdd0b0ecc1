/**
 * Idle daemon cost: resident memory and CPU of `sqrl daemon` (and its engine child) over 60 s with
 * three registered projects and nothing happening. Goal: ≤ 80 MB RSS, ~0 % CPU (no busy polling).
 * `--quick` measures for 5 s.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fmt, table, type Bench, type BenchReport } from "./report.ts";

export interface BenchHome {
  root: string;
  env: Record<string, string>;
  bin: string;
  run(args: string[]): { code: number; stdout: string; stderr: string };
  daemon(): { pid: number; port: number; token: string };
  cleanup(): void;
}

/** An isolated SQRL_HOME with `projects` initialised projects (git repos when git exists). */
export function benchHome(projects: number): BenchHome {
  const bin = resolve(process.env.SQRL_BIN ?? "dist/sqrl");
  if (!existsSync(bin)) throw new Error(`${bin} does not exist: run \`bun run build\` first (or set SQRL_BIN).`);
  const root = mkdtempSync(join(tmpdir(), "sqrl-bench-"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(root, "home"),
    SQRL_HOME: join(root, "sqrl"),
    CLAUDE_CONFIG_DIR: join(root, "claude"),
    CODEX_HOME: join(root, "codex"),
    GEMINI_HOME: join(root, "gemini"),
    NO_COLOR: "1",
    CI: "1",
  };
  mkdirSync(env.HOME!, { recursive: true });
  for (const d of [env.CLAUDE_CONFIG_DIR!, env.CODEX_HOME!, env.GEMINI_HOME!]) mkdirSync(d, { recursive: true });
  const run = (args: string[]) => {
    const res = Bun.spawnSync([bin, ...args], { env, stdout: "pipe", stderr: "pipe" });
    return { code: res.exitCode ?? -1, stdout: res.stdout.toString(), stderr: res.stderr.toString() };
  };
  const git = Bun.which("git");
  for (let i = 0; i < projects; i++) {
    const dir = join(root, "projects", `p${i}`);
    mkdirSync(dir, { recursive: true });
    if (git) Bun.spawnSync([git, "init", "-q", dir], { env });
    const res = run(["init", dir, "--yes", ...(git ? [] : ["--no-git"])]);
    if (res.code !== 0) throw new Error(`sqrl init failed: ${res.stderr}`);
  }
  return {
    root,
    env,
    bin,
    run,
    daemon: () =>
      JSON.parse(readFileSync(join(env.SQRL_HOME!, "daemon.json"), "utf8")) as {
        pid: number;
        port: number;
        token: string;
      },
    cleanup: () => {
      run(["daemon", "stop", "--timeout", "10"]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Start the daemon and wait until its engine is healthy. */
export async function startAndWait(
  home: BenchHome,
): Promise<{ pid: number; port: number; token: string; enginePid: number }> {
  const res = home.run(["daemon", "start", "--json", "--timeout", "30"]);
  if (res.code !== 0) throw new Error(`daemon start failed: ${res.stderr}`);
  const d = home.daemon();
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const s = (await (
      await fetch(`http://127.0.0.1:${d.port}/status`, { headers: { authorization: `Bearer ${d.token}` } })
    ).json()) as {
      engine: { healthy: boolean; pid: number | null };
    };
    if (s.engine.healthy && s.engine.pid) return { ...d, enginePid: s.engine.pid };
    await Bun.sleep(100);
  }
  throw new Error("the engine did not become healthy within 30 s");
}

const CLK_TCK = 100;

/** CPU seconds (user + system) and RSS in MB of a pid, from /proc (Linux) or ps. */
export function sample(pid: number): { cpuS: number; rssMb: number } {
  if (existsSync(`/proc/${pid}/stat`)) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuS = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
    return { cpuS, rssMb: rssKb / 1024 };
  }
  const ps = Bun.spawnSync(["ps", "-o", "rss=,time=", "-p", String(pid)], { stdout: "pipe" })
    .stdout.toString()
    .trim();
  const [rss, time] = ps.split(/\s+/);
  const parts = (time ?? "0:0").split(":").map(Number);
  const cpuS = parts.reduce((acc, p) => acc * 60 + p, 0);
  return { cpuS, rssMb: Number(rss) / 1024 };
}

export default (async (opts): Promise<BenchReport> => {
  const seconds = opts.quick ? 5 : 60;
  const home = benchHome(3);
  try {
    const d = await startAndWait(home);
    await Bun.sleep(opts.quick ? 1_000 : 3_000); // start-up scans settle
    const procs = [
      { name: "daemon", pid: d.pid },
      { name: "engine", pid: d.enginePid },
    ];
    const start = procs.map((p) => sample(p.pid));
    const peak = start.map((s) => s.rssMb);
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      await Bun.sleep(1000);
      procs.forEach((p, i) => (peak[i] = Math.max(peak[i]!, sample(p.pid).rssMb)));
    }
    const wall = (performance.now() - t0) / 1000;
    const end = procs.map((p) => sample(p.pid));
    const rows = procs.map((p, i) => {
      const cpuPct = ((end[i]!.cpuS - start[i]!.cpuS) / wall) * 100;
      return { name: p.name, rss: end[i]!.rssMb, peak: peak[i]!, cpuPct };
    });
    const total = { rss: rows.reduce((a, r) => a + r.rss, 0), cpu: rows.reduce((a, r) => a + r.cpuPct, 0) };
    const markdown = [
      `Idle for ${fmt(wall, 0)} s with 3 registered projects (git repos), no agent activity. CPU from /proc utime+stime.`,
      "",
      table(
        ["process", "RSS end (MB)", "RSS peak (MB)", "CPU (%)"],
        [
          ...rows.map((r) => [r.name, fmt(r.rss, 1), fmt(r.peak, 1), fmt(r.cpuPct, 2)]),
          ["daemon + engine", fmt(total.rss, 1), "", fmt(total.cpu, 2)],
        ],
      ),
      "",
      `Goal: daemon ≤ 80 MB resident, ~0 % CPU when idle.`,
    ].join("\n");
    const daemonRow = rows[0]!;
    return {
      title: "Idle daemon: memory and CPU",
      markdown,
      headline: [
        `idle daemon ${fmt(daemonRow.rss, 1)} MB RSS, ${fmt(daemonRow.cpuPct, 2)} % CPU over ${fmt(wall, 0)} s (engine ${fmt(rows[1]!.rss, 1)} MB, ${fmt(rows[1]!.cpuPct, 2)} %)`,
      ],
    };
  } finally {
    home.cleanup();
  }
}) satisfies Bench;
