import { useEffect, useState } from "preact/hooks";
import { api, qs, type MemoryRow } from "../api.ts";
import { ago, fmt, Loaded, StatusBadge, TypeBadge, useLoad } from "../bits.tsx";
import { InlineText, subjectOf } from "../readable.tsx";
import { href, Link, navigate } from "../router.tsx";

/**
 * Screen 2: the memory list. Filters (type, scope, status) and search live in the address bar; the
 * engine pages in SQL (newest first) or, with search text on active items, ranks with the
 * search_memory ranker. PAGE rows a page keeps the list fast at 10,000 memories.
 */
interface MemoryList {
  total: number;
  offset: number;
  limit: number;
  items: MemoryRow[];
}

const PAGE = 50;
const TYPES = ["user_style", "project_fact", "pitfall", "recipe"];

/** The page API call for the list the address describes (main.tsx starts it before the first render). */
export function memoriesPath(project: string, p: URLSearchParams): string {
  return `memories${qs({ project, type: p.getAll("type"), scope: p.get("scope") ?? "", status: p.get("status") ?? "active", q: p.get("q") ?? "", offset: Number(p.get("offset") ?? 0) || 0, limit: PAGE })}`;
}

export function MemoriesScreen(props: { project: string; params: URLSearchParams }) {
  const p = props.params;
  const types = p.getAll("type");
  const scope = p.get("scope") ?? "";
  const status = p.get("status") ?? "active";
  const q = p.get("q") ?? "";
  const offset = Number(p.get("offset") ?? 0) || 0;
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);

  const set = (changes: Record<string, string | string[] | undefined>) => {
    const s = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(changes)) {
      s.delete(k);
      if (Array.isArray(v)) for (const x of v) s.append(k, x);
      else if (v) s.set(k, v);
    }
    if (!("offset" in changes)) s.delete("offset");
    navigate(`/ui/memories?${s}`, true);
  };
  // Search as you type, after a short pause.
  useEffect(() => {
    if (text === q) return;
    const t = setTimeout(() => set({ q: text || undefined }), 200);
    return () => clearTimeout(t);
  }, [text]);

  const [load] = useLoad(
    () => api<MemoryList>(memoriesPath(props.project, p)),
    [props.project, types.join(","), scope, status, q, offset],
  );

  return (
    <div data-screen="memories">
      <h1>Memories</h1>
      <p class="sub">Everything sqrl remembers about this project, why it exists and where it came from.</p>
      <div class="filters">
        <input
          type="search"
          placeholder="Search memories (same ranking as search_memory)…"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
          aria-label="Search"
        />
        <div class="row">
          {TYPES.map((t) => {
            const on = types.includes(t);
            return (
              <button
                key={t}
                class={`chip${on ? " on" : ""}`}
                aria-pressed={on}
                data-type-filter={t}
                onClick={() => set({ type: on ? types.filter((x) => x !== t) : [...types, t] })}
              >
                {t}
              </button>
            );
          })}
        </div>
        <select
          aria-label="Scope"
          value={scope}
          onChange={(e) => set({ scope: (e.target as HTMLSelectElement).value || undefined })}
        >
          <option value="">Any scope</option>
          <option value="project">project</option>
          <option value="user">user</option>
        </select>
        <select
          aria-label="Status"
          value={status}
          onChange={(e) => set({ status: (e.target as HTMLSelectElement).value })}
        >
          <option value="active">Active</option>
          <option value="superseded">Superseded</option>
          <option value="forgotten">Forgotten</option>
          <option value="all">All</option>
        </select>
      </div>
      <Loaded load={load}>
        {(list) => (
          <>
            <p class="muted small" data-total={list.total}>
              {list.total === 0
                ? types.length === 0 && !q && status === "active"
                  ? "Nothing learned yet: sqrl distils memory from this project's agent sessions and commits once they are captured (sqrl status shows what waits)."
                  : "No memory matches."
                : `${fmt(list.offset + 1)}–${fmt(list.offset + list.items.length)} of ${fmt(list.total)}${q && status === "active" ? " best matches" : ""}`}
            </p>
            {list.items.length > 0 && (
              <div class="mem-list">
                {list.items.map((m) => (
                  <MemoryItemRow key={m.memory_id} m={m} />
                ))}
              </div>
            )}
            {list.total > PAGE && (
              <div class="pager">
                <button disabled={offset === 0} onClick={() => set({ offset: String(Math.max(0, offset - PAGE)) })}>
                  ← Newer
                </button>
                <span class="muted">
                  page {fmt(Math.floor(offset / PAGE) + 1)} of {fmt(Math.ceil(list.total / PAGE))}
                </span>
                <button disabled={offset + PAGE >= list.total} onClick={() => set({ offset: String(offset + PAGE) })}>
                  Older →
                </button>
              </div>
            )}
          </>
        )}
      </Loaded>
    </div>
  );
}

function MemoryItemRow(props: { m: MemoryRow }) {
  const m = props.m;
  return (
    <Link to={href(`memories/${encodeURIComponent(m.memory_id)}`)} class="mem">
      <div class="row" data-memory-row={m.memory_id}>
        <TypeBadge type={m.type} />
        <span class="small subject" title={`key: ${m.key}`} data-subject>
          {subjectOf(m.key, m.content)}
        </span>
        {m.scope === "user" && (
          <span class="badge" title="Global style, shared by all your projects (user.db)">
            global
          </span>
        )}
        {m.status !== "active" && <StatusBadge status={m.status} />}
        {m.pinned && <span class="badge pin">pinned</span>}
        {m.wrong && <span class="badge bad">marked wrong</span>}
        {m.score !== undefined && <span class="badge">score {m.score.toFixed(2)}</span>}
      </div>
      <div class="content">
        <InlineText text={m.content} />
      </div>
      <div class="why">
        {m.evidence.quote && (
          <>
            <q>{m.evidence.quote}</q> ·{" "}
          </>
        )}
        {m.evidence.episode_count + m.evidence.event_count === 0
          ? `no recorded evidence (${m.extractor})`
          : `${m.evidence.episode_count} episode${m.evidence.episode_count === 1 ? "" : "s"} · ${m.evidence.event_count} event${m.evidence.event_count === 1 ? "" : "s"}`}{" "}
        {m.origin && <span data-origin> · {m.origin}</span>} · last seen {ago(m.updated_at)} · importance{" "}
        {m.importance.toFixed(2)}
        {m.replaced > 0 && ` · replaced ${m.replaced} version${m.replaced === 1 ? "" : "s"}`}
        {m.reason && ` · ${m.reason}`}
      </div>
    </Link>
  );
}
