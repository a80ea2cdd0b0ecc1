/**
 * Rule `project-manifests`: facts the repository states about itself — languages, frameworks,
 * database, package manager, test/build/lint commands, runtime versions, CI and container setup —
 * read from its own package.json, lockfiles, pyproject.toml, Cargo.toml, go.mod, mix.exs, Gemfile,
 * Dockerfile, compose files, CI workflows, mise.toml and Makefile. Only what the files say.
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import type { Fact, Facts } from "./manifests/facts.ts";
import { readElixirRuby, readCargo, readGo } from "./manifests/go-rust-elixir-ruby.ts";
import { readPackageJson } from "./manifests/javascript.ts";
import { readPython } from "./manifests/python.ts";
import { readCi, readContainers, readTaskRunners } from "./manifests/tooling.ts";

const LABELS: Record<string, string> = {
  language: "Language",
  framework: "Framework",
  database: "Database",
  test_framework: "Test framework",
};

function factContent(f: Fact): string {
  const label = LABELS[f.key];
  const body = label ? `${label}${f.parts.length > 1 ? "s" : ""}: ${f.parts.join(", ")}` : f.parts.join("; ");
  return `${body} (from ${[...f.sources].join(", ")}).`;
}

/** Every fact the repo's own files state, keyed by slug. */
export function manifestFacts(root: string): Fact[] {
  const facts: Facts = new Map();
  readTaskRunners(root, facts);
  readPackageJson(root, facts);
  readPython(root, facts);
  readGo(root, facts);
  readCargo(root, facts);
  readElixirRuby(root, facts);
  readContainers(root, facts);
  readCi(root, facts);
  return [...facts.values()];
}

export const MANIFEST_FILES =
  /(?:^|\/)(?:package\.json|bun\.lockb?|pnpm-lock\.yaml|yarn\.lock|package-lock\.json|tsconfig\.json|pyproject\.toml|requirements\.txt|uv\.lock|poetry\.lock|Cargo\.toml|go\.mod|mix\.exs|Gemfile|Dockerfile|(?:docker-)?compose\.ya?ml|mise\.toml|Makefile|schema\.prisma|\.github\/workflows\/[^/]+)$/;

export const projectManifests: Rule = (input: RuleInput) => {
  const touching = input.events.filter((e) => e.filePaths.some((p) => MANIFEST_FILES.test(p))).map((e) => e.id);
  return manifestFacts(input.projectRoot).map(
    (f): Candidate => ({
      type: "project_fact",
      key: f.key,
      content: factContent(f),
      tags: ["manifest", ...f.tags],
      importance: f.importance,
      confidence: 0.95,
      scope: "project",
      file_paths: [...f.sources].filter((s) => !s.endsWith("/")),
      source_episode_id: input.episodeId,
      source_event_ids: touching.slice(0, 20),
      value: f.value,
      rule: "project-manifests",
    }),
  );
};
