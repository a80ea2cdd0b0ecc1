/**
 * The repository as a memory check sees it during one read: HEAD from files, plus the answers that
 * need git's object store (ancestry, renames since a commit, reverts, a search of tracked files,
 * whether a commit exists here), each asked once and cached per repository by a stamp of HEAD and
 * the index (staged renames change the index, not HEAD). A fresh stamp drops the cache.
 */
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gitDirs, gitStatus, readHead, runGit, type GitDirs, type Head } from "../../shared/git.ts";
import { readSource, wordRe } from "./source-file.ts";

export type Ancestry = "yes" | "no" | "unknown";

export interface Changes {
  renames: Map<string, string>;
  changed: string[];
}

interface GitMemo {
  stamp: string;
  ancestry: Map<string, Ancestry>;
  exists: Map<string, boolean>;
  changes: Map<string, Changes>;
  texts: Map<string, string | null>;
  reverted: Map<string, string> | null;
  /** Is a name (identifier or path) in the work tree? */
  present: Map<string, boolean>;
  /** An unmerged branch that has a name HEAD lacks (null: none). */
  holders: Map<string, string | null>;
  /** Branches (local, then remote-tracking) with commits HEAD does not contain, newest first. */
  unmerged: Array<{ ref: string; sha: string }> | null;
}

/** Unmerged branches searched for a missing name (the newest ones; each costs one `git grep`). */
const MAX_UNMERGED_REFS = 24;

const isPathName = (n: string) => n.includes("/") || /\.[A-Za-z][A-Za-z0-9]{0,5}$/.test(n);

/**
 * Which of `names` one `git grep` finds (whole words, fixed strings) in the work tree, or in the tree
 * of commit `ref`. Every match is listed (no --max-count: one line can hold several names, and the
 * first would hide the rest); -h leaves the match alone on its line.
 */
function grepNames(root: string, names: readonly string[], ref?: string): Set<string> {
  const found = new Set<string>();
  if (names.length === 0) return found;
  const args = ["grep", "-I", "-w", "-F", "-o", "-h", "--no-color", ...(ref ? [] : ["--untracked"])];
  const out = runGit(root, [...args, ...names.flatMap((n) => ["-e", n]), ...(ref ? [ref] : []), "--"], 10_000);
  const wanted = new Set(names);
  for (const line of (out ?? "").split("\n")) {
    const match = line.slice(line.lastIndexOf(":") + 1);
    if (wanted.has(match)) found.add(match);
  }
  return found;
}

const memos = new Map<string, GitMemo>();

export class RepoState {
  readonly root: string;
  readonly dirs: GitDirs | null;
  readonly head: Head | null;
  readonly stamp: string;
  private readonly memo: GitMemo;

  constructor(root: string) {
    this.root = root;
    this.dirs = gitDirs(root);
    this.head = this.dirs ? readHead(this.dirs) : null;
    let index = "-";
    if (this.dirs) {
      try {
        const st = statSync(join(this.dirs.gitDir, "index"));
        index = `${st.mtimeMs}:${st.size}`;
      } catch {
        // No index yet.
      }
    }
    this.stamp = `${this.dirs?.gitDir ?? "-"}|${this.head?.sha ?? "-"}|${index}`;
    const key = this.dirs?.gitDir ?? root;
    let memo = memos.get(key);
    if (!memo || memo.stamp !== this.stamp) {
      memo = {
        stamp: this.stamp,
        ancestry: new Map(),
        exists: new Map(),
        changes: new Map(),
        texts: new Map(),
        reverted: null,
        present: new Map(),
        holders: new Map(),
        unmerged: null,
      };
      memos.set(key, memo);
    }
    this.memo = memo;
  }

  get isGit(): boolean {
    return this.dirs !== null && this.head !== null;
  }

