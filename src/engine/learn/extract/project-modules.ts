/**
 * Rule `project-modules`: the folders the sessions change (and read around). One fact per folder with
 * at least one applied edit, naming its files and language — the map a newcomer would want.
 */
import { dirname, isAbsolute, posix } from "node:path";
import type { Candidate, Rule } from "./candidate.ts";
import { appliedChanges, type EngineEvent } from "../../events/event-view.ts";
import { languageOf } from "./pitfalls.ts";

const READ_TOOLS = /^(?:Read|read_file|View|view|cat|Glob|Grep|NotebookRead)$/;
const MAX_MODULES = 3;

function inRepo(p: string): boolean {
  return p.length > 0 && !isAbsolute(p) && !p.startsWith("..") && !p.startsWith(".ctx/") && !p.startsWith(".git/");
}

interface Dir {
  dir: string;
  edits: number;
  reads: number;
  files: Set<string>;
  ids: Set<string>;
}

function bump(dirs: Map<string, Dir>, path: string, ev: EngineEvent, edit: boolean): void {
  const dir = dirname(path).split("\\").join("/");
  if (dir === "." || dir === "") return;
  const d = dirs.get(dir) ?? { dir, edits: 0, reads: 0, files: new Set<string>(), ids: new Set<string>() };
  if (edit) d.edits++;
  else d.reads++;
  d.files.add(posix.basename(path));
  d.ids.add(ev.id);
  dirs.set(dir, d);
}

function languageName(files: Iterable<string>): string | null {
  const counts = new Map<string, number>();
  for (const f of files) {
    const l = languageOf(f);
    if (l) counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  return top ? top[0] : null;
}

/** The fact's sentence; also used to merge the file lists of two versions (update.ts). */
export function moduleContent(dir: string, lang: string | null, files: readonly string[]): string {
  const shown = [...files].sort().slice(0, 6);
  return `Module \`${dir}/\`${lang ? ` (${lang})` : ""}: sessions work on ${shown.map((f) => `\`${f}\``).join(", ")}${files.length > shown.length ? " and more" : ""}.`;
}

/** Merge two versions of a module fact: the union of their files. */
export function mergeModuleContent(a: string, b: string): string | null {
  const parse = (s: string) => /^Module `(.+?)\/`(?: \((\w+)\))?: sessions work on (.*?)(?: and more)?\.$/.exec(s);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb || pa[1] !== pb[1]) return null;
  const files = (m: RegExpExecArray) => [...m[3]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
  const moreA = a.endsWith(" and more.") || b.endsWith(" and more.");
  const all = [...new Set([...files(pa), ...files(pb)])];
  const merged = moduleContent(pa[1]!, pa[2] ?? pb[2] ?? null, moreA && all.length <= 6 ? [...all, "…"] : all);
  return merged.replace(", `…`", "").replace("`…`", "");
}

export const projectModules: Rule = (input) => {
  const events = input.events;
  const dirs = new Map<string, Dir>();
  for (const ev of appliedChanges(events)) for (const p of ev.filePaths) if (inRepo(p)) bump(dirs, p, ev, true);
  for (const ev of events) {
    if (ev.type !== "tool_call" || !READ_TOOLS.test(ev.tool)) continue;
    for (const p of ev.filePaths) if (inRepo(p) && dirs.has(dirname(p))) bump(dirs, p, ev, false);
  }
  const ranked = [...dirs.values()]
    .filter((d) => d.edits > 0)
    .sort((a, b) => b.edits * 3 + b.reads - (a.edits * 3 + a.reads));
  const out: Candidate[] = [];
  for (const d of ranked.slice(0, MAX_MODULES)) {
    const lang = languageName(d.files);
    out.push({
      type: "project_fact",
      key: `module:${d.dir}`.slice(0, 110),
      content: moduleContent(d.dir, lang, [...d.files]),
      tags: ["module", ...(lang ? [lang] : [])],
      importance: Math.min(0.6, 0.35 + 0.05 * d.edits),
      confidence: 0.7,
      scope: "project",
      file_paths: [...d.files]
        .sort()
        .slice(0, 10)
        .map((f) => `${d.dir}/${f}`),
      source_episode_id: input.episodeId,
      source_event_ids: [...d.ids].slice(0, 20),
      rule: "project-modules",
    });
  }
  return out;
};
