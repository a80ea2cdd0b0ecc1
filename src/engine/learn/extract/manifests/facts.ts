/**
 * The facts a repository's own files state (project-manifests): one per key, its parts, the files it
 * came from; and the bounded file reads every manifest reader uses.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface Fact {
  key: string;
  /** Parts joined into the content; the source files are appended. */
  parts: string[];
  sources: Set<string>;
  tags: Set<string>;
  value?: string;
  importance: number;
}

export type Facts = Map<string, Fact>;

export function add(
  facts: Facts,
  key: string,
  part: string,
  source: string,
  opts: { tag?: string; value?: string; importance?: number } = {},
): void {
  const f = facts.get(key) ?? {
    key,
    parts: [],
    sources: new Set<string>(),
    tags: new Set<string>(),
    importance: opts.importance ?? 0.7,
  };
  if (!f.parts.includes(part)) f.parts.push(part);
  f.sources.add(source);
  if (opts.tag) f.tags.add(opts.tag.toLowerCase());
  if (opts.value && f.value === undefined) f.value = opts.value;
  facts.set(key, f);
}

const MAX_FILE = 512 * 1024;

export function readText(root: string, rel: string): string | null {
  const p = join(root, rel);
  try {
    if (!existsSync(p)) return null;
    const st = statSync(p);
    if (!st.isFile() || st.size > MAX_FILE) return null;
    return readFileSync(p, "utf8");
  } catch {
    return null;
  }
}

export function has(root: string, rel: string): boolean {
  return existsSync(join(root, rel));
}
