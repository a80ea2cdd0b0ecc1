/**
 * Options the assistant lays out for the user to choose from: "A) …", "**Option A**: …",
 * "**Option A (Recommended): Throw on failure …**", "### Option B — …"; a reply such as "A" or "go with
 * option B" picks one (decisions.ts).
 * (An approved plan's recommended option was stored as a decision once: two reviewers read it as a
 * changelog entry of the fix, so it is not one.)
 */

export interface OfferedOption {
  /** "A", "B", "1", … (upper-cased). */
  label: string;
  title: string;
}

const RECOMMENDED = /\s*\((?:recommended|preferred)\)\s*/i;
const OPTION_LINE =
  /^\s*(?:#{1,6}\s+)?(?:[-*]\s+)?(?:\*\*)?\s*((?:option|approach|alternative)\s+)?([A-Da-d1-4])(?:\*\*)?\s*[).:—–-]\s*(?:\*\*)?\s*(.{8,200})$/i;

/** Markdown emphasis and links folded to their text. */
function plainText(line: string): string {
  return line
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/\*\*/g, "")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .trim();
}

/**
 * The options laid out in a text, in order; fewer than two is no choice, so none. When some are
 * written "Option A", only those are options: numbered steps elsewhere (or under an option) are not.
 */
export function optionList(text: string): OfferedOption[] {
  const matches = text.split(/\r?\n/).map((line) => OPTION_LINE.exec(line.replace(RECOMMENDED, " ")));
  const namedOnly = matches.some((m) => m?.[1] !== undefined);
  const out = matches
    .filter((m): m is RegExpExecArray => m !== null && (!namedOnly || m[1] !== undefined))
    .map((m) => ({ label: m[2]!.toUpperCase(), title: plainText(m[3]!).replace(/[.:]+$/, "") }));
  const labels = new Set(out.map((o) => o.label));
  return labels.size >= 2 && labels.size === out.length ? out : [];
}
