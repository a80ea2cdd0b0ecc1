/**
 * A memory's anchor: what it cites in the repository, as the repository confirmed it when the anchor
 * was recorded — the files that existed, the identifiers found in them (with the line they were on
 * and a fingerprint of the lines around it), the package scripts it runs, and for pitfalls and
 * decisions the commit the fix or decision landed in. Recorded when a memory is stored (learn/), by
 * `sqrl reprocess` and `sqrl doctor`, and built in memory on first serve for items that have none;
 * read by the check at serve time (retrieve/verify).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { citations, citedIdentifiers, citedPaths } from "./cite.ts";
import { gitDirs, readHead, runGit } from "../../shared/git.ts";
import { lineOf, normalizeLine, readSource, wordRe } from "./source-file.ts";

export const SymbolAnchor = z.object({
  name: z.string(),
  path: z.string(),
  /** The line it was found on, whitespace-normalized: lets a rename be recognised (same line, new name). */
  line: z.string(),
  /** sha1 (12 hex) of the two lines either side and the line itself, whitespace-normalized. */
  fingerprint: z.string(),
});
export type SymbolAnchor = z.infer<typeof SymbolAnchor>;

export const Anchor = z.object({
  files: z.array(z.string()),
  symbols: z.array(SymbolAnchor),
  /** Package scripts run by the memory, found in `path` (package.json) when recorded. */
  scripts: z.array(z.object({ name: z.string(), path: z.string() })),
  /** Commit the fix or decision landed in (pitfalls, decisions), when the events showed one. */
  commit: z.string().nullable(),
  /** HEAD and branch when recorded (null outside git). */
  head: z.string().nullable(),
  branch: z.string().nullable(),
  recorded_at: z.string(),
  /** 'extract' | 'reprocess' | 'doctor' | 'lazy' (built at serve time, not stored). */
  source: z.string(),
  /**
   * What the memory names, found in the repository or not (issue 26): its identifiers and paths.
   * A name HEAD lacks that only an unmerged branch has says the work it describes has not landed.
   */
  names: z.array(z.string()).optional(),
  /** Identifiers its own session wrote into the repository's files, with the file each went into. */
  introduced: z.array(z.object({ name: z.string(), path: z.string() })).optional(),
});
export type Anchor = z.infer<typeof Anchor>;

/** Identifiers per memory: enough to check, few enough to stay cheap. */
const MAX_SYMBOLS = 8;
const MAX_FILES = 12;

export function fingerprintAt(lines: readonly string[], at: number): string {
  const span = lines
    .slice(Math.max(0, at - 2), at + 3)
    .map(normalizeLine)
    .join("\n");
  return createHash("sha1").update(span).digest("hex").slice(0, 12);
}

export function symbolAt(name: string, path: string, text: string): SymbolAnchor | null {
  const at = lineOf(text, name);
  if (at < 0) return null;
  const lines = text.split("\n");
  return { name, path, line: normalizeLine(lines[at]!), fingerprint: fingerprintAt(lines, at) };
}

/** Scripts of the root package.json, or null when there is none. */
export function packageScripts(root: string): Record<string, unknown> | null {
  try {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: Record<string, unknown> };
    return pkg.scripts && typeof pkg.scripts === "object" ? pkg.scripts : {};
  } catch {
    return null;
  }
}

/** Where a backticked identifier the cited files lack is defined or used (one `git grep` for all). */
function grepTracked(root: string, names: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  if (names.length === 0) return found;
  const out = runGit(root, [
    "grep",
    "-n",
    "-I",
    "-w",
    "-F",
    "--max-count=1",
    ...names.flatMap((n) => ["-e", n]),
    "--",
    ".",
  ]);
  if (!out) return found;
  for (const line of out.split("\n")) {
    const m = /^([^:]+):\d+:(.*)$/.exec(line);
    if (!m) continue;
    for (const n of names) if (!found.has(n) && wordRe(n).test(m[2]!)) found.set(n, m[1]!);
    if (found.size === names.length) break;
  }
  return found;
}

