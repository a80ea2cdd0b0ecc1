/**
 * `bun run bench mcp-cold-start`: how fast a host gets sqrl's tools, and what a tool call costs.
 * - Cold start: the compiled `sqrl mcp` spawned, `initialize` + `tools/list` answered, median of 30
 *   (goal ≤ 40 ms), side by side with @modelcontextprotocol/server-memory (its installed bin) as a peer.
 * - Round trip: get_task_context / search_project_memory through mcp → daemon → engine, p50/p95.
 * Uses SQRL_BIN (default dist/sqrl), a temp SQRL_HOME and a seeded temp project.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { seedProject } from "../test/mcp/fixtures.ts";
import { fmt, summarize, table, type Bench } from "./report.ts";

const ROOT = resolve(import.meta.dir, "..");

interface Spawnable {
  label: string;
  cmd: string[];
  env: Record<string, string>;
  cwd: string;
}

/** Spawn, send initialize → initialized → tools/list over stdio; ms until the tools/list answer. */
async function coldStartOnce(s: Spawnable): Promise<{ ms: number; tools: number }> {
  const started = performance.now();
  const proc = Bun.spawn(s.cmd, { cwd: s.cwd, env: s.env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const send = (msg: unknown) => proc.stdin.write(`${JSON.stringify(msg)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let tools = -1;
  let ms = NaN;
  try {
    outer: while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${s.label} exited before answering`);
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        const msg = JSON.parse(line) as { id?: number; result?: { tools?: unknown[] } };
        if (msg.id === 1) {
          send({ jsonrpc: "2.0", method: "notifications/initialized" });
          send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
        } else if (msg.id === 2) {
          ms = performance.now() - started;
          tools = msg.result?.tools?.length ?? 0;
          break outer;
        }
      }
    }
  } finally {
    proc.stdin.end();
    const timer = setTimeout(() => proc.kill(), 2000);
    await proc.exited;
    clearTimeout(timer);
  }
  return { ms, tools };
}

async function coldStart(s: Spawnable, runs: number): Promise<{ samples: number[]; tools: number }> {
  await coldStartOnce(s); // warm the page cache once, not counted
  const samples: number[] = [];
  let tools = 0;
  for (let i = 0; i < runs; i++) {
    const r = await coldStartOnce(s);
    samples.push(r.ms);
    tools = r.tools;
  }
  return { samples, tools };
}

function run(bin: string, args: string[], env: Record<string, string>, cwd?: string): string {
  const res = Bun.spawnSync([bin, ...args], { env, cwd, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`sqrl ${args.join(" ")} failed: ${res.stderr.toString()}`);
  return res.stdout.toString();
}

async function roundTrips(
  bin: string,
  env: Record<string, string>,
  project: string,
  n: number,
): Promise<Array<[string, number[]]>> {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env, cwd: project, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  const calls: Array<[string, Record<string, unknown>]> = [
    [
      "get_task_context",
      {
        task_description: "Add a delete endpoint for inventory items",
        active_file_paths: ["src/routes/inventory.ts"],
        include_seen: true,
      },
    ],
    ["search_project_memory", { query: "JWT login tests", top_k: 5, include_seen: true }],
    ["get_user_style_view", { include_seen: true }],
  ];
  const out: Array<[string, number[]]> = [];
  try {
    for (const [name, args] of calls) {
      const first = await client.callTool({ name, arguments: args }); // starts the daemon on the first call
      if (first.isError) throw new Error(`${name}: ${JSON.stringify(first.content)}`);
      const samples: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        const r = await client.callTool({ name, arguments: args });
        samples.push(performance.now() - t);
        if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
      }
      out.push([name, samples]);
    }
  } finally {
    await client.close();
  }
  return out;
}

