/**
 * Options the assistant lays out for the user to choose from, in a message or in a plan:
 * "A) …", "**Option A**: …", "**Option A (Recommended): Throw on failure …**", "### Option B — …",
 * each with the bullet lines under it; a reply such as "A" or "go with option B" picks one (decisions.ts).
 * (An approved plan's recommended option was stored as a decision once: two reviewers read it as a
 * changelog entry of the fix, so it is not one.)
 */

export interface OfferedOption {
  /** "A", "B", "1", … (upper-cased). */
  label: string;
  title: string;
  /** The bullet lines under the option, plain text. */
  body: string[];
  recommended: boolean;
  /** Written as "Option A" / "Approach A" (not a bare "A)" or "1." list item). */
  named: boolean;
}

const RECOMMENDED = /\s*\((?:recommended|preferred)\)\s*/i;
const OPTION_LINE =
  /^\s*(?:#{1,6}\s+)?(?:[-*]\s+)?(?:\*\*)?\s*((?:option|approach|alternative)\s+)?([A-Da-d1-4])(?:\*\*)?\s*[).:—–-]\s*(?:\*\*)?\s*(.{8,200})$/i;
const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+(.+)$/;

/** Markdown emphasis and links folded to their text. */
export function plainText(line: string): string {
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
  const lines = text.split(/\r?\n/).map((line) => {
    const m = OPTION_LINE.exec(line.replace(RECOMMENDED, " "));
    return { line, m, recommended: RECOMMENDED.test(line) };
  });
  const namedOnly = lines.some((l) => l.m?.[1] !== undefined);
  const out: OfferedOption[] = [];
  let current: OfferedOption | null = null;
  for (const { line, m, recommended } of lines) {
    if (m && (!namedOnly || m[1] !== undefined)) {
      current = {
        label: m[2]!.toUpperCase(),
        title: plainText(m[3]!).replace(/[.:]+$/, ""),
        body: [],
        recommended,
        named: m[1] !== undefined,
      };
      out.push(current);
      continue;
    }
    if (!current) continue;
    if (/^\s*#/.test(line) || /^\s*\*\*[^*]+\*\*\s*:?\s*$/.test(line)) {
      current = null; // a new heading ends the option
      continue;
    }
    const b = BULLET.exec(line);
    if (b) current.body.push(plainText(b[1]!));
  }
  const labels = new Set(out.map((o) => o.label));
  return labels.size >= 2 && labels.size === out.length ? out : [];
}
