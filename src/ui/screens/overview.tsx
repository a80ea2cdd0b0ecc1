import { api, qs } from "../api.ts";
import { ago, fmt, Loaded, shortPath, TypeBadge, useLoad, when, type Load } from "../bits.tsx";
import { href, Link } from "../router.tsx";
import { EvalCard } from "./eval-card.tsx";

/**
 * Screen 1: every registered project, and for the picked one its events, episodes, memory, views,
 * health, LLM spend and last eval (eval-card.tsx).
 */
export interface Projects {
  version: string;
  home: string;
  daemon: { pid: number; uptime_s: number; last_error: string | null };
  engine: { healthy: boolean; pid: number | null; restarts: number; last_error: string | null };
  sources: Array<{ name: string; enabled: boolean; path: string; files: number }>;
  projects: Array<{
    project_id: string;
    events?: number;
    queue_depth?: number;
    last_batch_at?: string | null;
    last_error?: string | null;
    /** The registered folder is gone. */
    missing?: boolean;
  }>;
}

interface Overview {
  project_id: string;
  events: { total: number; unprocessed: number; last_at: string | null };
  episodes: { total: number; open: number };
  memories: Record<string, { active: number; superseded: number; forgotten: number }>;
  pinned: number;
  wrong: number;
  global_style: number;
  views: Array<{ name: string; generated_at: string; stale: boolean; events_since: number }>;
  sources: Array<{ source_tool: string; events: number; last_at: string; captured_at: string | null }>;
  llm: {
    provider: string;
    model: string;
    billing: string;
    tokens_today: number;
    daily_cap: number;
    sessions: number;
    tokens_per_session: number | null;
  };
}

/** Who distils: the provider and model, or offline. */
function llmLabel(l: Overview["llm"]): string {
  if (l.provider === "none") return "offline rules (llm.provider = none)";
  const billed =
    (l.provider === "claude_code" || l.provider === "codex") && l.billing === "subscription"
      ? " · your plan's usage"
      : "";
  return `${l.provider} · ${l.model}${billed}`;
}

const TYPES = ["user_style", "project_fact", "pitfall", "recipe"];

export function overviewPath(project: string): string {
  return `overview${qs({ project })}`;
}

