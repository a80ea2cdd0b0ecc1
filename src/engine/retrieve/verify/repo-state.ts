/**
 * The repository as a memory check sees it during one read: HEAD from files, plus the answers that
 * need git's object store (ancestry, renames since a commit, reverts, a search of tracked files,
 * whether a commit exists here), each asked once and cached per repository by a stamp of HEAD and
 * the index (staged renames change the index, not HEAD). A fresh stamp drops the cache.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { gitDirs, gitStatus, readHead, runGit, type GitDirs, type Head } from "../../anchors/git.ts";

export type Ancestry = "yes" | "no" | "unknown";

interface GitMemo {
  stamp: string;
  ancestry: Map<string, Ancestry>;
  exists: Map<string, boolean>;
  renames: Map<string, Map<string, string>>;
  grep: Map<string, string | null>;
  reverted: Map<string, string> | null;
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
      memo = { stamp: this.stamp, ancestry: new Map(), exists: new Map(), renames: new Map(), grep: new Map(), reverted: null };
      memos.set(key, memo);
    }
    this.memo = memo;
  }

  get isGit(): boolean {
    return this.dirs !== null && this.head !== null;
  }

  /** Is `sha` HEAD or an ancestor of it? */
  ancestry(sha: string): Ancestry {
    if (!this.isGit || !this.head?.sha) return "unknown";
    if (sha === this.head.sha) return "yes";
    let a = this.memo.ancestry.get(sha);
    if (a === undefined) {
      if (!this.commitExists(sha)) a = "unknown";
      else {
        const code = gitStatus(this.root, ["merge-base", "--is-ancestor", sha, this.head.sha]);
        a = code === 0 ? "yes" : code === 1 ? "no" : "unknown";
      }
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

  /** Files renamed between commit `since` and the work tree (old path → new path). */
  renamesSince(since: string | null): Map<string, string> {
    const from = since && this.commitExists(since) ? since : this.head?.sha;
    if (!this.isGit || !from) return new Map();
    let r = this.memo.renames.get(from);
    if (!r) {
      r = new Map();
      const out = runGit(this.root, ["diff", "-M", "--name-status", "-z", from]);
      if (out) {
        const parts = out.split("\0");
        for (let i = 0; i < parts.length; ) {
          const status = parts[i] ?? "";
          if (status.startsWith("R")) {
            r.set(parts[i + 1]!, parts[i + 2]!);
            i += 3;
          } else i += status.startsWith("C") ? 3 : 2;
        }
      }
      this.memo.renames.set(from, r);
    }
    return r;
  }

  /** A tracked file (other than `except`) where `name` appears as a whole word, or null. */
  findIdentifier(name: string, except: readonly string[] = []): string | null {
    if (!this.isGit) return null;
    const key = `${name}\0${except.join("\0")}`;
    if (this.memo.grep.has(key)) return this.memo.grep.get(key)!;
    let found: string | null = null;
    const out = runGit(this.root, ["grep", "--untracked", "-l", "-I", "-w", "-F", "-e", name, "--", "."]);
    if (out) found = out.split("\n").find((p) => p.length > 0 && !except.includes(p)) ?? null;
    this.memo.grep.set(key, found);
    return found;
  }

  /** The commit that reverted `sha` ("This reverts commit <sha>") in HEAD's history, or null. */
  revertOf(sha: string): string | null {
    if (!this.isGit || !this.head?.sha) return null;
    if (!this.memo.reverted) {
      this.memo.reverted = new Map();
      const out = runGit(this.root, ["log", "--format=%H%x1f%B%x1e", "--grep=This reverts commit", this.head.sha]);
      for (const rec of (out ?? "").split("\x1e")) {
        const [by, body] = rec.trim().split("\x1f");
        for (const m of (body ?? "").matchAll(/This reverts commit ([0-9a-f]{7,64})/g)) this.memo.reverted.set(m[1]!, by!);
      }
    }
    for (const [reverted, by] of this.memo.reverted) if (reverted.startsWith(sha) || sha.startsWith(reverted)) return by;
    return null;
  }
}

/** Forget every cached git answer (tests, `sqrl doctor`). */
export function clearRepoMemos(): void {
  memos.clear();
}
