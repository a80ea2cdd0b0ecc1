/**
 * The guidance an agent loads from the repository at the start of a session: CLAUDE.md, AGENTS.md,
 * GEMINI.md, `.github/copilot-instructions.md` (and `.github/instructions/`), `.cursorrules`,
 * `.cursor/rules/**`, `.claude/rules/**`, the repo's skills (`.claude/skills/**`, `.agents/skills/**`),
 * CONTRIBUTING and the README, plus the local markdown documents those files link to (`[x](docs/a.md)`,
 * Claude Code's `@docs/a.md` imports). Memory never copies any of it (the agent reads it already, and a
 * cut-off copy is worse than none); it is read to leave out what it already says (apply/repo-says.ts)
 * and to tell the LLM extractor what is known (a digest of its headings).
 *
 * "Already says" is measured per passage: a window of up to three consecutive sentences, list items or
 * code lines of one section, with its heading. An item restates the guidance when the passage holds
 * most of its content words, each word weighted by how rare it is in the guidance (a word the guidance
 * never uses weighs most), so a few common words ("run", "test", "bun") cannot make a match alone.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { porterStem } from "../../ranker/porter.ts";
import { STOP_WORDS } from "../../ranker/stop-words.ts";
import { estimateTokens } from "../../shared/tokens.ts";

const MAX_FILE = 256 * 1024;
const MAX_FILES = 80;
const MAX_DEPTH = 4;

/** Files an agent reads whole, at fixed places. */
const ENTRY_FILES = [
  "CLAUDE.md",
  ".claude/CLAUDE.md",
  "CLAUDE.local.md",
  "AGENTS.md",
  "AGENTS.override.md",
  "GEMINI.md",
  ".cursorrules",
  ".windsurfrules",
  ".github/copilot-instructions.md",
  "CONTRIBUTING.md",
  ".github/CONTRIBUTING.md",
  "README.md",
];
/** Folders whose every markdown file (any depth) is guidance. */
const GUIDANCE_DIRS = [".cursor/rules", ".claude/rules", ".claude/skills", ".agents/skills", ".github/instructions"];
/** The files whose links are followed (the agent's own instructions; the README links to everything). */
const FOLLOWS_LINKS =
  /(?:^|\/)(?:CLAUDE|AGENTS|GEMINI|CLAUDE\.local|copilot-instructions|CONTRIBUTING)\.md$|\.mdc$|SKILL\.md$/i;

export interface GuidanceHeading {
  file: string;
  level: number;
  text: string;
}

export interface Guidance {
  /** Repo-relative paths read. */
  files: string[];
  /** Everything, lower-cased with whitespace folded (commands are looked up in it). */
  text: string;
  /** Passages as weighted-word sets. */
  passages: Array<Set<string>>;
  /** How many passages hold each word (for the weights). */
  df: Map<string, number>;
  headings: GuidanceHeading[];
}

function readSmall(root: string, rel: string): string | null {
  try {
    const p = join(root, rel);
    const st = statSync(p);
    return st.isFile() && st.size <= MAX_FILE ? readFileSync(p, "utf8") : null;
  } catch {
    return null;
  }
}

function walk(root: string, rel: string, depth: number, out: string[]): void {
  if (depth > MAX_DEPTH || out.length >= MAX_FILES) return;
  let names: string[];
  try {
    names = readdirSync(join(root, rel)).sort();
  } catch {
    return;
  }
  for (const n of names) {
    const child = `${rel}/${n}`;
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(join(root, child));
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(root, child, depth + 1, out);
    else if (/\.mdc?$/i.test(n) && out.length < MAX_FILES) out.push(child);
  }
}

/** The fixed files and folders that exist (links not followed yet). */
function entryFiles(root: string): string[] {
  const out = ENTRY_FILES.filter((f) => existsSync(join(root, f)));
  for (const d of GUIDANCE_DIRS) walk(root, d, 0, out);
  return out;
}

