/**
 * Memory text for people: a readable subject instead of the internal key (`pref:enabl_run_evaluation…`
 * is a stemmed lookup key), and inline code (`bun test`) shown as code instead of raw backticks.
 */

/**
 * The subject of a memory from its key: the key's words without its `kind:` prefix, each stem
 * (`enabl`) restored to the word of the content it was cut from (`enabled`), underscores as spaces.
 */
export function subjectOf(key: string, content: string): string {
  const body = key.replace(/^[a-z]+:/, "");
  const words = content.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
  const parts = body
    .split(/[_\s]+/)
    .filter((p) => p.length > 0)
    .map((stem) => {
      if (!/^[\p{L}\p{N}]+$/u.test(stem)) return stem; // a path or a command: keep as written
      return words.find((w) => w === stem) ?? words.find((w) => w.startsWith(stem)) ?? stem;
    });
  const text = parts.join(" ").trim();
  return text.length > 0 ? text : key;
}

/** Text with `inline code` spans rendered as <code>; the backticks themselves are not shown. */
export function InlineText(props: { text: string }) {
  const pieces = props.text.split(/(`[^`\n]+`)/g);
  return (
    <>
      {pieces.map((p, i) =>
        p.length > 2 && p.startsWith("`") && p.endsWith("`") ? <code key={i}>{p.slice(1, -1)}</code> : p,
      )}
    </>
  );
}
