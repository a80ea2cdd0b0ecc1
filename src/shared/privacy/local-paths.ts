/**
 * Local absolute paths out of text meant to leave the machine or to be read by a model: paths
 * inside the project become repo-relative (`/home/alice/code/app/src/a.ts` → `src/a.ts`, the root
 * itself → `.`), and home folders of any machine that wrote a transcript become `~`
 * (`/Users/bob/…`, `/home/bob/…`, `/root/…`, `C:\Users\bob\…`, and this machine's own home), so
 * neither a local layout nor a user name from a home directory reaches git, an export or a prompt.
 */
import { userHome } from "../paths.ts";

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A path character boundary: what may stand before an absolute path in prose, JSON or a command. */
const BEFORE = "(?<![\\w.~%+-])";
const HOME_PATTERNS: readonly RegExp[] = [
  new RegExp(`${BEFORE}/(?:Users|home)/[^/\\s"'\`:;,)\\]}>]+(?=/|$|[\\s"'\`:;,)\\]}>])`, "g"),
  new RegExp(`${BEFORE}/root(?=/|$|[\\s"'\`:;,)\\]}>])`, "g"),
  /\b[A-Za-z]:\\(?:Users|Documents and Settings)\\[^\\\s"'`:;,)\]}>]+/g,
];

const cache = new Map<string, RegExp[]>();

function rootPatterns(root: string | undefined): RegExp[] {
  const key = `${root ?? ""}\0${userHome()}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = [];
    const r = root?.replace(/\/+$/, "");
    if (r && r.length > 1) {
      hit.push(new RegExp(`${BEFORE}${escapeRe(r)}/`, "g"));
      hit.push(new RegExp(`${BEFORE}${escapeRe(r)}(?![\\w./-])`, "g"));
    }
    const home = userHome().replace(/\/+$/, "");
    if (home.length > 1 && !/^\/(?:Users|home)\/[^/]+$/.test(home) && home !== "/root")
      hit.push(new RegExp(`${BEFORE}${escapeRe(home)}(?=/|$|[\\s"'\`:;,)\\]}>])`, "g"));
    if (cache.size > 100) cache.clear();
    cache.set(key, hit);
  }
  return hit;
}

/** `text` with the project's root made relative and every home folder written `~`. */
export function scrubLocalPaths(text: string, root?: string): string {
  if (!text.includes("/") && !text.includes("\\")) return text;
  const [inside, bareRoot, ownHome] = rootPatterns(root);
  let out = text;
  if (inside) out = out.replace(inside, "");
  if (bareRoot) out = out.replace(bareRoot, ".");
  if (ownHome) out = out.replace(ownHome, "~");
  for (const re of HOME_PATTERNS) out = out.replace(re, "~");
  return out;
}

/** Does `text` still carry a local absolute path (a home folder or the given root)? For tests and checks. */
export function hasLocalPath(text: string, root?: string): boolean {
  return scrubLocalPaths(text, root) !== text;
}
