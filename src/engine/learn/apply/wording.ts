/**
 * When two statements say the same thing: the word overlap the update step compares candidates with
 * (jaccard, and how much of the first the second contains), and the test a person's correction is held
 * to — the same wording once the citation of where it was read (`(CLAUDE.md:12)`, `(from
 * package.json)`) is left out, so a file edited above the line, or a line moved, is still the same rule.
 */

const STOP = new Set(
  "a an the to of in on for with and or is are be by as at it its this that from e.g then use uses".split(" "),
);

export function tokens(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .replace(/[`"'“”()[\]{},;:!?]/g, " ")
      .split(/\s+/)
      .map((w) => w.replace(/\.+$/, ""))
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );
}

export function similarity(a: string, b: string): { jaccard: number; containment: number } {
  const ta = tokens(a);
  const tb = tokens(b);
  if (ta.size === 0 || tb.size === 0) return { jaccard: 0, containment: 0 };
  let inter = 0;
  for (const t of ta) if (tb.has(t)) inter++;
  return { jaccard: inter / (ta.size + tb.size - inter), containment: inter / ta.size };
}

/** A parenthesis that cites where a statement was read: a file (with a line), or "from <files>". */
const CITATION = /\s*\((?:from\s[^()]*|[^()\s]*[\w-]\.[a-z]{1,5}(?::\d+)?(?:,\s*[^()\s]+)*|[^()\s]+:\d+)\)/gi;

export function withoutCitations(content: string): string {
  return content.replace(CITATION, "").trim();
}

/**
 * The same statement in other words at most: what a person forgot, marked wrong or rewrote is not made
 * again when a candidate says it again (from a later session, a re-read file, an import, a teammate).
 */
export function sameWording(a: string, b: string): boolean {
  const x = withoutCitations(a);
  const y = withoutCitations(b);
  if (x.toLowerCase() === y.toLowerCase()) return true;
  const s = similarity(x, y);
  return s.jaccard >= 0.7 || (s.containment >= 0.9 && tokens(x).size >= 3);
}
