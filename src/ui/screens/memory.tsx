import { useState } from "preact/hooks";
import { api, ApiFailure, qs, type MemoryRow } from "../api.ts";
import { ago, Loaded, StatusBadge, TypeBadge, useLoad, when } from "../bits.tsx";
import { href, Link, navigate } from "../router.tsx";

/**
 * Screen 3: one memory. Every version of its lineage, its evidence (episodes, events) and the four
 * corrections — edit, forget, pin, mark wrong — each one POST to the page API, which the engine
 * carries out like every other write.
 */
interface Detail {
  item: MemoryRow;
  tags: string[];
  file_paths: string[];
  lineage: Array<{
    memory_id: string;
    content: string;
    decision: string;
    extractor: string;
    valid_from: string;
    valid_to: string | null;
    status: string;
    superseded_by_episode: string | null;
  }>;
  marks: Array<{ kind: string; at: string; reason: string; importance: number | null }>;
  /** What outcome grading did to it, in `sqrl show`'s words. */
  notes: string[];
  episodes: Array<{ episode_id: string; start_ts: string; end_ts: string; summary: string; outcome: string }>;
  events: Array<{ event_id: string; timestamp: string; event_type: string; text: string }>;
}

type Panel = "none" | "edit" | "forget" | "wrong";

export function MemoryScreen(props: { project: string; id: string }) {
  const [load, reload] = useLoad(
    () => api<Detail>(`memories/${encodeURIComponent(props.id)}${qs({ project: props.project })}`),
    [props.project, props.id],
  );
  return <Loaded load={load}>{(d) => <MemoryView d={d} project={props.project} reload={reload} />}</Loaded>;
}

