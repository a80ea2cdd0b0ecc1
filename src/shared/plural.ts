/** Counted nouns in text people and models read: "1 file", "2 files", "1 memory", "3 memories". */
export function plural(
  n: number,
  singular: string,
  pluralForm = singular.endsWith("y") && !/[aeiou]y$/.test(singular) ? `${singular.slice(0, -1)}ies` : `${singular}s`,
): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}

/** The singular of a plain English plural noun ("memories" → "memory", "items" → "item"). */
export function singularOf(noun: string): string {
  if (noun.endsWith("ies")) return `${noun.slice(0, -3)}y`;
  return noun.endsWith("s") ? noun.slice(0, -1) : noun;
}