export interface AnchorInput {
  content: string;
  file_paths: readonly string[];
  /** Fix or decision commit, when known. */
  commit?: string | null;
  /** Identifiers the item's session wrote into the repository's files, and where. */
  introduced?: ReadonlyArray<{ name: string; path: string }>;
}

/** Names a memory is checked by for landing: at most this many. */
const MAX_NAMES = 16;

/**
 * Everything `content` names that could be code: identifiers (backticked ones only, unless `prose`
 * adds the code-shaped words of the sentence too) and paths (with an extension, or quoted with a
 * slash: `cmd/entire/cli/gitutil`).
 */
export function namedInContent(content: string, opts: { prose?: boolean } = {}): string[] {
  const quoted = [...content.matchAll(/[`"']([\w.@~-]*\/[\w.@~/-]*\w)\/?[`"']/g)].map((m) => m[1]!);
  const paths = [...citedPaths(content), ...quoted].filter((p) => p.length >= 5 && !p.startsWith("../"));
  const ids = citedIdentifiers(content)
    .filter((i) => i.backticked || opts.prose)
    .map((i) => i.name);
  return [...new Set([...ids, ...paths])].slice(0, MAX_NAMES);
}

/**
 * Record what `item` cites, as the repository at `root` shows it now. `searchRepo` (default on) looks
 * for backticked identifiers the cited files lack with one `git grep`; anchors built while serving
 * skip it (a process per item would cost a cold read several ms each).
 */
export function buildAnchor(
  root: string,
  item: AnchorInput,
  source: string,
  at: string,
  opts: { searchRepo?: boolean } = {},
): Anchor {
  const cited = citations(item.content, item.file_paths);
  const texts = new Map<string, string>();
  const files: string[] = [];
  for (const p of cited.paths) {
    if (files.length >= MAX_FILES) break;
    const r = readSource(root, p);
    if (r.ok) {
      texts.set(p, r.text);
      files.push(p);
    } else if (r.why === "binary" || r.why === "too_large") files.push(p);
  }
  const symbols: SymbolAnchor[] = [];
  const unresolved: string[] = [];
  for (const id of cited.identifiers) {
    if (symbols.length >= MAX_SYMBOLS) break;
    let hit: SymbolAnchor | null = null;
    for (const [p, text] of texts) if ((hit = symbolAt(id.name, p, text))) break;
    if (hit) symbols.push(hit);
    else if (id.backticked) unresolved.push(id.name);
  }
  const dirs = gitDirs(root);
  if (dirs && opts.searchRepo !== false && symbols.length < MAX_SYMBOLS) {
    for (const [name, p] of grepTracked(root, unresolved.slice(0, MAX_SYMBOLS - symbols.length))) {
      const r = readSource(root, p);
      const s = r.ok ? symbolAt(name, p, r.text) : null;
      if (s) symbols.push(s);
    }
  }
  const pkg = cited.scripts.length > 0 ? packageScripts(root) : null;
  const scripts = pkg ? cited.scripts.filter((s) => s in pkg).map((name) => ({ name, path: "package.json" })) : [];
  const head = dirs ? readHead(dirs) : null;
  return {
    files,
    symbols,
    scripts,
    commit: item.commit ?? null,
    head: head?.sha ?? null,
    branch: head?.branch ?? null,
    recorded_at: at,
    source,
    // Backticked names and paths: a code-shaped word of the prose the repository lacks says little.
    names: namedInContent(item.content),
    ...(item.introduced && item.introduced.length > 0 ? { introduced: [...item.introduced].slice(0, MAX_NAMES) } : {}),
  };
}

/** Does the anchor cite anything that can be checked? */
export function hasCitations(a: Anchor): boolean {
  return a.files.length + a.symbols.length + a.scripts.length > 0 || a.commit !== null;
}