/** Local markdown documents a guidance file links to, repo-relative, inside the repository. */
export function linkedDocs(root: string, fromRel: string, text: string): string[] {
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>#?]+\.md)(?:#[^)\s]*)?>?\s*\)/gi)].map((m) => m[1]!),
    ...[...text.matchAll(/(?:^|\s)@((?:\.{0,2}\/)?[\w./-]+\.md)\b/gm)].map((m) => m[1]!),
  ];
  const out: string[] = [];
  for (const t of targets) {
    if (/^[a-z]+:/i.test(t)) continue; // a URL
    const abs = t.startsWith("/") ? join(root, t) : join(root, dirname(fromRel), t);
    const rel = relative(root, normalize(abs)).split(sep).join("/");
    if (!rel || rel.startsWith("..") || out.includes(rel)) continue;
    out.push(rel);
  }
  return out;
}

/** Content words of a text, stemmed: what "saying the same thing" is measured on. */
export function guidanceWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(/[a-z0-9][a-z0-9_.:/@-]*/g) ?? []) {
    const w = raw.replace(/[.:/-]+$/, "");
    if (w.length < 2 || STOP_WORDS.has(w) || /^\d+$/.test(w)) continue;
    // A path or a command word keeps its parts too: `frontend/dist` names both.
    const parts = /[./:@-]/.test(w)
      ? [w, ...w.split(/[./:@-]+/).filter((p) => p.length >= 2 && !STOP_WORDS.has(p))]
      : [w];
    for (const p of parts) out.push(/^[a-z]+$/.test(p) ? porterStem(p) : p);
  }
  return out;
}

interface Unit {
  section: number;
  words: string[];
}

