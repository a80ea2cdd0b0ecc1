/**
 * Daemon API round trip: latency of `GET /health` (daemon only), `GET /status` (daemon + SQLite
 * counts) and `/search_memory` (forwarded to the engine and back) both as `POST` with a JSON body —
 * how `sqrl mcp` and the CLI call it — and as reference §5's `GET` with a query string, measured from
 * a client process with keep-alive. `--quick`: 50 requests each.
 */
import { join } from "node:path";
import { benchHome, startAndWait } from "./daemon-idle.ts";
import { fmt, summarize, table, type Bench, type BenchReport } from "./report.ts";

export default (async (opts): Promise<BenchReport> => {
  const n = opts.quick ? 50 : 1000;
  const home = benchHome(1);
  try {
    const d = await startAndWait(home);
    const project = join(home.root, "projects", "p0");
    const headers = { authorization: `Bearer ${d.token}` };
    const base = `http://127.0.0.1:${d.port}`;
    const cases: Array<{ name: string; path: string; body?: unknown }> = [
      { name: "GET /health", path: "/health" },
      { name: "GET /status", path: "/status" },
      {
        name: "POST /search_memory (via engine)",
        path: "/search_memory",
        body: { project_id: project, query: "run the tests" },
      },
      {
        name: "GET /search_memory (via engine)",
        path: `/search_memory?project_id=${encodeURIComponent(project)}&query=${encodeURIComponent("run the tests")}`,
      },
    ];
    const rows: Array<Array<string | number>> = [];
    const headline: string[] = [];
    for (const c of cases) {
      const samples: number[] = [];
      const statuses = new Map<number, number>();
      for (let i = 0; i < n + 10; i++) {
        const t0 = performance.now();
        const res = await fetch(
          `${base}${c.path}`,
          c.body === undefined
            ? { headers }
            : {
                method: "POST",
                headers: { ...headers, "content-type": "application/json" },
                body: JSON.stringify(c.body),
              },
        );
        await res.arrayBuffer();
        const ms = performance.now() - t0;
        if (i >= 10) {
          samples.push(ms);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }
      const s = summarize(samples);
      const codes = [...statuses].map(([code, count]) => `${code}×${count}`).join(", ");
      rows.push([c.name, s.n, fmt(s.p50), fmt(s.p95), fmt(s.mean), codes]);
      headline.push(`${c.name} p50 ${fmt(s.p50)} ms, p95 ${fmt(s.p95)} ms`);
    }
    const markdown = [
      `${n} sequential requests per path after 10 warm-up requests, keep-alive, token auth; empty project memory.`,
      "",
      table(["request", "n", "p50 (ms)", "p95 (ms)", "mean (ms)", "HTTP status"], rows),
    ].join("\n");
    return { title: "Daemon API round trip", markdown, headline };
  } finally {
    home.cleanup();
  }
}) satisfies Bench;
