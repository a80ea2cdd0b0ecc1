import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "../api.ts";
import { TypeBadge, useLoad } from "../bits.tsx";
import { href, Link } from "../router.tsx";

/**
 * Screen 4: what the agent sees. The exact get_task_context answer (markdown with its reasons and
 * budget footer) for a task, files and budget; the three views as served; the SessionStart hook's
 * text. All come from the same engine calls the MCP tools and the hook make.
 */
interface View {
  markdown: string;
  token_estimate: number;
}
interface AgentAnswer {
  task_context: (View & { has_relevant_memory: boolean; selected_memories: Array<{ memory_id: string; type: string; content: string; reason: string }> }) | null;
  views: Record<"user_style" | "project_brief" | "pitfalls", View>;
  session_start: { additionalContext: string; token_estimate: number; budget: number; error: string | null };
}

export function AgentScreen(props: { project: string }) {
  const [task, setTask] = useState("");
  const [files, setFiles] = useState<string[]>([]);
  const [fileText, setFileText] = useState("");
  const [known] = useLoad(() => api<{ files: string[] }>(`files?project=${encodeURIComponent(props.project)}`), [props.project]);
  const addFile = (raw: string) => {
    const picked = raw.split(/[\n,]/).map((f) => f.trim()).filter(Boolean);
    if (picked.length > 0) setFiles((cur) => [...new Set([...cur, ...picked])]);
    setFileText("");
  };
  const [budget, setBudget] = useState("");
  const [answer, setAnswer] = useState<AgentAnswer | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async (withTask: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const b = Number(budget);
      const body = {
        task: withTask ? task : "",
        files: [...files, ...fileText.split(/[\n,]/).map((f) => f.trim()).filter(Boolean)],
        ...(Number.isInteger(b) && b > 0 ? { budget: b } : {}),
      };
      setAnswer(await api<AgentAnswer>(`agent?project=${encodeURIComponent(props.project)}`, { method: "POST", body }));
    } catch (e) {
      setError(e instanceof ApiFailure ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setAnswer(null);
    void run(false);
  }, [props.project]);

  return (
    <div data-screen="agent">
      <h1>What the agent sees</h1>
      <p class="sub">Exactly what sqrl hands your coding agent: the task context for a task you type, the three views, and the text injected at session start.</p>
      <div class="card stack">
        <label class="small muted" for="task">
          Task
        </label>
        <textarea id="task" rows={2} placeholder="e.g. Fix the failing JWT login tests" value={task} onInput={(e) => setTask((e.target as HTMLTextAreaElement).value)} />
        <div class="row">
          <input
            type="text"
            aria-label="Files"
            list="known-files"
            placeholder="Active files (optional): pick or type a path, Enter to add"
            value={fileText}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              // A pick from the list lands whole: add it at once.
              if (known.state === "ok" && known.value.files.includes(v)) addFile(v);
              else setFileText(v);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                addFile(fileText);
              }
            }}
            style={{ flex: "1" }}
          />
          <datalist id="known-files">{known.state === "ok" && known.value.files.map((f) => <option key={f} value={f} />)}</datalist>
          <input type="number" aria-label="Budget" placeholder="Budget (tokens)" min={1} max={100000} value={budget} onInput={(e) => setBudget((e.target as HTMLInputElement).value)} style={{ width: "150px" }} />
          <button class="primary" disabled={busy || task.trim() === ""} onClick={() => run(true)} data-action="task-context">
            Show task context
          </button>
        </div>
        {files.length > 0 && (
          <div class="row" data-files>
            {files.map((f) => (
              <button key={f} class="chip on" title="Remove" onClick={() => setFiles(files.filter((x) => x !== f))}>
                {f} ×
              </button>
            ))}
          </div>
        )}
        {error && <p class="err">{error}</p>}
      </div>
      {answer?.task_context && (
        <div class="card stack" style={{ marginTop: "14px" }} data-task-context>
          <div class="row">
            <h2>get_task_context</h2>
            <span class="badge">{answer.task_context.token_estimate} tokens</span>
            {!answer.task_context.has_relevant_memory && <span class="badge warn">abstains</span>}
          </div>
          <pre data-markdown="task_context">{answer.task_context.markdown}</pre>
          {answer.task_context.selected_memories.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th>Memory</th>
                  <th>Why it was chosen</th>
                </tr>
              </thead>
              <tbody>
                {answer.task_context.selected_memories.map((s) => (
                  <tr key={s.memory_id}>
                    <td>
                      <TypeBadge type={s.type} /> <Link to={href(`memories/${encodeURIComponent(s.memory_id)}`)}>{s.content}</Link>
                    </td>
                    <td class="muted">{s.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      {answer && (
        <>
          <div class="card stack" style={{ marginTop: "14px" }}>
            <div class="row">
              <h2>SessionStart hook</h2>
              <span class="badge">
                ≤ {answer.session_start.token_estimate} of {answer.session_start.budget} tokens
              </span>
            </div>
            {answer.session_start.error && <p class="err">{answer.session_start.error}</p>}
            <pre data-markdown="session_start">{answer.session_start.additionalContext || "(nothing injected)"}</pre>
          </div>
          <div class="grid" style={{ marginTop: "14px" }}>
            {(["user_style", "project_brief", "pitfalls"] as const).map((name) => (
              <div class="card stack" key={name}>
                <div class="row">
                  <h2>{name} view</h2>
                  <span class="badge">{answer.views[name].token_estimate} tokens</span>
                </div>
                <pre data-markdown={name}>{answer.views[name].markdown}</pre>
              </div>
            ))}
          </div>
        </>
      )}
    </div>
  );
}
