import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { ago, fmt, Loaded, TypeBadge, useLoad, when } from "../bits.tsx";
import { href, Link } from "../router.tsx";

/**
 * The project's last `sqrl eval` on the Overview: when it ran, served recall of needed items, tokens
 * served but never needed, abstention, the memories worth most and those served but never needed.
 * Without one, how to run it and a button that runs it in the engine (polled until done). "Forget the
 * ones never needed" lists them and their count, asks, then forgets them through the engine (as
 * `sqrl forget` does; pinned or edited ones are never taken); the eval is then shown as stale.
 */
interface EvalItem {
  memory_id: string;
  type: string;
  key: string;
  content: string;
  served: number;
  needed: number;
  served_needed: number;
  served_unused: number;
}

interface NeverNeeded {
  memory_id: string;
  type: string;
  key: string;
  content: string;
  served: number;
  state: "valid" | "held" | "gone";
}

interface EvalStatus {
  project_id: string;
  last: {
    ran_at: string;
    by: "cli" | "page";
    stale: { at: string; reason: string } | null;
    summary: {
      budget: number;
      sessions_total: number;
      sessions_evaluated: number;
      served_recall: number | null;
      needed_total: number;
      needed_served: number;
      served_tokens: number;
      wasted_tokens: number;
      abstention: { sessions_nothing_needed: number; abstained: number; rate: number | null };
    };
    most: EvalItem[];
    never_needed: NeverNeeded[];
  } | null;
  running: { started_at: string; done: number; total: number } | null;
  error: string | null;
}

interface ForgetAnswer {
  forgotten: string[];
  kept: Array<{ memory_id: string; reason: string }>;
  stale: boolean;
}

const POLL_MS = 1000;

function pct(r: number | null): string {
  return r === null ? "—" : `${Math.round(r * 100)}%`;
}

function clip(s: string, max = 140): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

export function evalPath(project: string): string {
  return `eval${qs({ project })}`;
}

export function EvalCard(props: { project: string }) {
  const [load, reload] = useLoad(() => api<EvalStatus>(evalPath(props.project)), [props.project]);
  const running = load.state === "ok" && load.value.running !== null;
  // While a run is in progress, ask again every second: its progress, then its result.
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(reload, POLL_MS);
    return () => clearTimeout(timer);
  });
  return (
    <div class="card" data-eval>
      <h3>Last eval</h3>
      <Loaded load={load}>{(s) => <EvalBody s={s} project={props.project} reload={reload} />}</Loaded>
    </div>
  );
}

function EvalBody(props: { s: EvalStatus; project: string; reload: () => void }) {
  const { s } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await api(`eval/run${qs({ project: props.project })}`, { method: "POST", body: {} });
      props.reload();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const runButton = (label: string) => (
    <button class={s.last ? "" : "primary"} onClick={run} disabled={busy || s.running !== null} data-action="run-eval">
      {label}
    </button>
  );
  return (
    <div class="stack">
      {s.running && (
        <div data-eval-running role="status">
          <div class="row">
            <span class="badge warn">running</span>
            <span class="muted">
              Replaying sessions: {fmt(s.running.done)} of {s.running.total > 0 ? fmt(s.running.total) : "…"}
            </span>
          </div>
          <div class="bar">
            <div style={{ width: `${s.running.total > 0 ? (100 * s.running.done) / s.running.total : 0}%` }} />
          </div>
        </div>
      )}
      {s.error && <p class="err">{s.error}</p>}
      {error && <p class="err">{error}</p>}
      {s.last === null ? (
        !s.running && (
          <div data-eval-none>
            <p>
              No eval has run for this project yet. <code>sqrl eval</code> replays its sessions against the memory that
              stood before each and measures what memory served against what each session needed (read only); run it in
              a terminal, or here:
            </p>
            {runButton("Run the eval")}
          </div>
        )
      ) : (
        <EvalResult last={s.last} project={props.project} reload={props.reload} runButton={runButton("Run it again")} />
      )}
    </div>
  );
}

