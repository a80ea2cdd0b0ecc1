/**
 * FTS5 MATCH expressions built from query words. Every word is quoted (a bare word such as `AND`,
 * `NEAR` or `col:` would be FTS5 syntax) and double quotes inside are dropped.
 */
export function quoteTerm(word: string): string {
  return `"${word.replace(/"/g, "")}"`;
}

/** OR of the words, or null when none is left. */
export function matchExpression(words: readonly string[]): string | null {
  const quoted = words
    .map((w) => w.replace(/"/g, ""))
    .filter((w) => w.length > 0)
    .map((w) => `"${w}"`);
  return quoted.length > 0 ? quoted.join(" OR ") : null;
}
