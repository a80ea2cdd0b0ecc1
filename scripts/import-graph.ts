/**
 * The import graph of src/: every relative `import`/`export … from`/`import()` of every .ts file,
 * resolved to a path under src/. Used by the architecture test (test/architecture.test.ts) and
 * runnable alone: `bun run scripts/import-graph.ts` prints cycles and broken folder rules.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface ImportEdge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at build time. */
  typeOnly: boolean;
}

const SPECIFIER =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** Edges between files of `srcDir` (paths relative to it, e.g. `engine/server.ts`). */
export function importGraph(srcDir: string): { files: string[]; edges: ImportEdge[] } {
  const files = filesUnder(srcDir).map((f) => relative(srcDir, f));
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(join(srcDir, file), "utf8");
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[3] ?? m[4] ?? m[5];
      if (!spec?.startsWith(".")) continue;
      const to = relative(srcDir, resolve(srcDir, dirname(file), spec));
      edges.push({ from: file, to, typeOnly: m[2] !== undefined });
    }
  }
  return { files, edges };
}

/** Every cycle among files (each listed once, starting at its smallest file). */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  const found = new Map<string, string[]>();
  const visit = (start: string, node: string, path: string[], seen: Set<string>) => {
    for (const n of next.get(node) ?? []) {
      if (n === start) {
        const min = [...path].sort()[0]!;
        const i = path.indexOf(min);
        const cyc = [...path.slice(i), ...path.slice(0, i)];
        found.set(cyc.join(" → "), cyc);
      } else if (!seen.has(n) && n > start) {
        seen.add(n);
        visit(start, n, [...path, n], seen);
        seen.delete(n);
      }
    }
  };
  for (const f of next.keys()) visit(f, f, [f], new Set([f]));
  return [...found.values()];
}

if (import.meta.main) {
  const { edges } = importGraph(resolve(import.meta.dir, "..", "src"));
  for (const c of cycles(edges)) console.log(`cycle: ${c.join(" → ")} → ${c[0]}`);
}