/** The units of a markdown file: sentences of paragraphs, list items, code lines; each tagged with its section. */
function unitsOf(
  file: string,
  text: string,
  headings: GuidanceHeading[],
  sectionBase: number,
): { units: Unit[]; sections: number } {
  const units: Unit[] = [];
  let section = sectionBase;
  let headingWords: string[] = [];
  let para: string[] = [];
  let fence = false;
  const flush = () => {
    if (para.length === 0) return;
    for (const s of para.join(" ").split(/(?<=[.!?])\s+(?=[A-Z`*"(])/))
      units.push({ section, words: [...headingWords, ...guidanceWords(s)] });
    para = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(?:```|~~~)/.test(line)) {
      flush();
      fence = !fence;
      continue;
    }
    if (fence) {
      if (line.trim()) units.push({ section, words: [...headingWords, ...guidanceWords(line)] });
      continue;
    }
    const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) {
      flush();
      section++;
      const t = h[2]!.replace(/[*_`]/g, "").trim();
      headings.push({ file, level: h[1]!.length, text: t });
      headingWords = guidanceWords(t);
      continue;
    }
    if (!line.trim() || /^\s*(?:---+|\|[\s:|-]+\|?)\s*$/.test(line)) {
      flush();
      continue;
    }
    if (/^\s*(?:[-*+]|\d+[.)])\s+/.test(line) || /^\s*\|/.test(line)) {
      flush();
      para.push(line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ""));
      flush();
      continue;
    }
    para.push(line.trim());
  }
  flush();
  return { units, sections: section + 1 };
}

/** Windows of up to three consecutive units of one section. */
function passagesOf(units: readonly Unit[]): Array<Set<string>> {
  const out: Array<Set<string>> = [];
  for (let i = 0; i < units.length; i++) {
    const set = new Set<string>();
    for (let j = i; j < Math.min(units.length, i + 3) && units[j]!.section === units[i]!.section; j++)
      for (const w of units[j]!.words) set.add(w);
    if (set.size > 0) out.push(set);
  }
  return out;
}

const cache = new Map<string, { stamp: string; guidance: Guidance }>();

function stampOf(root: string, files: readonly string[]): string {
  return files
    .map((rel) => {
      try {
        const st = statSync(join(root, rel));
        return `${rel}:${st.size}:${st.mtimeMs}`;
      } catch {
        return `${rel}:-`;
      }
    })
    .join("|");
}

/** What the repository's guidance says. Re-read only when one of its files changed. */
export function repoGuidance(root: string): Guidance {
  const entries = entryFiles(root);
  const hit = cache.get(root);
  const known = hit ? [...new Set([...entries, ...hit.guidance.files])] : entries;
  const stamp = stampOf(root, known);
  if (hit && hit.stamp === stamp) return hit.guidance;
  const files: string[] = [];
  const texts: string[] = [];
  const headings: GuidanceHeading[] = [];
  const units: Unit[] = [];
  let sections = 0;
  const queue = [...entries];
  while (queue.length > 0 && files.length < MAX_FILES) {
    const rel = queue.shift()!;
    if (files.includes(rel)) continue;
    const text = readSmall(root, rel);
    if (text === null) continue;
    files.push(rel);
    texts.push(text);
    const u = unitsOf(rel, text, headings, sections);
    units.push(...u.units);
    sections = u.sections;
    if (FOLLOWS_LINKS.test(rel)) for (const l of linkedDocs(root, rel, text)) if (!files.includes(l)) queue.push(l);
  }
  const passages = passagesOf(units);
  const df = new Map<string, number>();
  for (const p of passages) for (const w of p) df.set(w, (df.get(w) ?? 0) + 1);
  const guidance: Guidance = {
    files,
    text: texts.join("\n").toLowerCase().replace(/\s+/g, " "),
    passages,
    df,
    headings,
  };
  cache.set(root, {
    stamp: stampOf(root, files.length > 0 ? [...new Set([...entries, ...files])] : entries),
    guidance,
  });
  return guidance;
}

/**
 * Words of an item that say what kind of item it is, not what it is about: the templates of the
 * offline rules ("To verify a change:", "Cause:", "Fix:", "(from package.json)").
 */
const TEMPLATE_WORDS = new Set(
  [
    "cause",
    "fix",
    "fail",
    "failed",
    "verify",
    "change",
    "chosen",
    "decided",
    "from",
    "e.g",
    "use",
    "uses",
    "run",
    "runs",
  ].map((w) => (/^[a-z]+$/.test(w) ? porterStem(w) : w)),
);

/** Share of the item's content (rarity-weighted) that one guidance passage holds, best passage. */
export function guidanceCoverage(g: Guidance, content: string): { coverage: number; words: number } {
  const words = [...new Set(guidanceWords(content))].filter((w) => !TEMPLATE_WORDS.has(w));
  if (words.length === 0 || g.passages.length === 0) return { coverage: 0, words: words.length };
  const n = g.passages.length;
  const weight = (w: string) => Math.log(1 + n / (1 + (g.df.get(w) ?? 0)));
  const total = words.reduce((a, w) => a + weight(w), 0);
  let best = 0;
  for (const p of g.passages) {
    let got = 0;
    for (const w of words) if (p.has(w)) got += weight(w);
    if (got > best) best = got;
  }
  return { coverage: best / total, words: words.length };
}

/** Below this many content words an item is too short to judge by overlap (commands decide it). */
export const MIN_WORDS = 4;
/** At or above this rarity-weighted share held by one passage, the item restates the guidance. */
export const RESTATES_AT = 0.7;

/** Does the guidance already say what `content` says? */
export function restatesGuidance(g: Guidance, content: string): boolean {
  const { coverage, words } = guidanceCoverage(g, content);
  return words >= MIN_WORDS && coverage >= RESTATES_AT;
}

/**
 * What the guidance covers, for the LLM extractor: its files and their headings, in order, cut to
 * `maxTokens` (a few hundred), so the model knows what the agent already reads and leaves it out.
 */
export function guidanceDigest(g: Guidance, maxTokens = 300): string {
  if (g.files.length === 0) return "";
  const lines: string[] = [];
  const byFile = new Map<string, string[]>();
  for (const h of g.headings) {
    if (h.level > 3) continue;
    const list = byFile.get(h.file) ?? [];
    if (!list.includes(h.text)) list.push(h.text);
    byFile.set(h.file, list);
  }
  for (const f of g.files) {
    const hs = byFile.get(f) ?? [];
    const line = `- ${f}${hs.length > 0 ? `: ${hs.join("; ")}` : ""}`;
    lines.push(line);
  }
  let out = lines.join("\n");
  while (estimateTokens(out) > maxTokens && out.length > 40) {
    // Cut the longest line's heading list first, so every file stays named.
    const i = lines.reduce((best, l, j) => (l.length > lines[best]!.length ? j : best), 0);
    const l = lines[i]!;
    const cut = l.lastIndexOf(";");
    if (cut > 0) lines[i] = `${l.slice(0, cut)} …`.replace(/ … …$/, " …");
    else if (lines.length > 1) lines.splice(i, 1);
    else break;
    const next = lines.join("\n");
    if (next === out) break;
    out = next;
  }
  return out;
}
