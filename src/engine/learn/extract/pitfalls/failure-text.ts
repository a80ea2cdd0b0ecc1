/**
 * What a failure's output says (rule `pitfalls`): the repo paths it names, the signature that
 * recognises the same error again, the line that names it best, and the language of a path; with the
 * clause cut and full stop the lesson's sentences use.
 */
import { isAbsolute, relative } from "node:path";
import { clip } from "../../../events/event-view.ts";

function toRepoPath(p: string, root: string): string | null {
  if (!isAbsolute(p)) return p.replace(/^\.\//, "");
  const rel = relative(root, p);
  return rel.startsWith("..") || isAbsolute(rel) ? null : rel;
}

export function errorPaths(lines: readonly string[], root: string): string[] {
  const out: string[] = [];
  for (const l of lines) {
    for (const m of l.matchAll(/([\w@~./-]+\.[A-Za-z]{1,5}):\d+/g)) {
      const p = toRepoPath(m[1]!, root);
      if (p && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

/**
 * Does the text name a throwaway path: a directory or file with a generated random suffix
 * (`tmp/clones/agents-eval-DtKspd/`, `tmp.aB3dE5fG7h`)? A failure and fix told about one is that
 * instance's story, not a lesson: the name is gone next month. Mixed case is the tell (a generated
 * suffix, not a word): upper- and lower-case letters with a digit among them or four consonants in a row.
 */
export function namesThrowawayPath(text: string): boolean {
  for (const m of text.matchAll(/[\w.]+[-_.]([A-Za-z0-9]{6,12})(?=[/`'"\s,;:)]|$)/g)) {
    const suffix = m[1]!;
    if (!/[A-Z]/.test(suffix) || !/[a-z]/.test(suffix)) continue;
    // Not a word: a digit among the letters, or four consonants in a row ("DtKspd"); "LoginForm" is words.
    if (/\d/.test(suffix) || /[b-df-hj-np-tv-xz]{4}/i.test(suffix)) return true;
  }
  return false;
}

export function errorSignature(line: string): string {
  return line
    .replace(/[\w@~./-]+\.[A-Za-z]{1,5}:\d+(?::\d+)?:?/g, " ")
    .replace(/`[^`]*`|"[^"]*"|'[^']*'|\[[^\]]*\]|\([^)]*\)/g, " ")
    .replace(/\b\d+(?:\.\d+)?\b/g, " ")
    .replace(/^(?:error|fail(?:ed)?|---)\W*/i, "")
    .trim();
}

/** What names the error best: from an `…Error`/`…Exception` name to the end of its line when there is one, else the first line. */
export function signatureLine(lines: readonly string[]): string | undefined {
  const failedTest = lines.find((l) => /^(?:\(fail\)|✗|×\s*\S+\s*>|FAIL\b|--- FAIL)/.test(l));
  if (failedTest) return failedTest;
  for (const l of lines) {
    const m = /\b[A-Za-z_]\w*(?:Error|Exception)\b.*$/.exec(l);
    if (m) return m[0];
  }
  return lines[0];
}

/** At most `max` characters, cut at a clause boundary (", so", ";", " — ") rather than mid-phrase when one is near. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const cut = Math.max(
    head.lastIndexOf(", so "),
    head.lastIndexOf("; "),
    head.lastIndexOf(" — "),
    head.lastIndexOf(", which "),
    head.lastIndexOf(", and "),
  );
  return cut > max * 0.4 ? head.slice(0, cut) : clip(text, max);
}

/** End a clause with a full stop unless it already ends with punctuation (possibly inside a closing quote). */
export function stop(s: string): string {
  return /[.!?…]["'”)]?$/.test(s) ? s : `${s}.`;
}

export function languageOf(path: string): string | null {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  const map: Record<string, string> = {
    ts: "typescript",
    tsx: "typescript",
    js: "javascript",
    jsx: "javascript",
    mjs: "javascript",
    cjs: "javascript",
    py: "python",
    go: "go",
    rs: "rust",
    rb: "ruby",
    ex: "elixir",
    exs: "elixir",
    java: "java",
    kt: "kotlin",
    swift: "swift",
    cs: "csharp",
    php: "php",
    c: "c",
    h: "c",
    cpp: "cpp",
    cc: "cpp",
    scala: "scala",
    sql: "sql",
    vue: "vue",
    svelte: "svelte",
    dart: "dart",
    zig: "zig",
    lua: "lua",
    sh: "shell",
  };
  return ext ? (map[ext] ?? null) : null;
}
