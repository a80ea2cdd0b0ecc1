/**
 * What a memory's words cite in the repository, before anything is checked: repo-relative file paths,
 * identifiers (functions, types, config keys — in backticks, or shaped like code: camelCase,
 * PascalCase with an inner capital, snake_case) and package scripts run through a package manager.
 * Only candidates: an anchor keeps the ones the repository confirmed when it was recorded.
 */

export interface CitedIdentifier {
  name: string;
  /** Written in backticks: worth a search of the whole repository when the cited files lack it. */
  backticked: boolean;
}

export interface Citations {
  paths: string[];
  identifiers: CitedIdentifier[];
  scripts: string[];
}

const PATH_RE =
  /(?:^|[\s`'"([])((?:\.{0,2}\/)?(?:[\w@.-]+\/)*[\w@-][\w@.-]*\.[A-Za-z][A-Za-z0-9]{0,5})(?=$|[\s`'"),:;\]]|\.(?:\s|$))/g;
const BACKTICK_RE = /`([^`\n]{2,120})`/g;
const IDENT_RE = /^[A-Za-z_$][\w$]*(?:[.:#][A-Za-z_$][\w$]*)*(?:\(\))?$/;
/** Shaped like code even without backticks: fooBar, FooBar (inner capital), foo_bar. */
const CODE_WORD_RE =
  /\b(?:[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9])\b/g;
const SCRIPT_RE = /\b(?:npm run|pnpm(?: run)?|yarn(?: run)?|bun run)\s+([a-z0-9][\w:.-]*)/g;
/** pnpm/yarn words that are the package manager's own commands, not scripts. */
const PM_BUILTINS = new Set(
  "install i add remove rm update up exec dlx x why list ls init create publish link run test".split(" "),
);
/** Words that look like code but are prose or well-known tool names. */
const NOT_IDENTIFIERS = new Set([
  ...[
    "e.g",
    "i.e",
    "JavaScript",
    "TypeScript",
    "GitHub",
    "GitLab",
    "PostgreSQL",
    "MySQL",
    "SQLite",
    "MongoDB",
    "GraphQL",
    "macOS",
    "iOS",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "node",
  ],
  // Language keywords and literals: found in nearly every file, they say nothing about where code lives.
  ..."await async const let var function return import export default class interface type enum extends implements new this self null undefined true false None True False nil void any unknown never string number boolean object static public private protected readonly throw throws try catch finally yield def lambda pass raise except from with while for break continue else elif switch case struct impl trait pub mut use mod fn func package go defer select chan map".split(
    " ",
  ),
]);

function looksLikePath(p: string): boolean {
  if (/^\d/.test(p) || /^[\d.]+$/.test(p)) return false; // versions: 1.2.3
  if (/^(?:e\.g|i\.e|etc)\./i.test(p)) return false;
  if (/^https?:/i.test(p)) return false;
  const ext = p.slice(p.lastIndexOf(".") + 1);
  // "Node.js", "Vue.js" are names, not files, unless a folder comes before.
  if (!p.includes("/") && /^(?:js|io|net|com|org|dev)$/i.test(ext) && /^[A-Z]/.test(p)) return false;
  return true;
}

/** Repo-relative candidate paths written in `text` (leading `./` dropped). */
export function citedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(PATH_RE)) {
    const p = m[1]!.replace(/^\.\//, "");
    if (p.startsWith("../") || !looksLikePath(p)) continue;
    out.add(p);
  }
  return [...out];
}

/** Candidate identifiers written in `text`: backticked code names first, then code-shaped words. */
export function citedIdentifiers(text: string): CitedIdentifier[] {
  const out = new Map<string, boolean>();
  for (const m of text.matchAll(BACKTICK_RE)) {
    const span = m[1]!.trim().replace(/\(\)$/, "");
    if (!IDENT_RE.test(span) || span.includes("/")) continue;
    // `config.key`, `Service#method`: the last part is what the code spells.
    const last = span.split(/[.:#]/).pop()!;
    if (last.length >= 3 && !NOT_IDENTIFIERS.has(last)) out.set(last, true);
  }
  const prose = text.replace(BACKTICK_RE, " ").replace(PATH_RE, " ");
  for (const m of prose.matchAll(CODE_WORD_RE))
    if (m[0].length >= 4 && !NOT_IDENTIFIERS.has(m[0]) && !out.has(m[0])) out.set(m[0], false);
  return [...out].map(([name, backticked]) => ({ name, backticked }));
}

/** Package scripts the text runs (`npm run lint`, `pnpm db:migrate`, `bun run bench`). */
export function citedScripts(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(SCRIPT_RE)) {
    const name = m[1]!;
    if (!PM_BUILTINS.has(name)) out.add(name);
  }
  return [...out];
}

export function citations(content: string, filePaths: readonly string[]): Citations {
  return {
    paths: [...new Set([...filePaths.map((p) => p.replace(/^\.\//, "")), ...citedPaths(content)])],
    identifiers: citedIdentifiers(content),
    scripts: citedScripts(content),
  };
}
