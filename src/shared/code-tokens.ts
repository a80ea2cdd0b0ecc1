/**
 * Code-aware token expansion for full-text search. SQLite's FTS5 tokenizers cannot be extended
 * from JavaScript, so sqrl indexes (and queries) text with the parts of code identifiers spelled
 * out: `parseAuthToken` → `parse auth token`, `snake_case_name` → `snake case name`,
 * `src/auth/jwt.ts` → `src auth jwt ts`, `os.path.join` → `os path join`. The original words stay.
 */
const IDENT = /[A-Za-z0-9_$][A-Za-z0-9_$./\\:-]*[A-Za-z0-9_$]|[A-Za-z0-9]/g;

export function splitIdentifier(word: string): string[] {
  return word
    .split(/[^A-Za-z0-9]+/)
    .flatMap((part) => part.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2").split(" "))
    .map((p) => p.toLowerCase())
    .filter((p) => p.length > 0);
}

/** The text's words plus the parts of every compound identifier, lower-cased, space-separated. */
export function expandCodeTokens(text: string): string {
  const out: string[] = [];
  for (const match of text.matchAll(IDENT)) {
    const word = match[0];
    const parts = splitIdentifier(word);
    const plain = word.toLowerCase().replace(/[^a-z0-9]+/g, "");
    if (parts.length > 1 && plain.length > 0) out.push(plain);
    out.push(...parts);
  }
  return out.join(" ");
}
