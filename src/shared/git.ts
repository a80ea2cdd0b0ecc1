/**
 * What a memory check needs to know about the repository, read as cheaply as possible: where the git
 * directory and its common directory are and which commit HEAD names come from plain file reads (no
 * process, a few microseconds); anything that needs git's object store (ancestry, renames, a search
 * of tracked files, reverts) runs `git` once and is cached by the HEAD it was asked at. Every call
 * degrades to "unknown" (null) instead of throwing: a broken or missing repository makes a memory
 * unverifiable, never fails a read.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

export interface GitDirs {
  /** This checkout's git directory (`.git`, or `.git/worktrees/<name>` for a linked worktree). */
  gitDir: string;
  /** The repository's shared git directory (the same for every worktree of one repository). */
  commonDir: string;
}

/** The git directories of a work tree root, or null when it is not the top of a git checkout. */
export function gitDirs(root: string): GitDirs | null {
  const dotGit = join(root, ".git");
  let gitDir: string;
  try {
    const st = statSync(dotGit);
    if (st.isDirectory()) gitDir = dotGit;
    else {
      const m = /^gitdir:\s*(.+)\s*$/m.exec(readFileSync(dotGit, "utf8"));
      if (!m) return null;
      gitDir = isAbsolute(m[1]!) ? m[1]! : resolve(root, m[1]!);
    }
  } catch {
    return null;
  }
  let commonDir = gitDir;
  try {
    const rel = readFileSync(join(gitDir, "commondir"), "utf8").trim();
    if (rel) commonDir = isAbsolute(rel) ? rel : resolve(gitDir, rel);
  } catch {
    // Not a linked worktree: the git directory is the common one.
  }
  return existsSync(join(gitDir, "HEAD")) ? { gitDir, commonDir } : null;
}

export interface Head {
  /** The commit HEAD points at, or null on an unborn branch. */
  sha: string | null;
  /** The branch name, or null when HEAD is detached. */
  branch: string | null;
}

function packedRef(commonDir: string, ref: string): string | null {
  try {
    for (const line of readFileSync(join(commonDir, "packed-refs"), "utf8").split("\n")) {
      if (line.endsWith(` ${ref}`)) return line.slice(0, line.indexOf(" "));
    }
  } catch {
    // No packed refs.
  }
  return null;
}

/** HEAD of a checkout from its files (loose ref, then packed-refs). */
export function readHead(dirs: GitDirs): Head | null {
  let head: string;
  try {
    head = readFileSync(join(dirs.gitDir, "HEAD"), "utf8").trim();
  } catch {
    return null;
  }
  if (/^[0-9a-f]{40,64}$/.test(head)) return { sha: head, branch: null };
  const m = /^ref:\s*(\S+)$/.exec(head);
  if (!m) return null;
  const ref = m[1]!;
  const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
  for (const dir of [dirs.gitDir, dirs.commonDir]) {
    try {
      const sha = readFileSync(join(dir, ref), "utf8").trim();
      if (/^[0-9a-f]{40,64}$/.test(sha)) return { sha, branch };
    } catch {
      // Try the next place.
    }
  }
  return { sha: packedRef(dirs.commonDir, ref), branch };
}

/** Run git in `root`; stdout, or null when git fails, is missing or takes too long. */
export function runGit(root: string, args: readonly string[], timeoutMs = 5000): string | null {
  try {
    const res = Bun.spawnSync(["git", "-C", root, ...args], {
      stdout: "pipe",
      stderr: "ignore",
      stdin: "ignore",
      timeout: timeoutMs,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
    });
    return res.exitCode === 0 ? res.stdout.toString() : null;
  } catch {
    return null;
  }
}

/** Exit code of a git command (for yes/no questions such as ancestry), or null when it could not run. */
export function gitStatus(root: string, args: readonly string[], timeoutMs = 5000): number | null {
  try {
    const res = Bun.spawnSync(["git", "-C", root, ...args], {
      stdout: "ignore",
      stderr: "ignore",
      stdin: "ignore",
      timeout: timeoutMs,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
    });
    return res.exitCode;
  } catch {
    return null;
  }
}

/** The top of the checkout containing `path` (walks up to a `.git`), or null. */
export function checkoutRoot(path: string): string | null {
  let dir = resolve(path);
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}
