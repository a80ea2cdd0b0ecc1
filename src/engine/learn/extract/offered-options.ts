/**
 * Options the assistant lays out for the user to choose from, in a message or in a plan:
 * "A) …", "**Option A**: …", "**Option A (Recommended): Throw on failure …**", "### Option B — …",
 * each with the bullet lines under it. And, for an approved plan, the option it went with: the one
 * marked "(Recommended)" or named by an "Implementation (Option A)" / "Recommendation: Option A" line,
 * when exactly one is.
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
const PLAN_CHOSEN =
  /^\s*(?:#{1,6}\s+)?(?:\*\*)?\s*(?:implementation|recommendation|recommended(?: (?:option|approach|fix))?|chosen(?: (?:option|approach))?|decision|going with|go with)\b[^\n]{0,24}?\b(?:option|approach)\s+([A-D1-4])\b/im;

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

/** The option an approved plan went with, or null when the plan names none or several. */
export function planChoice(plan: string): { chosen: OfferedOption; others: OfferedOption[] } | null {
  const options = optionList(plan).filter((o) => o.named);
  if (options.length < 2) return null;
  const picks = new Set(options.filter((o) => o.recommended).map((o) => o.label));
  const named = PLAN_CHOSEN.exec(plan);
  if (named) picks.add(named[1]!.toUpperCase());
  if (picks.size !== 1) return null;
  const chosen = options.find((o) => picks.has(o.label));
  if (!chosen) return null;
  return { chosen, others: options.filter((o) => o !== chosen) };
}
