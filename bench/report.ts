import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, totalmem, type, release, arch } from "node:os";

/** What one benchmark hands back: a markdown table plus the lines worth quoting. */
export interface BenchReport {
  /** Section title in docs/benchmarks.md. */
  title: string;
  /** Markdown (tables, short notes) for the section body. */
  markdown: string;
  /** One-line headline figures, printed at the end of `bun run bench`. */
  headline: string[];
}

export interface BenchOptions {
  quick: boolean;
  /** Arguments after the bench name, e.g. a dataset path. */
  args: string[];
}

export type Bench = (opts: BenchOptions) => Promise<BenchReport>;

export function machineLine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model.trim() ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${type()} ${release()} ${arch()}, Bun ${Bun.version}`;
}

/** A markdown table from a header and rows. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.map(String).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function summarize(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p95: percentile(s, 95),
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
    n: s.length,
  };
}

export const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

const DOC = "docs/benchmarks.md";
const HEADER = `# Benchmarks

Every section is written by \`bun run bench <name>\` (see bench/). Figures are from the machine named in
each section; rerun the command shown to reproduce them. Benchmarks are never timing assertions in \`bun test\`.
`;

/** Replace (or append) the section of `name` in docs/benchmarks.md. */
export function writeSection(name: string, report: BenchReport, command: string, quick: boolean): void {
  mkdirSync("docs", { recursive: true });
  const doc = existsSync(DOC) ? readFileSync(DOC, "utf8") : HEADER;
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const body = [
    start,
    `## ${report.title}`,
    "",
    `Machine: ${machineLine()}  `,
    `Date: ${new Date().toISOString().slice(0, 10)}${quick ? " (quick mode: small sizes, smoke only)" : ""}  `,
    `Reproduce: \`${command}\``,
    "",
    report.markdown.trim(),
    end,
  ].join("\n");
  const re = new RegExp(`${escapeRegExp(start)}[\\s\\S]*?${escapeRegExp(end)}`);
  const next = re.test(doc) ? doc.replace(re, body) : `${doc.trimEnd()}\n\n${body}\n`;
  writeFileSync(DOC, next.endsWith("\n") ? next : `${next}\n`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
