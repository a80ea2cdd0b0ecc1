/**
 * The page's calls to its own API (/ui/api/…): same origin, the session cookie goes along by itself,
 * and every call carries the page key in the `x-sqrl-page` header (src/daemon/ui/auth.ts). The key
 * arrives once, inside the page the login answered; it is kept in this origin's session storage (a
 * page on another port cannot read it, unlike the cookie), never in a cookie or a URL.
 * A refused connection means the daemon stopped (the banner says so); a 401 means the session ended
 * (daemon restarted): both are reported to the shell through `onTrouble`.
 */
const KEY_STORE = "sqrl-page-key";

/** Take the key out of the page the login answered (if this is that page) and keep it for this tab. */
function pageKey(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="sqrl-page-key"]');
  if (meta) {
    sessionStorage.setItem(KEY_STORE, meta.content);
    meta.remove();
    // The login was a POST: make this entry a plain address, so reloading does not post the used code again.
    history.replaceState(history.state, "", location.href);
  }
  return sessionStorage.getItem(KEY_STORE) ?? "";
}

const KEY = pageKey();

export type Trouble = "daemon_down" | "session" | null;

let report: (t: Trouble) => void = () => {};
export function onTrouble(fn: (t: Trouble) => void): void {
  report = fn;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** GETs started before the first render (see main.tsx), handed to the first screen that asks. */
const early = new Map<string, Promise<unknown>>();

/** Start a GET now (at script start, before rendering and effects) for the screen about to ask for it. */
export function prefetch(path: string): void {
  if (early.has(path)) return;
  const started = request(path);
  started.catch(() => {}); // a failure is reported to the screen that consumes it
  early.set(path, started);
}

export async function api<T>(path: string, init: { method?: "GET" | "POST"; body?: unknown } = {}): Promise<T> {
  if ((init.method ?? "GET") === "GET" && init.body === undefined) {
    const started = early.get(path);
    if (started) {
      early.delete(path);
      return started as Promise<T>;
    }
  }
  return request<T>(path, init);
}

async function request<T>(path: string, init: { method?: "GET" | "POST"; body?: unknown } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/ui/api/${path}`, {
      method: init.method ?? "GET",
      headers: {
        "x-sqrl-page": KEY,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch {
    report("daemon_down");
    throw new ApiFailure(0, "daemon_down", "The sqrl daemon does not answer.");
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (res.status === 401) report("session");
  if (!res.ok) {
    const e = (body ?? {}) as { error?: string; code?: string };
    throw new ApiFailure(res.status, e.code ?? "error", e.error ?? `HTTP ${res.status}`);
  }
  report(null);
  return body as T;
}

/** Query string of the defined values (arrays repeat the key). */
export function qs(params: Record<string, string | number | readonly string[] | undefined | null>): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) for (const x of v) s.append(k, x);
    else s.set(k, String(v));
  }
  const out = s.toString();
  return out ? `?${out}` : "";
}

/** Shapes the page reads (a subset of src/shared/api.ts; the page bundle does not ship zod). */
export interface MemoryRow {
  memory_id: string;
  type: string;
  scope: string;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  confidence: number;
  created_at: string;
  updated_at: string;
  status: "active" | "superseded" | "forgotten";
  pinned: boolean;
  wrong: boolean;
  decision: string;
  extractor: string;
  /** Who said it: "From CLAUDE.md:12", "You said it", "Learned from your sessions" … */
  origin: string;
  evidence: { quote: string; episode_id: string | null; episode_count: number; event_count: number };
  replaced: number;
  superseded_by: string | null;
  score?: number;
  reason?: string;
}
