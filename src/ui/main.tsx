import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, onTrouble, prefetch, type Trouble } from "./api.ts";
import { NotFound, setHome, shortPath, useLoad } from "./bits.tsx";
import { href, Link, navigate, useLocation } from "./router.tsx";
import { AgentScreen } from "./screens/agent.tsx";
import { CallsScreen } from "./screens/calls.tsx";
import { EpisodeScreen } from "./screens/episode.tsx";
import { MemoriesScreen, memoriesPath } from "./screens/memories.tsx";
import { MemoryScreen } from "./screens/memory.tsx";
import { OverviewScreen, overviewPath, type Projects } from "./screens/overview.tsx";

/**
 * The shell of `sqrl ui`: top bar (project, screens, theme), the daemon-stopped banner, and the
 * screen for the current address. The daemon is polled every few seconds so a stopped daemon shows a
 * banner instead of a page that silently stops working.
 */
type Theme = "auto" | "light" | "dark";

/** A path segment decoded; a broken %-escape is kept as typed (the screen then says the id is unknown). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function applyTheme(t: Theme): void {
  const dark = t === "dark" || (t === "auto" && window.matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

const TABS: Array<[string, string]> = [
  ["", "Overview"],
  ["memories", "Memories"],
  ["agent", "What the agent sees"],
  ["calls", "Calls"],
];

function App() {
  const loc = useLocation();
  const project = loc.params.get("project") ?? "";
  const [trouble, setTrouble] = useState<Trouble>(null);
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem("sqrl-theme") as Theme | null) ?? "auto");
  const [projects] = useLoad(async () => {
    const p = await api<Projects>("projects");
    setHome(p.home);
    return p;
  }, []);

  useEffect(() => onTrouble(setTrouble), []);
  useEffect(() => {
    applyTheme(theme);
    localStorage.setItem("sqrl-theme", theme);
    const mq = window.matchMedia("(prefers-color-scheme: dark)");
    const l = () => applyTheme(theme);
    mq.addEventListener("change", l);
    return () => mq.removeEventListener("change", l);
  }, [theme]);
  useEffect(() => {
    const timer = setInterval(() => void api("health").catch(() => {}), 3000);
    return () => clearInterval(timer);
  }, []);
  // One registered project and none picked: pick it.
  useEffect(() => {
    if (!project && projects.state === "ok" && projects.value.projects.length === 1) {
      const s = new URLSearchParams(location.search);
      s.set("project", projects.value.projects[0]!.project_id);
      navigate(`${location.pathname}?${s}`, true);
    }
  }, [project, projects]);

  const sub = loc.path.replace(/^\/ui\/?/, "").replace(/\/$/, "");
  const [screen, arg] = sub.split("/");
  let body;
  if (sub === "") body = <OverviewScreen project={project} projects={projects} />;
  else if (screen === "memories" && arg === undefined) body = <MemoriesScreen project={project} params={loc.params} />;
  else if (screen === "memories" && arg) body = <MemoryScreen project={project} id={decoded(arg)} />;
  else if (screen === "agent" && arg === undefined) body = <AgentScreen project={project} />;
  else if (screen === "calls" && arg === undefined) body = <CallsScreen project={project} />;
  else if (screen === "episodes" && arg) body = <EpisodeScreen project={project} id={decoded(arg)} />;
  else body = <NotFound />;
  const needsProject = sub !== "" && !project && !(screen === undefined);

  return (
    <>
      <header class="top">
        <Link to={href("")} class="brand">
          <span>▲</span> sqrl
        </Link>
        <nav class="tabs">
          {TABS.map(([path, label]) => (
            <Link key={path} to={href(path)} class={(path === "" ? sub === "" : screen === path) ? "on" : ""}>
              {label}
            </Link>
          ))}
        </nav>
        <div class="spacer" />
        {projects.state === "ok" && projects.value.projects.length > 0 && (
          <select
            class="project-pick"
            aria-label="Project"
            value={project}
            onChange={(e) => {
              const s = new URLSearchParams(location.search);
              s.set("project", (e.target as HTMLSelectElement).value);
              navigate(`${location.pathname}?${s}`);
            }}
          >
            {!project && <option value="">Pick a project…</option>}
            {projects.value.projects.map((p) => (
              <option key={p.project_id} value={p.project_id}>
                {shortPath(p.project_id)}
              </option>
            ))}
          </select>
        )}
        <select
          aria-label="Theme"
          value={theme}
          onChange={(e) => setTheme((e.target as HTMLSelectElement).value as Theme)}
        >
          <option value="auto">Auto theme</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
      </header>
      {trouble === "daemon_down" && (
        <div class="banner" role="alert" data-banner="daemon-down">
          The sqrl daemon stopped: this page shows what it last loaded. Start it again with{" "}
          <code>sqrl daemon start</code> (or run <code>sqrl ui</code>); the page reconnects by itself.
        </div>
      )}
      {trouble === "session" && (
        <div class="banner info" role="alert" data-banner="session">
          This page's session ended (the daemon restarted, or this tab was not opened by <code>sqrl ui</code>). Run{" "}
          <code>sqrl ui</code> again to log in.
        </div>
      )}
      <main>{needsProject ? <p class="muted">Pick a project at the top right.</p> : body}</main>
    </>
  );
}

// The first screen's data is asked for now, in parallel with the first render (effects run after paint).
{
  const params = new URLSearchParams(location.search);
  const project = params.get("project") ?? "";
  const sub = location.pathname.replace(/^\/ui\/?/, "").replace(/\/$/, "");
  prefetch("projects");
  if (project && sub === "") prefetch(overviewPath(project));
  if (project && sub === "memories") prefetch(memoriesPath(project, params));
}
render(<App />, document.getElementById("app")!);
