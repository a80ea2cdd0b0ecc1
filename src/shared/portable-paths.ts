/**
 * Paths as they may leave this machine: repo-relative inside the project, `~/…` under a home
 * directory (any user's, on any OS: transcripts are often written on another machine), and nothing
 * else absolute. Used for memory text, exports and team files (nothing meant for git names a local
 * folder or a user).
 */

/** Home directories as transcripts record them: macOS, Linux, root, Windows (either slash). */
const HOME_PATH = /(?:\/Users\/|\/home\/|[A-Za-z]:[\\/]Users[\\/])[^/\\\s`'"),:;]+|\/root(?=\/|\b)/g;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Rewrite every absolute path in `text`: under one of `roots` (the project's checkout, or the
 * checkout recorded in a transcript) → repo-relative; under a home directory → `~/…`.
 */
export function portableText(text: string, roots: readonly string[] = []): string {
  let out = text;
  for (const root of [...roots].filter((r) => r.length > 1).sort((a, b) => b.length - a.length)) {
    const r = root.replace(/[\\/]+$/, "");
    // "<root>/src/x.ts" → "src/x.ts"; the bare root → "the repo root".
    out = out
      .replace(new RegExp(`${escapeRe(r)}[\\\\/]`, "g"), "")
      .replace(new RegExp(`${escapeRe(r)}(?![\\w.-])`, "g"), ".");
  }
  return out.replace(HOME_PATH, "~");
}

/** One path made portable: repo-relative when under a root, `~/…` under a home, else unchanged. */
export function portablePath(path: string, roots: readonly string[] = []): string {
  return portableText(path, roots);
}

/** True when `text` still names a local absolute home path (a user name leaks through it). */
export function hasHomePath(text: string): boolean {
  HOME_PATH.lastIndex = 0;
  const hit = HOME_PATH.test(text);
  HOME_PATH.lastIndex = 0;
  return hit;
}
