import { api, qs } from "../api.ts";
import { fmt, Loaded, useLoad, when } from "../bits.tsx";
import { href, Link } from "../router.tsx";

/** Screen 5: the MCP tool-call log with tokens served per day, and the episode timeline. */
interface CallLog {
  total: number;
  calls: Array<{
    id: number;
    ts: string;
    tool: string;
    args: Record<string, unknown>;
    memory_ids: string[];
    token_estimate: number | null;
    latency_ms: number;
    error: string | null;
  }>;
  per_day: Array<{ day: string; tokens: number; calls: number }>;
}
interface Timeline {
  episodes: Array<{
    episode_id: string;
    start_ts: string;
    end_ts: string;
    event_count: number;
    summary: string;
    outcome: string;
    file_paths: string[];
  }>;
}

function argsText(args: Record<string, unknown>): string {
  const shown = Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0))
    .map(
      ([k, v]) =>
        `${k}=${typeof v === "string" ? JSON.stringify(v.length > 80 ? `${v.slice(0, 79)}…` : v) : JSON.stringify(v)}`,
    );
  return shown.join(" ") || "—";
}

function Chart(props: { days: CallLog["per_day"] }) {
  const W = 1100;
  const H = 150;
  const max = Math.max(1, ...props.days.map((d) => d.tokens));
  const bw = W / Math.max(1, props.days.length);
  const empty = props.days.every((d) => d.tokens === 0);
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label="Tokens served per day">
      {empty && (
        <text x={W / 2} y={H / 2} text-anchor="middle" class="no-data" data-no-data>
          No data: no MCP tool call served tokens in these days
        </text>
      )}
      {props.days.map((d, i) => {
        const h = Math.round(((H - 30) * d.tokens) / max);
        return (
          <g key={d.day}>
            <rect
              class="b"
              x={i * bw + 4}
              y={H - 18 - h}
              width={bw - 8}
              height={Math.max(h, d.tokens > 0 ? 2 : 0)}
              rx={2}
            >
              <title>{`${d.day}: ${fmt(d.tokens)} tokens in ${d.calls} calls`}</title>
            </rect>
            {d.tokens > 0 && (
              <text x={i * bw + bw / 2} y={H - 22 - h} text-anchor="middle">
                {fmt(d.tokens)}
              </text>
            )}
            <text x={i * bw + bw / 2} y={H - 4} text-anchor="middle">
              {d.day.slice(5)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function CallsScreen(props: { project: string }) {
  const [calls] = useLoad(() => api<CallLog>(`calls${qs({ project: props.project, limit: 200 })}`), [props.project]);
  const [timeline] = useLoad(
    () => api<Timeline>(`timeline${qs({ project: props.project, limit: 50 })}`),
    [props.project],
  );
  return (
    <div data-screen="calls">
      <h1>Calls</h1>
      <p class="sub">
        Every MCP tool call your agents made for this project: what they asked, what memory came back, what it cost.
      </p>
      <Loaded load={calls}>
        {(log) => (
          <div class="stack">
            <div class="card">
              <h3>Tokens served per day (last {log.per_day.length} days)</h3>
              <Chart days={log.per_day} />
            </div>
            <div class="card">
              <h3>Tool calls ({fmt(log.total)})</h3>
              {log.calls.length === 0 ? (
                <p class="muted">No MCP call yet.</p>
              ) : (
                <table data-calls>
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Tool</th>
                      <th>Arguments</th>
                      <th class="num">Memories</th>
                      <th class="num">Tokens</th>
                      <th class="num">ms</th>
                    </tr>
                  </thead>
                  <tbody>
                    {log.calls.map((c) => (
                      <tr key={c.id}>
                        <td class="muted small">{when(c.ts)}</td>
                        <td class="mono small">{c.tool}</td>
                        <td class="small">
                          {argsText(c.args)}
                          {c.error && <div class="err">{c.error}</div>}
                        </td>
                        <td class="num" title={c.memory_ids.join(", ")}>
                          {c.memory_ids.length}
                        </td>
                        <td class="num">{c.token_estimate ?? "—"}</td>
                        <td class="num">{c.latency_ms.toFixed(0)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
          </div>
        )}
      </Loaded>
      <div class="card" style={{ marginTop: "14px" }}>
        <h3>Episode timeline</h3>
        <Loaded load={timeline}>
          {(t) =>
            t.episodes.length === 0 ? (
              <p class="muted">No episode yet.</p>
            ) : (
              <ol class="lineage" data-timeline>
                {t.episodes.map((e) => (
                  <li key={e.episode_id}>
                    <div class="row small">
                      <Link to={href(`episodes/${encodeURIComponent(e.episode_id)}`)}>{when(e.start_ts)}</Link>
                      <span class="muted">
                        {e.event_count} events
                        {e.file_paths.length > 0 ? ` · ${e.file_paths.slice(0, 3).join(", ")}` : ""}
                      </span>
                      {e.outcome && <span class="badge">{e.outcome}</span>}
                    </div>
                    <div>{e.summary}</div>
                  </li>
                ))}
              </ol>
            )
          }
        </Loaded>
      </div>
    </div>
  );
}