  /** Is `sha` HEAD or an ancestor of it? (A commit this clone lacks — shallow — is "unknown".) */
  ancestry(sha: string): Ancestry {
    if (!this.isGit || !this.head?.sha) return "unknown";
    if (sha === this.head.sha) return "yes";
    let a = this.memo.ancestry.get(sha);
    if (a === undefined) {
      // One process: exit 0 yes, 1 no, anything else (128: an object this clone lacks) unknown.
      const code = gitStatus(this.root, ["merge-base", "--is-ancestor", sha, this.head.sha]);
      a = code === 0 ? "yes" : code === 1 ? "no" : "unknown";
      this.memo.ancestry.set(sha, a);
    }
    return a;
  }

  /** Is `sha` a commit in this clone (a shallow clone may lack it)? */
  commitExists(sha: string): boolean {
    if (!this.isGit) return false;
    let e = this.memo.exists.get(sha);
    if (e === undefined) {
      e = gitStatus(this.root, ["cat-file", "-e", `${sha}^{commit}`]) === 0;
      this.memo.exists.set(sha, e);
    }
    return e;
  }

  /**
   * What changed between commit `since` (else HEAD) and the index: renames (old → new) and files
   * added or modified, committed or staged. Against the index, not the work tree: git then compares
   * trees without stat-ing every file (a work-tree diff took 20-50 ms on 5,000 files here); a plain
   * `mv` is not a rename to git until it is staged anyway.
   */
  changesSince(since: string | null): Changes {
    const from = since && this.ancestry(since) !== "unknown" ? since : this.head?.sha;
    if (!this.isGit || !from) return { renames: new Map(), changed: [] };
    let c = this.memo.changes.get(from);
    if (!c) {
      c = { renames: new Map(), changed: [] };
      const out = runGit(this.root, ["diff", "--cached", "-M", "--name-status", "-z", from]);
      if (out) {
        const parts = out.split("\0");
        for (let i = 0; i < parts.length; ) {
          const status = parts[i] ?? "";
          if (status.startsWith("R") || status.startsWith("C")) {
            if (status.startsWith("R")) c.renames.set(parts[i + 1]!, parts[i + 2]!);
            c.changed.push(parts[i + 2]!);
            i += 3;
          } else {
            if (status === "A" || status === "M") c.changed.push(parts[i + 1]!);
            i += 2;
          }
        }
      }
      this.memo.changes.set(from, c);
    }
    return c;
  }

  /**
   * A file (other than `except`) where `name` now appears as a whole word. Code moved by hand to
   * another file changed that file, so only the files changed since the anchor's commit are read —
   * no search of the whole tree (a `git grep` per check made a cold check of a stale memory 60+ ms).
   */
  findIdentifier(name: string, since: string | null, except: readonly string[] = []): string | null {
    if (!this.isGit) return null;
    const re = wordRe(name);
    for (const path of this.changesSince(since).changed) {
      if (except.includes(path)) continue;
      let text = this.memo.texts.get(path);
      if (text === undefined) {
        const r = readSource(this.root, path);
        text = r.ok ? r.text : null;
        this.memo.texts.set(path, text);
      }
      if (text !== null && re.test(text)) return path;
    }
    return null;
  }

  /**
   * Which of `names` are in the work tree (tracked or untracked files, `.gitignore` respected): an
   * identifier as a whole word in some file, a path as a file or folder. Asked once per stamp.
   */
  presentNames(names: readonly string[]): Set<string> {
    const memo = this.memo;
    const todo = [...new Set(names)].filter((n) => !memo.present.has(n));
    for (const p of todo.filter(isPathName)) memo.present.set(p, existsSync(join(this.root, p)));
    const ids = todo.filter((n) => !isPathName(n));
    if (ids.length > 0 && this.isGit) for (const n of grepNames(this.root, ids)) memo.present.set(n, true);
    for (const n of ids) if (!memo.present.has(n)) memo.present.set(n, false);
    return new Set(names.filter((n) => memo.present.get(n)));
  }

