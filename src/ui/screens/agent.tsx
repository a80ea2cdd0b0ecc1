import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure } from "../api.ts";
import { TypeBadge, useLoad } from "../bits.tsx";
import { href, Link } from "../router.tsx";

/**
 * Screen 4: what the agent sees. The exact get_task_context answer (markdown with its reasons and
 * budget footer) for a task, files and budget; the three views as served; the SessionStart hook's
 * text. All come from the same engine calls the MCP tools and the hook make.
 */
/** One MCP tool's answer as the host gets it: the text content, the structured JSON it forwards to the model. */
interface ToolShown {
  text: string;
  structured: { project: string; has_relevant_memory: boolean; markdown: string } | null;
  is_error: boolean;
}
interface AgentAnswer {
  task_context: ToolShown | null;
  /** The engine's selection behind it: ids (for links) and the reason each was picked. */
  selected_memories: Array<{ memory_id: string; type: string; content: string; reason: string }> | null;
  views: Record<"user_style" | "project_brief" | "pitfalls", ToolShown>;
  session_start: { additionalContext: string; token_estimate: number; budget: number; error: string | null };
}

function footerTokens(text: string): string | undefined {
  return /Budget: ~(\d+)\/(\d+) tokens/.exec(text)?.slice(1, 3).join(" of ");
}

function ToolCard(props: { name: string; shown: ToolShown; id: string }) {
  const t = footerTokens(props.shown.text);
  return (
    <div class="card stack" data-tool={props.id}>
      <div class="row">
        <h2>{props.name}</h2>
        {t && <span class="badge">{t} tokens</span>}
        {props.shown.structured && !props.shown.structured.has_relevant_memory && (
          <span class="badge warn">nothing relevant</span>
        )}
        {props.shown.is_error && <span class="badge bad">error</span>}
      </div>
      <pre data-markdown={props.id}>{props.shown.text}</pre>
      {props.shown.structured && (
        <details>
          <summary class="muted small">The JSON the host forwards to the model (structuredContent)</summary>
          <pre>{JSON.stringify(props.shown.structured)}</pre>
        </details>
      )}
    </div>
  );
}

export function AgentScreen(props: { project: string }) {
  const [task, setTask] = useState("");
  const [files, setFiles] = useState<string[]>([]);
  const [fileText, setFileText] = useState("");
  const [known] = useLoad(
    () => api<{ files: string[] }>(`files?project=${encodeURIComponent(props.project)}`),
    [props.project],
  );
  const addFile = (raw: string) => {
    const picked = raw
      .split(/[\n,]/)
      .map((f) => f.trim())
      .filter(Boolean);
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
        files: [
          ...files,
          ...fileText
            .split(/[\n,]/)
            .map((f) => f.trim())
            .filter(Boolean),
        ],
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
      <p class="sub">
        Exactly what sqrl hands your coding agent: the task context for a task you type, the three views, and the text
        injected at session start.
      </p>
      <div class="card stack">
        <label class="small muted" for="task">
          Task
        </label>
        <textarea
          id="task"
          rows={2}
          placeholder="e.g. Fix the failing JWT login tests"
          value={task}
          onInput={(e) => setTask((e.target as HTMLTextAreaElement).value)}
        />
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
          <datalist id="known-files">
            {known.state === "ok" && known.value.files.map((f) => <option key={f} value={f} />)}
          </datalist>
          <input
            type="number"
            aria-label="Budget"
            placeholder="Budget (tokens)"
            min={1}
            max={100000}
            value={budget}
            onInput={(e) => setBudget((e.target as HTMLInputElement).value)}
            style={{ width: "150px" }}
          />
          <button
            class="primary"
            disabled={busy || task.trim() === ""}
            onClick={() => run(true)}
            data-action="task-context"
          >
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
        <div class="stack" style={{ marginTop: "14px" }} data-task-context>
          <ToolCard name="get_task_context" id="task_context" shown={answer.task_context} />
          {answer.selected_memories && answer.selected_memories.length > 0 && (
            <div class="card">
              <h3>Why each memory was chosen</h3>
              <table>
                <tbody>
                  {answer.selected_memories.map((s) => (
                    <tr key={s.memory_id}>
                      <td>
                        <TypeBadge type={s.type} />{" "}
                        <Link to={href(`memories/${encodeURIComponent(s.memory_id)}`)}>{s.content}</Link>
                      </td>
                      <td class="muted">{s.reason}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
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
          <div class="stack" style={{ marginTop: "14px" }}>
            <ToolCard name="get_user_style_view" id="user_style" shown={answer.views.user_style} />
            <ToolCard name="get_project_brief_view" id="project_brief" shown={answer.views.project_brief} />
            <ToolCard name="get_pitfalls_view" id="pitfalls" shown={answer.views.pitfalls} />
          </div>
        </>
      )}
    </div>
  );
}
