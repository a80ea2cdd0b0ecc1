/**
 * Module facts (`module:<dir>`, "sessions work on …") as earlier versions wrote them. The rule that made
 * them is gone (a reviewer kept none: the repository's own files tell a newcomer more), but stores and
 * exports from those versions still hold them: `sqrl reprocess` supersedes them, the project brief
 * shows them, and two versions of one folder's fact merge into the union of their files (update.ts).
 */

/** The fact's sentence, as it was written. */
export function moduleContent(dir: string, lang: string | null, files: readonly string[]): string {
  const shown = [...files].sort().slice(0, 6);
  return `Module \`${dir}/\`${lang ? ` (${lang})` : ""}: sessions work on ${shown.map((f) => `\`${f}\``).join(", ")}${files.length > shown.length ? " and more" : ""}.`;
}

/** Merge two versions of a module fact: the union of their files. */
export function mergeModuleContent(a: string, b: string): string | null {
  const parse = (s: string) => /^Module `(.+?)\/`(?: \((\w+)\))?: sessions work on (.*?)(?: and more)?\.$/.exec(s);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb || pa[1] !== pb[1]) return null;
  const files = (m: RegExpExecArray) => [...m[3]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
  const moreA = a.endsWith(" and more.") || b.endsWith(" and more.");
  const all = [...new Set([...files(pa), ...files(pb)])];
  const merged = moduleContent(pa[1]!, pa[2] ?? pb[2] ?? null, moreA && all.length <= 6 ? [...all, "…"] : all);
  return merged.replace(", `…`", "").replace("`…`", "");
}
