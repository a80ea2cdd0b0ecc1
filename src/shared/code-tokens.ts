/**
 * Code-aware token expansion for full-text search. SQLite's FTS5 tokenizers cannot be extended
 * from JavaScript, so sqrl indexes (and queries) text with the parts of code identifiers spelled
 * out: `parseAuthToken` → `parse auth token`, `snake_case_name` → `snake case name`,
 * `src/auth/jwt.ts` → `src auth jwt ts`, `os.path.join` → `os path join`. The original words stay.
 */
/** Letters and digits of any script (so `café`, `Zürich` and CJK text are indexed, not dropped). */
const IDENT = /[\p{L}\p{N}_$][\p{L}\p{N}_$./\\:-]*[\p{L}\p{N}_$]|[\p{L}\p{N}]/gu;

export function splitIdentifier(word: string): string[] {
  return word
    .split(/[^\p{L}\p{N}]+/u)
    .flatMap((part) =>
      part
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
        .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2")
        .split(" "),
    )
    .map((p) => p.toLowerCase())
    .filter((p) => p.length > 0);
}

/** The text's words plus the parts of every compound identifier, lower-cased, space-separated. */
export function expandCodeTokens(text: string): string {
  const out: string[] = [];
  for (const match of text.matchAll(IDENT)) {
    const word = match[0];
    const parts = splitIdentifier(word);
    const plain = word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
    if (parts.length > 1 && plain.length > 0) out.push(plain);
    out.push(...parts);
  }
  return out.join(" ");
}

/**
 * The identifiers in a text, as references to one named thing: compound names (`parseAuthToken`,
 * `snake_case`, `ENT-98`, `src/a.ts`) and words mixing letters and digits (`9f3e2ab`, `v2`). Each
 * comes with its folded whole form and its parts, as expandCodeTokens writes them.
 */
export function identifiersIn(text: string): { plain: string; parts: string[] }[] {
  const out: { plain: string; parts: string[] }[] = [];
  for (const match of text.matchAll(IDENT)) {
    const word = match[0];
    const parts = splitIdentifier(word);
    const plain = word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
    const mixed = /\p{L}/u.test(plain) && /\p{N}/u.test(plain);
    if (plain.length > 0 && (parts.length > 1 || mixed)) out.push({ plain, parts });
  }
  return out;
}
