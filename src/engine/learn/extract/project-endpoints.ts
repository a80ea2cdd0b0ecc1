/**
 * Rule `project-endpoints`: HTTP endpoints the repo defines, seen in code the sessions wrote (edits)
 * or read (file contents returned by a read tool): Express/Hono/Fastify/Koa routers, FastAPI/Flask
 * decorators, Go handlers, Phoenix/Rails routes, and Next.js route files. Key `endpoint:<path>`.
 */
import type { Candidate, Rule } from "./candidate.ts";
import { appliedChanges, toolInput, type EngineEvent } from "../../events/event-view.ts";

const DECLARATIONS: RegExp[] = [
  // app.get("/x", …), router.post('/x'), server.route … (JS/TS, Go gin/echo/chi with upper-case verbs)
  /\b(?:app|router|server|api|r|e|mux|routes?)\.(get|post|put|patch|delete|GET|POST|PUT|PATCH|DELETE)\(\s*["'`](\/[\w\-/:{}.*[\]]*)["'`]/g,
  // @app.get("/x"), @router.post("/x") (FastAPI), @bp.route("/x", methods=[...]) (Flask)
  /@(?:app|router|api|bp|blueprint)\.(get|post|put|patch|delete|route)\(\s*["'](\/[\w\-/:{}<>.]*)["']/g,
  // http.HandleFunc("/x", h) (Go)
  /\bHandleFunc\(\s*"(\/[\w\-/{}.]*)"/g,
  // get "/x", PageController, :index (Phoenix) / get '/x', to: 'c#a' (Rails)
  /^\s*(get|post|put|patch|delete|live)\s+["'](\/[\w\-/:.]*)["']\s*,/gm,
];

const NEXT_ROUTE = /(?:^|\/)app\/(.*?)\/?route\.(?:ts|js|tsx|jsx)$/;
const NEXT_PAGES_API = /(?:^|\/)pages\/(api\/.*?)\.(?:ts|js)$/;
const NEXT_METHODS = /export\s+(?:async\s+)?(?:function|const)\s+(GET|POST|PUT|PATCH|DELETE)\b/g;

interface Endpoint {
  path: string;
  methods: Set<string>;
  files: Set<string>;
  ids: Set<string>;
}

function note(
  map: Map<string, Endpoint>,
  path: string,
  method: string | null,
  file: string | undefined,
  id: string,
): void {
  const clean = path.length > 1 ? path.replace(/\/+$/, "") : path;
  if (clean.length > 100) return;
  const e = map.get(clean) ?? {
    path: clean,
    methods: new Set<string>(),
    files: new Set<string>(),
    ids: new Set<string>(),
  };
  if (method && method.toLowerCase() !== "route")
    e.methods.add(method.toUpperCase() === "LIVE" ? "LIVE" : method.toUpperCase());
  if (file && !file.startsWith("/")) e.files.add(file);
  e.ids.add(id);
  map.set(clean, e);
}

/** Next.js app-router folder → URL path: route groups `(x)` dropped, `[id]` kept as `:id`. */
function nextPath(dir: string): string {
  const parts = dir.split("/").filter((p) => p && !/^\(.*\)$/.test(p) && !p.startsWith("@"));
  return `/${parts.map((p) => p.replace(/^\[\.{3}(.+)\]$/, "*$1").replace(/^\[(.+)\]$/, ":$1")).join("/")}`;
}

function scanCode(map: Map<string, Endpoint>, code: string, file: string | undefined, id: string): void {
  for (const re of DECLARATIONS) {
    re.lastIndex = 0;
    for (const m of code.matchAll(re)) {
      const [method, path] = m.length > 2 && m[2] !== undefined ? [m[1]!, m[2]] : [null, m[1]!];
      note(map, path, method, file, id);
    }
  }
  if (file) {
    const r = NEXT_ROUTE.exec(file) ?? NEXT_PAGES_API.exec(file);
    if (r) {
      const methods = [...code.matchAll(NEXT_METHODS)].map((x) => x[1]!);
      const path = nextPath(r[1]!);
      if (methods.length === 0) note(map, path, null, file, id);
      for (const meth of methods) note(map, path, meth, file, id);
    }
  }
}

function codeOf(e: EngineEvent): string {
  const inp = toolInput(e);
  return [inp.new_string, inp.content, inp.new_str, inp.patch]
    .filter((v): v is string => typeof v === "string")
    .join("\n");
}

/** The fact's sentence for a path, its methods and files (also used to merge two versions). */
export function endpointContent(path: string, methods: readonly string[], files: readonly string[]): string {
  const m = [...new Set(methods)].sort();
  const f = [...new Set(files)].sort();
  return `Endpoint \`${m.length ? `${m.join(", ")} ` : ""}${path}\`${
    f.length
      ? ` is handled in ${f
          .slice(0, 3)
          .map((x) => `\`${x}\``)
          .join(", ")}`
      : ""
  }.`;
}

/** Merge two versions of an endpoint fact: the union of methods and files. */
export function mergeEndpointContent(a: string, b: string): string | null {
  const parse = (s: string) => /^Endpoint `(?:((?:[A-Z]+, )*[A-Z]+) )?(\/\S*)`(?: is handled in (.*))?\.$/.exec(s);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb || pa[2] !== pb[2]) return null;
  const methods = [...(pa[1]?.split(", ") ?? []), ...(pb[1]?.split(", ") ?? [])];
  const files = [
    ...[...(pa[3] ?? "").matchAll(/`([^`]+)`/g)].map((x) => x[1]!),
    ...[...(pb[3] ?? "").matchAll(/`([^`]+)`/g)].map((x) => x[1]!),
  ];
  return endpointContent(pa[2]!, methods, files);
}

export const projectEndpoints: Rule = (input) => {
  const map = new Map<string, Endpoint>();
  for (const e of appliedChanges(input.events)) scanCode(map, codeOf(e), e.filePaths[0], e.id);
  for (const e of input.events) {
    if (e.type === "tool_result" && /^(?:Read|read_file|View|view)$/.test(e.tool) && e.output)
      scanCode(map, e.output.replace(/^\s*\d+→/gm, ""), e.filePaths[0], e.id);
  }
  const out: Candidate[] = [];
  for (const ep of [...map.values()].sort((a, b) => a.path.localeCompare(b.path)).slice(0, 15)) {
    const methods = [...ep.methods].sort();
    const files = [...ep.files].sort();
    out.push({
      type: "project_fact",
      key: `endpoint:${ep.path}`,
      content: endpointContent(ep.path, methods, files),
      tags: ["endpoint", "http"],
      importance: 0.6,
      confidence: files.length > 0 ? 0.85 : 0.7,
      scope: "project",
      file_paths: files.slice(0, 5),
      source_episode_id: input.episodeId,
      source_event_ids: [...ep.ids].slice(0, 10),
      rule: "project-endpoints",
    });
  }
  return out;
};