export default (async (opts) => {
  const bin = resolve(process.env.SQRL_BIN ?? join(ROOT, "dist", "sqrl"));
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`bun run build\` (or set SQRL_BIN) first.`);
  const memoryBin = join(ROOT, "node_modules", ".bin", "mcp-server-memory");
  const tmp = mkdtempSync(join(tmpdir(), "sqrl-bench-mcp-"));
  const project = join(tmp, "repo");
  mkdirSync(project, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(tmp, "home"),
    SQRL_HOME: join(tmp, "sqrl"),
    CLAUDE_CONFIG_DIR: join(tmp, "claude"),
    CODEX_HOME: join(tmp, "codex"),
    GEMINI_HOME: join(tmp, "gemini"),
    NO_COLOR: "1",
  };
  const runs = opts.quick ? 5 : 30;
  const calls = opts.quick ? 10 : 200;
  try {
    run(bin, ["init", project, "--yes", "--no-git"], env);
    const saved = process.env.SQRL_HOME;
    process.env.SQRL_HOME = env.SQRL_HOME;
    try {
      seedProject(project, { extra: opts.quick ? 50 : 1000 });
    } finally {
      if (saved === undefined) delete process.env.SQRL_HOME;
      else process.env.SQRL_HOME = saved;
    }
    const sqrl = await coldStart({ label: "sqrl mcp", cmd: [bin, "mcp"], env, cwd: project }, runs);
    const peer = existsSync(memoryBin)
      ? await coldStart(
          {
            label: "server-memory",
            cmd: [memoryBin],
            env: { ...env, MEMORY_FILE_PATH: join(tmp, "memory.jsonl") },
            cwd: project,
          },
          runs,
        )
      : undefined;
    const trips = await roundTrips(bin, env, project, calls);
    const s = summarize(sqrl.samples);
    const rows: Array<Array<string | number>> = [
      ["sqrl mcp (compiled)", sqrl.tools, fmt(s.p50, 1), fmt(s.p95, 1), fmt(Math.min(...sqrl.samples), 1), runs],
    ];
    if (peer) {
      const p = summarize(peer.samples);
      rows.push([
        "@modelcontextprotocol/server-memory (node)",
        peer.tools,
        fmt(p.p50, 1),
        fmt(p.p95, 1),
        fmt(Math.min(...peer.samples), 1),
        runs,
      ]);
    }
    const tripRows = trips.map(([name, samples]) => {
      const t = summarize(samples);
      return [name, fmt(t.p50, 2), fmt(t.p95, 2), fmt(t.mean, 2), t.n];
    });
    const markdown = [
      `Cold start: process spawned → \`initialize\` answered → \`tools/list\` answered (goal: median ≤ 40 ms). Load average when it ran: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(", ")} (a busy machine adds tens of ms to both servers).`,
      "",
      table(["server", "tools", "median ms", "p95 ms", "min ms", "runs"], rows),
      "",
      `Tool call round trip through \`sqrl mcp\` → daemon → engine (SDK client over stdio, ${seedCount(opts.quick)} memory items, include_seen, daemon already running):`,
      "",
      table(["tool", "p50 ms", "p95 ms", "mean ms", "calls"], tripRows),
    ].join("\n");
    const headline = [
      `sqrl mcp cold start median ${fmt(s.p50, 1)} ms (goal ≤ 40)${peer ? `, server-memory ${fmt(summarize(peer.samples).p50, 1)} ms` : ""}`,
    ];
    for (const [name, samples] of trips)
      headline.push(
        `${name} round trip p50 ${fmt(summarize(samples).p50, 2)} ms, p95 ${fmt(summarize(samples).p95, 2)} ms`,
      );
    return { title: "MCP: cold start and tool round trip", markdown, headline };
  } finally {
    Bun.spawnSync([bin, "daemon", "stop"], { env, stdout: "ignore", stderr: "ignore" });
    rmSync(tmp, { recursive: true, force: true });
  }
}) satisfies Bench;

function seedCount(quick: boolean): number {
  return 9 + (quick ? 50 : 1000);
}