function MemoryView(props: { d: Detail; project: string; reload: () => void }) {
  const { d } = props;
  const m = d.item;
  const [panel, setPanel] = useState<Panel>("none");
  const [draft, setDraft] = useState(m.content);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const act = async (action: string, body: Record<string, unknown>, message: string) => {
    setBusy(true);
    setError(null);
    try {
      const res = await api<{ memory_id: string }>(
        `memories/${encodeURIComponent(m.memory_id)}/${action}${qs({ project: props.project })}`,
        { method: "POST", body },
      );
      setPanel("none");
      setDone(message);
      if (res.memory_id !== m.memory_id) navigate(href(`memories/${encodeURIComponent(res.memory_id)}`));
      else props.reload();
    } catch (e) {
      setError(e instanceof ApiFailure ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const active = m.status === "active";
  // Global style lives in user.db, shared by all projects: it can be edited or forgotten, not pinned or marked here.
  const global = m.memory_id.startsWith("ust_");
  const wrong = d.marks.find((x) => x.kind === "wrong");

  return (
    <div data-screen="memory" data-memory-id={m.memory_id} data-status={m.status}>
      <p class="small">
        <Link to={href("memories")}>← Memories</Link>
      </p>
      <div class="card stack">
        <div class="row">
          <TypeBadge type={m.type} />
          <span class="mono">{m.key}</span>
          <StatusBadge status={m.status} />
          {m.pinned && <span class="badge pin">pinned</span>}
          {m.wrong && <span class="badge bad">marked wrong</span>}
          <span class="spacer" />
          <span class="muted small mono">{m.memory_id}</span>
        </div>
        <h1 data-content>{m.content}</h1>
        <div class="muted small">
          {m.origin && <span data-origin>{m.origin} · </span>}
          {m.scope} scope · importance {m.importance.toFixed(2)} · confidence {m.confidence.toFixed(2)} · made by{" "}
          {m.extractor} ({m.decision}) · last seen {ago(m.updated_at)}
          {d.tags.length > 0 && ` · tags ${d.tags.join(", ")}`}
          {d.file_paths.length > 0 && ` · files ${d.file_paths.join(", ")}`}
        </div>
        {global && (
          <p class="muted small">
            Global style: learnt across your projects and kept in ~/.sqrl/user.db, so editing or forgetting it applies
            everywhere.
          </p>
        )}
        {d.notes.map((n) => (
          <p class="muted small" data-note key={n}>
            {n}
          </p>
        ))}
        {wrong && (
          <p class="err">
            Marked wrong {when(wrong.at)}: “{wrong.reason}”. No session, re-read file, import or sync makes it again.
          </p>
        )}
        {m.superseded_by && (
          <p>
            Replaced by <Link to={href(`memories/${encodeURIComponent(m.superseded_by)}`)}>{m.superseded_by}</Link>.
          </p>
        )}
        {active && (
          <div class="actions">
            <button onClick={() => setPanel(panel === "edit" ? "none" : "edit")} disabled={busy} data-action="edit">
              Edit
            </button>
            {!global && (
              <button
                onClick={() =>
                  act(
                    "pin",
                    { pinned: !m.pinned },
                    m.pinned ? "Unpinned." : "Pinned: always eligible, importance fixed at 1.",
                  )
                }
                disabled={busy}
                data-action="pin"
              >
                {m.pinned ? "Unpin" : "Pin"}
              </button>
            )}
            <button
              class="danger"
              onClick={() => setPanel(panel === "forget" ? "none" : "forget")}
              disabled={busy}
              data-action="forget"
            >
              Forget
            </button>
            {!global && (
              <button
                class="danger"
                onClick={() => setPanel(panel === "wrong" ? "none" : "wrong")}
                disabled={busy}
                data-action="wrong"
              >
                Mark wrong
              </button>
            )}
          </div>
        )}
        {panel === "edit" && (
          <div class="inline-form stack">
            <label class="small muted" for="edit-text">
              New wording — saved as a new version; this one is kept in the history.
            </label>
            <textarea
              id="edit-text"
              rows={3}
              value={draft}
              onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
            />
            <div class="row">
              <button
                class="primary"
                disabled={busy || draft.trim().length < 3 || draft.trim() === m.content}
                onClick={() => act("edit", { content: draft.trim() }, "Saved as a new version.")}
                data-confirm="edit"
              >
                Save new version
              </button>
              <button onClick={() => setPanel("none")}>Cancel</button>
            </div>
          </div>
        )}
        {panel === "forget" && (
          <div class="inline-form row">
            <span>
              Forget this memory? It leaves every view, search and task context and is not learned again; the history
              stays here.
            </span>
            <button
              class="primary"
              disabled={busy}
              onClick={() => act("forget", {}, "Forgotten.")}
              data-confirm="forget"
            >
              Forget it
            </button>
            <button onClick={() => setPanel("none")}>Cancel</button>
          </div>
        )}
        {panel === "wrong" && (
          <div class="inline-form stack">
            <label class="small muted" for="wrong-reason">
              What is wrong? The memory is forgotten, the reason kept, and no session, re-read file, import or sync
              makes it again.
            </label>
            <input
              id="wrong-reason"
              type="text"
              value={reason}
              onInput={(e) => setReason((e.target as HTMLInputElement).value)}
              placeholder="e.g. we moved off Express in March"
            />
            <div class="row">
              <button
                class="primary"
                disabled={busy || reason.trim() === ""}
                onClick={() => act("wrong", { reason: reason.trim() }, "Marked wrong and forgotten.")}
                data-confirm="wrong"
              >
                Mark wrong
              </button>
              <button onClick={() => setPanel("none")}>Cancel</button>
            </div>
          </div>
        )}
        {done && (
          <p class="muted" role="status">
            {done}
          </p>
        )}
        {error && <p class="err">{error}</p>}
      </div>
      <div class="two" style={{ marginTop: "14px" }}>
        <div class="card">
          <h3>
            Lineage ({d.lineage.length} version{d.lineage.length === 1 ? "" : "s"})
          </h3>
          <ol class="lineage">
            {d.lineage.map((v) => (
              <li key={v.memory_id} class={v.memory_id === m.memory_id ? "here" : ""}>
                <div class="row small">
                  <StatusBadge status={v.status} />
                  <span class="muted">
                    {v.decision} by {v.extractor} · {when(v.valid_from)} → {v.valid_to ? when(v.valid_to) : "now"}
                  </span>
                </div>
                <div>
                  {v.memory_id === m.memory_id ? (
                    <strong>{v.content}</strong>
                  ) : (
                    <Link to={href(`memories/${encodeURIComponent(v.memory_id)}`)}>{v.content}</Link>
                  )}
                </div>
              </li>
            ))}
          </ol>
        </div>
        <div class="card">
          <h3>Evidence</h3>
          {d.episodes.length === 0 && d.events.length === 0 && (
            <p class="muted">No recorded evidence (made by hand or imported).</p>
          )}
          {d.episodes.map((e) => (
            <p key={e.episode_id}>
              <Link to={href(`episodes/${encodeURIComponent(e.episode_id)}`)}>Episode {when(e.start_ts)}</Link>{" "}
              {e.outcome && <span class="badge">{e.outcome}</span>}
              <br />
              <span class="muted">{e.summary}</span>
            </p>
          ))}
          {d.events.length > 0 && (
            <table class="events">
              <tbody>
                {d.events.map((e) => (
                  <tr key={e.event_id}>
                    <td class="muted small">{when(e.timestamp)}</td>
                    <td>
                      <span class="badge">{e.event_type}</span>
                    </td>
                    <td>{e.text}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
    </div>
  );
}
