/**
 * Rule `repo-hooks`: what the repository's pre-commit hook runs, read from the hook's own file
 * (.husky/pre-commit, .pre-commit-config.yaml) like a manifest: a fact of the repository's
 * configuration, on the same key as the hook seen running in a session (recipes.ts `hookRecipe`), so
 * the two meet. Read with the manifests (once per processing call). The repository's prose guidance
 * (CLAUDE.md, AGENTS.md …) is never turned into memory: the agent reads it already
 * (learn/repo-guidance.ts).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";

function read(root: string, rel: string): string | null {
  const p = join(root, rel);
  try {
    if (!existsSync(p)) return null;
    const st = statSync(p);
    return st.isFile() && st.size <= 64 * 1024 ? readFileSync(p, "utf8") : null;
  } catch {
    return null;
  }
}

/** What the pre-commit hook runs, from its file. */
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

export const repoHooks: Rule = (input: RuleInput) => {
  const hook = hookCandidate(input.projectRoot);
  if (!hook) return [];
  const c: Candidate = {
    type: "recipe",
    key: "recipe:pre-commit",
    content: hook.content,
    tags: ["recipe", "pre-commit", "hook", "repo-file"],
    importance: 0.7,
    confidence: 0.9,
    scope: "project",
    file_paths: [hook.rel],
    source_episode_id: input.episodeId,
    source_event_ids: [],
    rule: "repo-hooks",
  };
  return [c];
};
