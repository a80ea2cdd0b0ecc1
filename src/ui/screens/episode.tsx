import { api, qs } from "../api.ts";
import { Loaded, useLoad, when } from "../bits.tsx";
import { href, Link } from "../router.tsx";

/** One episode recalled: its summary and its raw events (the evidence a memory links to). */
interface Recall {
  episode: {
    episode_id: string;
    start_ts: string;
    end_ts: string;
    event_count: number;
    summary: string;
    outcome: string;
    file_paths: string[];
  };
  events: Array<{ event_id: string; timestamp: string; event_type: string; text: string; file_paths: string[] }>;
  events_total: number;
}

export function EpisodeScreen(props: { project: string; id: string }) {
  const [load] = useLoad(
    () => api<Recall>(`episodes/${encodeURIComponent(props.id)}${qs({ project: props.project })}`),
    [props.project, props.id],
  );
  return (
    <Loaded load={load}>
      {(r) => (
        <div data-screen="episode" class="stack">
          <p class="small">
            <Link to={href("calls")}>← Timeline</Link>
          </p>
          <div class="card stack">
            <div class="row">
              <h1>Episode {when(r.episode.start_ts)}</h1>
              {r.episode.outcome && <span class="badge">{r.episode.outcome}</span>}
            </div>
            <p>{r.episode.summary}</p>
            <p class="muted small">
              {when(r.episode.start_ts)} → {when(r.episode.end_ts)} · {r.episode.event_count} events
              {r.episode.file_paths.length > 0 ? ` · ${r.episode.file_paths.join(", ")}` : ""}
            </p>
          </div>
          <div class="card">
            <h3>
              Events ({r.events.length} of {r.events_total})
            </h3>
            <table class="events">
              <tbody>
                {r.events.map((e) => (
                  <tr key={e.event_id}>
                    <td class="muted small">{when(e.timestamp)}</td>
                    <td>
                      <span class="badge">{e.event_type}</span>
                    </td>
                    <td>
                      <pre>{e.text}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </Loaded>
  );
}
