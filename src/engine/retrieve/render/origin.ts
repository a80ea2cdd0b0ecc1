/**
 * Who said it: where a memory comes from, for the reasons, the views and the page. A rule read from
 * CLAUDE.md or AGENTS.md is the project's (its file and line cited), not the user's style; a rule the
 * user stated is theirs ("you said"); a person's edit is in their words; a habit or lesson the
 * sessions showed is learned; a teammate's or another machine's item is imported.
 */
import { TYPE_HEADINGS } from "./markdown.ts";

export type OriginKind = "repo_file" | "manifest" | "stated" | "edited" | "imported" | "learned";

export interface Origin {
  kind: OriginKind;
  /** The file (and line) for repo_file and manifest: `CLAUDE.md:12`, `package.json`. */
  source?: string;
}

interface Source {
  type: string;
  tags: readonly string[];
  content: string;
  file_paths?: readonly string[];
  extractor?: string;
}

/** `(CLAUDE.md:12).` at the end of a repo file's rule. */
const CITED = /\(([^()\s]+:\d+)\)\.?\s*$/;
/** `(from package.json, bun.lock).` at the end of a manifest fact. */
const FROM = /\(from ([^()]+)\)\.?\s*$/;

export function originOf(item: Source): Origin {
  if (item.extractor === "manual") return { kind: "edited" };
  if (item.tags.includes("repo-file")) {
    const source = CITED.exec(item.content)?.[1] ?? item.file_paths?.[0];
    return source ? { kind: "repo_file", source } : { kind: "repo_file" };
  }
  if (item.tags.includes("manifest")) {
    const source = FROM.exec(item.content)?.[1] ?? item.file_paths?.[0];
    return source ? { kind: "manifest", source } : { kind: "manifest" };
  }
  if (item.extractor === "import") return { kind: "imported" };
  if (item.tags.includes("preference") || item.tags.includes("decision")) return { kind: "stated" };
  return { kind: "learned" };
}

/** The file a repo-file rule came from, without its line: `CLAUDE.md`. */
export function originFile(o: Origin): string {
  return (o.source ?? "the repository's files").replace(/:\d+$/, "");
}

/** A short label for the page: "From CLAUDE.md:12", "You said it", "Learned from your sessions". */
export function originLabel(o: Origin): string {
  switch (o.kind) {
    case "repo_file":
    case "manifest":
      return `From ${o.source ?? "the repository's files"}`;
    case "stated":
      return "You said it";
    case "edited":
      return "Your edit";
    case "imported":
      return "Imported (sqrl import or a teammate's sync)";
    default:
      return "Learned from your sessions";
  }
}

/** Group of a served item: its type, but a repo file's rule is the project's, not "Your style". */
export function groupOf(item: Source): string {
  return item.type === "user_style" && originOf(item).kind === "repo_file" ? "project_rule" : item.type;
}

/** Headings of served memory (task context, search): the type headings, the project's own rules beside the user's style. */
export const SERVED_HEADINGS: Record<string, string> = {
  pitfall: TYPE_HEADINGS.pitfall,
  user_style: TYPE_HEADINGS.user_style,
  project_rule: "### From the project's files",
  project_fact: TYPE_HEADINGS.project_fact,
  recipe: TYPE_HEADINGS.recipe,
};
