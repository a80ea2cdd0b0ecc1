import type { ComponentChildren } from "preact";
import { useLayoutEffect, useState } from "preact/hooks";
import { ApiFailure } from "./api.ts";

/** Small shared pieces of the screens: loading state, badges, times, the 404 screen. */
export type Load<T> = { state: "loading" } | { state: "ok"; value: T } | { state: "error"; error: ApiFailure };

export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): [Load<T>, () => void] {
  const [load, setLoad] = useState<Load<T>>({ state: "loading" });
  const [tick, setTick] = useState(0);
  // A layout effect starts the request right after the render, not after the next paint (one frame sooner).
  useLayoutEffect(() => {
    let live = true;
    fn().then(
      (value) => live && setLoad({ state: "ok", value }),
      (error: unknown) =>
        live &&
        setLoad({
          state: "error",
          error: error instanceof ApiFailure ? error : new ApiFailure(0, "error", String(error)),
        }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return [load, () => setTick((t) => t + 1)];
}

export function Loaded<T>(props: { load: Load<T>; children: (value: T) => ComponentChildren }) {
  const l = props.load;
  if (l.state === "loading")
    return (
      <p class="muted" data-loading>
        Loading…
      </p>
    );
  if (l.state === "error")
    return l.error.status === 404 ? <NotFound message={l.error.message} /> : <p class="err">{l.error.message}</p>;
  return <>{props.children(l.value)}</>;
}

export function NotFound(props: { message?: string }) {
  return (
    <div class="card empty" data-screen="not-found">
      <h1>Not found</h1>
      <p>{props.message ?? "There is no such page here."}</p>
      <p>
        <a href="/ui/">Back to the overview</a>
      </p>
    </div>
  );
}

export const TYPE_LABEL: Record<string, string> = {
  user_style: "style",
  project_fact: "fact",
  pitfall: "pitfall",
  recipe: "recipe",
};

export function TypeBadge(props: { type: string }) {
  return <span class={`badge t-${props.type}`}>{TYPE_LABEL[props.type] ?? props.type}</span>;
}

export function StatusBadge(props: { status: string }) {
  const cls = props.status === "active" ? "ok" : props.status === "forgotten" ? "bad" : "warn";
  return <span class={`badge ${cls}`}>{props.status}</span>;
}

export function ago(iso: string | null | undefined): string {
  if (!iso) return "never";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86_400 * 60) return `${Math.floor(s / 86_400)} d ago`;
  return iso.slice(0, 10);
}

/** A stored UTC time in the reader's own time zone, to the minute. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

let home = "";
/** The daemon's home folder, so project paths under it read `~/…`. */
export function setHome(h: string): void {
  home = h.replace(/\/+$/, "");
}
export function shortPath(p: string): string {
  return home && (p === home || p.startsWith(`${home}/`)) ? `~${p.slice(home.length)}` : p;
}
