/**
 * Rule `repo-instructions`: the knowledge a team already keeps in its repository, read offline —
 * agent instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*,
 * .github/copilot-instructions.md), CONTRIBUTING, the conventions part of the README and docs/*.md,
 * and the pre-commit hook (.husky/pre-commit, .pre-commit-config.yaml). Each stated rule becomes a
 * project convention citing its file and line; it lands on the same key as the same rule said in a
 * session, so the update step merges them instead of storing it twice. Read with the manifests
 * (once per processing call), so an edited file refreshes its items.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { proseSentences, statedRule } from "./style-preferences.ts";

const MAX_FILE = 256 * 1024;
const MAX_RULES_PER_FILE = 40;

function read(root: string, rel: string): string | null {
  const p = join(root, rel);
  try {
    if (!existsSync(p)) return null;
    const st = statSync(p);
    return st.isFile() && st.size <= MAX_FILE ? readFileSync(p, "utf8") : null;
  } catch {
    return null;
  }
}

function list(root: string, rel: string, re: RegExp): string[] {
  try {
    return readdirSync(join(root, rel))
      .filter((n) => re.test(n))
      .sort()
      .map((n) => `${rel}/${n}`);
  } catch {
    return [];
  }
}

/** Files whose every line is guidance, and files where only some sections are. */
function guidanceFiles(root: string): Array<{ rel: string; sections: RegExp | null }> {
  const whole = [
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
    ".github/CONTRIBUTING.md",
    ...list(root, ".cursor/rules", /\.mdc?$/),
    ...list(root, ".claude/rules", /\.md$/),
  ];
  const docs = list(root, "docs", /(?:convention|contribut|style|guideline|develop|coding|standards?)[\w-]*\.md$/i);
  const sectioned = /convention|guideline|contribut|development|coding style|code style|rules|standards|workflow/i;
  return [
    ...whole.map((rel) => ({ rel, sections: null })),
    ...docs.map((rel) => ({ rel, sections: null })),
    { rel: "README.md", sections: sectioned },
  ];
}

const textCache = new Map<string, { stamp: string; text: string }>();

/**
 * Everything the repository's guidance files say, lower-cased, whitespace collapsed (the README in
 * full): what an agent reads at the start of a session. Re-read only when a file's size or time changed.
 */
export function repoGuidanceText(root: string): string {
  const files = guidanceFiles(root).map((f) => f.rel);
  const stamp = files
    .map((rel) => {
      try {
        const st = statSync(join(root, rel));
        return `${rel}:${st.size}:${st.mtimeMs}`;
      } catch {
        return "";
      }
    })
    .join("|");
  const hit = textCache.get(root);
  if (hit && hit.stamp === stamp) return hit.text;
  const text = files
    .map((rel) => read(root, rel) ?? "")
    .join("\n")
    .toLowerCase()
    .replace(/\s+/g, " ");
  textCache.set(root, { stamp, text });
  return text;
}

/** The rules a guidance file states, with their line numbers. */
function rulesIn(
  text: string,
  sections: RegExp | null,
): Array<{ line: number; key: string; value?: string; polarity: 1 | -1; content: string }> {
  const out: Array<{ line: number; key: string; value?: string; polarity: 1 | -1; content: string }> = [];
  let inSection = sections === null;
  let fence = false;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length && out.length < MAX_RULES_PER_FILE; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) fence = !fence;
    if (fence) continue;
    const h = /^#{1,6}\s+(.+)$/.exec(line);
    if (h) {
      if (sections) inSection = sections.test(h[1]!);
      continue;
    }
    if (!inSection || line.trim().length < 8) continue;
    for (const s of proseSentences(line.replace(/\*\*([^*]+)\*\*/g, "$1"))) {
      const r = statedRule(s);
      if (r && !out.some((o) => o.key === r.key)) out.push({ line: i + 1, ...r });
    }
  }
  return out;
}

/** What the pre-commit hook runs (the same key as the hook seen running in a session). */
function hookCandidate(root: string): { content: string; rel: string } | null {
  const husky = read(root, ".husky/pre-commit");
  if (husky) {
    const cmds = husky
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#") && !/^(?:\.|source)\s|husky\.sh|^#!/.test(l))
      .flatMap((l) => l.split(/\s*&&\s*/));
    if (cmds.length > 0)
      return {
        rel: ".husky/pre-commit",
        content: `The pre-commit hook runs ${cmds.map((c) => `\`${c}\``).join(" → ")}; a commit lands only when all pass (.husky/pre-commit).`,
      };
  }
  const pc = read(root, ".pre-commit-config.yaml");
  if (pc) {
    const ids = [...pc.matchAll(/^\s*-\s*id:\s*([\w.-]+)/gm)].map((m) => m[1]!);
    if (ids.length > 0)
      return {
        rel: ".pre-commit-config.yaml",
        content: `The pre-commit hooks run ${ids
          .slice(0, 8)
          .map((c) => `\`${c}\``)
          .join(", ")} on every commit (.pre-commit-config.yaml).`,
      };
  }
  return null;
}

export const repoInstructions: Rule = (input: RuleInput) => {
  const out: Candidate[] = [];
  const base = { scope: "project" as const, source_episode_id: input.episodeId, source_event_ids: [], confidence: 0.9 };
  for (const { rel, sections } of guidanceFiles(input.projectRoot)) {
    const text = read(input.projectRoot, rel);
    if (!text) continue;
    for (const r of rulesIn(text, sections)) {
      out.push({
        ...base,
        type: "user_style",
        key: r.key,
        content: `${r.content.replace(/\.$/, "")} (${rel}:${r.line}).`,
        tags: ["convention", "repo-file", r.polarity === 1 ? "do" : "dont"],
        importance: 0.8,
        file_paths: [rel],
        value: r.value,
        polarity: r.polarity,
        rule: "repo-instructions",
      });
    }
  }
  const hook = hookCandidate(input.projectRoot);
  if (hook)
    out.push({
      ...base,
      type: "recipe",
      key: "recipe:pre-commit",
      content: hook.content,
      tags: ["recipe", "pre-commit", "hook", "repo-file"],
      importance: 0.7,
      file_paths: [hook.rel],
      rule: "repo-instructions",
    });
  return out;
};
