import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/**
 * Client-side routes under /ui/: the address bar is the state (screen, project, filters), so every
 * view can be linked, reloaded and driven by tests. `?project=` is carried along by `href()`.
 */
export interface Location {
  path: string;
  params: URLSearchParams;
}

function current(): Location {
  return { path: location.pathname, params: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => listeners.forEach((l) => l()));

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.scrollTo(0, 0);
  listeners.forEach((l) => l());
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const l = () => setLoc(current());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return loc;
}

/** A /ui/ link that keeps the selected project. */
export function href(path: string, params: Record<string, string | undefined> = {}): string {
  const s = new URLSearchParams();
  const project = new URLSearchParams(location.search).get("project");
  if (project && !("project" in params)) s.set("project", project);
  for (const [k, v] of Object.entries(params)) if (v) s.set(k, v);
  const q = s.toString();
  return `/ui/${path}${q ? `?${q}` : ""}`;
}

export function Link(props: { to: string; class?: string; children: ComponentChildren; title?: string }) {
  return (
    <a
      href={props.to}
      class={props.class}
      title={props.title}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