function EvalResult(props: {
  last: NonNullable<EvalStatus["last"]>;
  project: string;
  reload: () => void;
  runButton: ComponentChildren;
}) {
  const { last } = props;
  const sum = last.summary;
  const valid = last.never_needed.filter((i) => i.state === "valid");
  const held = last.never_needed.filter((i) => i.state === "held");
  const gone = last.never_needed.filter((i) => i.state === "gone");
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const forget = async () => {
    setBusy(true);
    setError(null);
    try {
      const res = await api<ForgetAnswer>(`eval/forget_unused${qs({ project: props.project })}`, {
        method: "POST",
        body: { memory_ids: valid.map((i) => i.memory_id) },
      });
      setAsking(false);
      setDone(
        `Forgot ${fmt(res.forgotten.length)} ${res.forgotten.length === 1 ? "memory" : "memories"} (kept as history)${
          res.kept.length > 0 ? `; ${fmt(res.kept.length)} left alone` : ""
        }.`,
      );
      props.reload();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const wasteShare = sum.served_tokens > 0 ? sum.wasted_tokens / sum.served_tokens : null;
  return (
    <>
      <div class="row muted" data-eval-ran={last.ran_at}>
        Ran {when(last.ran_at)} ({ago(last.ran_at)}) {last.by === "cli" ? "by sqrl eval" : "from this page"} ·{" "}
        {fmt(sum.sessions_evaluated)} of {fmt(sum.sessions_total)} sessions replayed · budget {fmt(sum.budget)} tokens
      </div>
      {last.stale && (
        <p class="row" data-eval-stale>
          <span class="badge warn">stale</span>
          <span class="muted">
            {last.stale.reason} ({ago(last.stale.at)}).
          </span>
        </p>
      )}
      <div class="grid">
        <div data-eval-recall>
          <div class="big">{pct(sum.served_recall)}</div>
          <div class="muted small">
            served recall: {fmt(sum.needed_served)} of {fmt(sum.needed_total)} needed items served
          </div>
        </div>
        <div data-eval-wasted>
          <div class="big">{pct(wasteShare)}</div>
          <div class="muted small">
            tokens never needed: {fmt(sum.wasted_tokens)} of {fmt(sum.served_tokens)} served
          </div>
        </div>
        <div data-eval-abstention>
          <div class="big">{pct(sum.abstention.rate)}</div>
          <div class="muted small">
            abstention: nothing served to {fmt(sum.abstention.abstained)} of{" "}
            {fmt(sum.abstention.sessions_nothing_needed)}{" "}
            {sum.abstention.sessions_nothing_needed === 1 ? "session" : "sessions"} that needed nothing
          </div>
        </div>
      </div>
      <div class="two">
        <div data-eval-most>
          <h3>Worth most (served and needed)</h3>
          {last.most.length === 0 ? (
            <p class="muted">No memory was served to a session that needed it.</p>
          ) : (
            <table>
              <tbody>
                {last.most.map((i) => (
                  <tr key={i.memory_id} data-memory={i.memory_id}>
                    <td>
                      <TypeBadge type={i.type} />
                    </td>
                    <td>
                      <Link to={href(`memories/${encodeURIComponent(i.memory_id)}`)}>{clip(i.content)}</Link>
                    </td>
                    <td class="num muted" title="sessions served and needing it">
                      {fmt(i.served_needed)}×
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        <div data-eval-least>
          <h3>Worth least (served, never needed): {fmt(last.never_needed.length)}</h3>
          {last.never_needed.length === 0 ? (
            <p class="muted">Every memory served was needed by some session.</p>
          ) : (
            <div class="scroll">
              <table>
                <tbody>
                  {last.never_needed.map((i) => (
                    <tr key={i.memory_id} data-memory={i.memory_id} data-state={i.state}>
                      <td>
                        <TypeBadge type={i.type} />
                      </td>
                      <td>
                        <Link to={href(`memories/${encodeURIComponent(i.memory_id)}`)}>{clip(i.content)}</Link>
                        {i.state === "held" && <span class="badge pin">yours: kept</span>}
                        {i.state === "gone" && <span class="badge">no longer valid</span>}
                      </td>
                      <td class="num muted" title="sessions it was served to">
                        {fmt(i.served)}×
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      </div>
      <div class="actions">
        {valid.length > 0 && (
          <button class="danger" onClick={() => setAsking(!asking)} disabled={busy} data-action="forget-unused">
            Forget the {fmt(valid.length)} never needed…
          </button>
        )}
        {props.runButton}
      </div>
      {asking && (
        <div class="inline-form stack" data-confirm-panel="forget-unused">
          <p>
            {valid.length === 1
              ? "Forget this memory? The last eval served it and no session needed it. It leaves every view, search and task context and is not learned again; the history stays."
              : `Forget these ${fmt(valid.length)} memories? The last eval served them and no session needed them. They leave every view, search and task context and are not learned again; the history stays.`}
            {held.length > 0 &&
              ` ${fmt(held.length)} that you pinned or edited ${held.length === 1 ? "is" : "are"} kept.`}
            {gone.length > 0 && ` ${fmt(gone.length)} no longer valid ${gone.length === 1 ? "is" : "are"} skipped.`}
          </p>
          <ul class="small scroll" data-forget-list>
            {valid.map((i) => (
              <li key={i.memory_id} data-memory={i.memory_id}>
                <code>{i.memory_id}</code> {clip(i.content, 200)}
              </li>
            ))}
          </ul>
          <div class="row">
            <button class="primary" disabled={busy} onClick={forget} data-confirm="forget-unused">
              Forget {fmt(valid.length)} {valid.length === 1 ? "memory" : "memories"}
            </button>
            <button onClick={() => setAsking(false)}>Cancel</button>
          </div>
        </div>
      )}
      {done && (
        <p class="muted" role="status" data-eval-done>
          {done}
        </p>
      )}
      {error && <p class="err">{error}</p>}
    </>
  );
}