function duration(s: number): string {
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

export function OverviewScreen(props: { project: string; projects: Load<Projects> }) {
  return (
    <div data-screen="overview">
      <h1>Overview</h1>
      <p class="sub">What sqrl has captured and remembers, and whether it is healthy.</p>
      <Loaded load={props.projects}>
        {(p) => (
          <div class="stack">
            <div class="grid three">
              <div class="card">
                <h3>Daemon</h3>
                <div class="row">
                  <span class="badge ok">running</span>
                  <span class="muted">
                    v{p.version} · pid {p.daemon.pid} · up {duration(p.daemon.uptime_s)}
                  </span>
                </div>
                {p.daemon.last_error && <p class="err small">{p.daemon.last_error}</p>}
              </div>
              <div class="card">
                <h3>Engine</h3>
                <div class="row">
                  <span class={`badge ${p.engine.healthy ? "ok" : "bad"}`}>
                    {p.engine.healthy ? "healthy" : "down"}
                  </span>
                  <span class="muted">
                    {p.engine.pid ? `pid ${p.engine.pid} · ` : ""}
                    {p.engine.restarts} restart{p.engine.restarts === 1 ? "" : "s"}
                  </span>
                </div>
                {p.engine.last_error && <p class="err small">{p.engine.last_error}</p>}
              </div>
              <div class="card">
                <h3>Capture sources</h3>
                <table>
                  <tbody>
                    {p.sources.map((s) => (
                      <tr key={s.name}>
                        <td>{s.name}</td>
                        <td>
                          <span class={`badge ${s.enabled ? "ok" : ""}`}>{s.enabled ? "on" : "off"}</span>
                        </td>
                        <td class="num muted">{fmt(s.files)} files</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </div>
            <div class="card">
              <h3>Projects ({p.projects.length})</h3>
              {p.projects.length === 0 ? (
                <p class="muted">
                  No project registered yet: run <code>sqrl init</code> in a repository.
                </p>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th>Project</th>
                      <th class="num">Events</th>
                      <th class="num">Queue</th>
                      <th>Last batch</th>
                    </tr>
                  </thead>
                  <tbody>
                    {p.projects.map((x) => (
                      <tr key={x.project_id} data-missing={x.missing ? "" : undefined}>
                        <td>
                          <Link to={href("", { project: x.project_id })}>{shortPath(x.project_id)}</Link>
                          {x.project_id === props.project && <span class="badge pin">shown</span>}
                          {x.missing && (
                            <p class="err small">
                              <span class="badge bad">missing</span> The folder is gone: run{" "}
                              <code>sqrl forget-project {x.project_id}</code> to unregister it.
                            </p>
                          )}
                        </td>
                        <td class="num">{fmt(x.events ?? 0)}</td>
                        <td class="num">{fmt(x.queue_depth ?? 0)}</td>
                        <td class="muted">{ago(x.last_batch_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
          </div>
        )}
      </Loaded>
      {/* Loaded side by side with the daemon's status, not after it. */}
      {props.project && (
        <div style={{ marginTop: "14px" }}>
          <ProjectOverview project={props.project} />
        </div>
      )}
    </div>
  );
}

function ProjectOverview(props: { project: string }) {
  const [load] = useLoad(() => api<Overview>(overviewPath(props.project)), [props.project]);
  return (
    <Loaded load={load}>
      {(o) => {
        const total = (k: "active" | "superseded" | "forgotten") =>
          TYPES.reduce((a, t) => a + (o.memories[t]?.[k] ?? 0), 0);
        const share = o.llm.daily_cap > 0 ? Math.min(100, (100 * o.llm.tokens_today) / o.llm.daily_cap) : 0;
        return (
          <div class="stack" data-overview={o.project_id}>
            <h2 title={o.project_id}>{shortPath(o.project_id)}</h2>
            <div class="grid">
              <div class="card">
                <h3>Events</h3>
                <div class="big">{fmt(o.events.total)}</div>
                <div class="muted">
                  {fmt(o.events.unprocessed)} waiting · last {ago(o.events.last_at)}
                </div>
              </div>
              <div class="card">
                <h3>Episodes</h3>
                <div class="big">{fmt(o.episodes.total)}</div>
                <div class="muted">{fmt(o.episodes.open)} open</div>
              </div>
              <div class="card">
                <h3>Memories</h3>
                <div class="big" data-active-total>
                  {fmt(total("active"))}
                </div>
                <div class="muted">
                  active · {fmt(o.pinned)} pinned · {fmt(o.wrong)} marked wrong
                  {o.global_style > 0 && (
                    <>
                      {" "}
                      · <Link to={href("memories", { scope: "user" })}>+ {fmt(o.global_style)} global style</Link>
                    </>
                  )}
                </div>
              </div>
              <div class="card" data-llm={o.llm.provider}>
                <h3>LLM tokens today</h3>
                <div class="big">{fmt(o.llm.tokens_today)}</div>
                <div class="bar" title={`${share.toFixed(1)}% of the daily cap`}>
                  <div style={{ width: `${share}%` }} />
                </div>
                <div class="muted small">of {fmt(o.llm.daily_cap)} a day (llm.daily_token_cap)</div>
                <div class="muted small" data-llm-model>
                  {llmLabel(o.llm)}
                </div>
                <div class="muted small" data-llm-per-session>
                  {o.llm.tokens_per_session === null
                    ? "no session distilled by the LLM in 7 days"
                    : `~${fmt(o.llm.tokens_per_session)} tokens per session (${fmt(o.llm.sessions)} in 7 days)`}
                </div>
              </div>
            </div>
            <div class="two">
              <div class="card">
                <h3>Memory by type and status</h3>
                <table>
                  <thead>
                    <tr>
                      <th>Type</th>
                      <th class="num">Active</th>
                      <th class="num">Superseded</th>
                      <th class="num">Forgotten</th>
                    </tr>
                  </thead>
                  <tbody>
                    {TYPES.map((t) => (
                      <tr key={t}>
                        <td>
                          <Link to={href("memories", { type: t })}>
                            <TypeBadge type={t} />
                          </Link>
                        </td>
                        <td class="num">{fmt(o.memories[t]?.active ?? 0)}</td>
                        <td class="num">{fmt(o.memories[t]?.superseded ?? 0)}</td>
                        <td class="num">{fmt(o.memories[t]?.forgotten ?? 0)}</td>
                      </tr>
                    ))}
                    <tr>
                      <th>All</th>
                      <th class="num">{fmt(total("active"))}</th>
                      <th class="num">{fmt(total("superseded"))}</th>
                      <th class="num">{fmt(total("forgotten"))}</th>
                    </tr>
                  </tbody>
                </table>
              </div>
              <div class="stack">
                <div class="card">
                  <h3>Views</h3>
                  {o.views.length === 0 ? (
                    <p class="muted">Not generated yet: the first agent call makes them.</p>
                  ) : (
                    <table>
                      <tbody>
                        {o.views.map((v) => (
                          <tr key={v.name}>
                            <td>{v.name}</td>
                            <td>
                              <span class={`badge ${v.stale ? "warn" : "ok"}`}>{v.stale ? "stale" : "fresh"}</span>
                            </td>
                            <td class="muted">
                              {when(v.generated_at)} · {fmt(v.events_since)} events since
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  )}
                </div>
                <div class="card">
                  <h3>Last capture per source</h3>
                  {o.sources.length === 0 ? (
                    <p class="muted">Nothing captured yet.</p>
                  ) : (
                    <table>
                      <tbody>
                        {o.sources.map((s) => (
                          <tr key={s.source_tool} data-source={s.source_tool}>
                            <td>{s.source_tool}</td>
                            <td class="num">{fmt(s.events)} events</td>
                            <td class="muted" title={`newest event dated ${when(s.last_at)}`} data-captured>
                              {s.captured_at ? `captured ${ago(s.captured_at)}` : `newest event ${when(s.last_at)}`}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  )}
                </div>
              </div>
            </div>
            <EvalCard project={o.project_id} />
          </div>
        );
      }}
    </Loaded>
  );
}