  /**
   * For names the work tree lacks: the newest unmerged branch (local or remote-tracking, one whose tip
   * HEAD does not contain) that has each — the work that named it lives there and has not landed.
   */
  unmergedHolders(names: readonly string[]): Map<string, string> {
    const memo = this.memo;
    const out = new Map<string, string>();
    const todo = [...new Set(names)].filter((n) => !memo.holders.has(n));
    if (todo.length > 0 && this.isGit && this.head?.sha) {
      if (!memo.unmerged && !this.otherTips()) memo.unmerged = [];
      if (!memo.unmerged) {
        const refs = runGit(this.root, [
          "for-each-ref",
          `--no-merged=${this.head.sha}`,
          "--sort=-committerdate",
          "--format=%(refname:short)%09%(objectname)",
          "refs/heads",
          "refs/remotes",
        ]);
        const seen = new Set<string>();
        memo.unmerged = [];
        for (const line of (refs ?? "").split("\n")) {
          const [ref, sha] = line.split("\t");
          if (!ref || !sha || seen.has(sha) || ref.endsWith("/HEAD")) continue;
          seen.add(sha);
          memo.unmerged.push({ ref, sha });
          if (memo.unmerged.length >= MAX_UNMERGED_REFS) break;
        }
      }
      const ids = todo.filter((n) => !isPathName(n));
      const paths = todo.filter(isPathName);
      for (const { ref, sha } of memo.unmerged) {
        const left = ids.filter((n) => !memo.holders.has(n));
        for (const n of grepNames(this.root, left, sha)) memo.holders.set(n, ref);
        const leftPaths = paths.filter((p) => !memo.holders.has(p));
        if (leftPaths.length > 0) {
          const listed = runGit(this.root, ["ls-tree", "--name-only", sha, "--", ...leftPaths]) ?? "";
          const have = new Set(listed.split("\n").filter(Boolean));
          for (const p of leftPaths) if (have.has(p)) memo.holders.set(p, ref);
        }
      }
      for (const n of todo) if (!memo.holders.has(n)) memo.holders.set(n, null);
    }
    for (const n of names) {
      const ref = memo.holders.get(n);
      if (ref) out.set(n, ref);
    }
    return out;
  }

  /**
   * Does any branch (local or remote-tracking) point at another commit than HEAD? Read from the ref
   * files, no process: a repository with one line of history has no unmerged work to search.
   */
  private otherTips(): boolean {
    if (!this.dirs || !this.head?.sha) return false;
    const head = this.head.sha;
    const common = this.dirs.commonDir;
    try {
      for (const line of readFileSync(join(common, "packed-refs"), "utf8").split("\n")) {
        const m = /^([0-9a-f]{40,64}) refs\/(?:heads|remotes)\//.exec(line);
        if (m && m[1] !== head) return true;
      }
    } catch {
      // No packed refs.
    }
    const walk = (dir: string, depth: number): boolean => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return false;
      }
      for (const e of entries) {
        const p = join(dir, e.name);
        if (e.isDirectory()) {
          if (depth < 8 && walk(p, depth + 1)) return true;
        } else if (e.name !== "HEAD") {
          try {
            const sha = readFileSync(p, "utf8").trim();
            if (/^[0-9a-f]{40,64}$/.test(sha) && sha !== head) return true;
          } catch {
            // Gone meanwhile.
          }
        }
      }
      return false;
    };
    return walk(join(common, "refs", "heads"), 0) || walk(join(common, "refs", "remotes"), 0);
  }

  /** The commit that reverted `sha` ("This reverts commit <sha>") in HEAD's history, or null. */
  revertOf(sha: string): string | null {
    if (!this.isGit || !this.head?.sha) return null;
    if (!this.memo.reverted) {
      this.memo.reverted = new Map();
      const out = runGit(this.root, ["log", "--format=%H%x1f%B%x1e", "--grep=This reverts commit", this.head.sha]);
      for (const rec of (out ?? "").split("\x1e")) {
        const [by, body] = rec.trim().split("\x1f");
        for (const m of (body ?? "").matchAll(/This reverts commit ([0-9a-f]{7,64})/g))
          this.memo.reverted.set(m[1]!, by!);
      }
    }
    for (const [reverted, by] of this.memo.reverted)
      if (reverted.startsWith(sha) || sha.startsWith(reverted)) return by;
    return null;
  }
}

/** Forget every cached git answer (tests, `sqrl doctor`). */
export function clearRepoMemos(): void {
  memos.clear();
}
