/**
 * git: commits of each registered repo as `git_commit` events, read with the git CLI from the
 * repo's own history. The cursor (last commit ingested) lives in state.db `git_cursors`; a cursor
 * that is no longer in the history (rebase, reset) falls back to the recent history and dedup
 * absorbs what was already stored. Changes are noticed by watching the git folder (HEAD, refs, logs)
 * plus the periodic sweep comparing `logs/HEAD` and `HEAD` mtimes — no git process while idle.
 */
import type { Database } from "bun:sqlite";
import { type FSWatcher, statSync, watch } from "node:fs";
import { join } from "node:path";
import type { NormalizedEvent } from "../../shared/event.ts";
import { log as rootLog } from "../../shared/log.ts";
import { nowIso } from "../../shared/time.ts";
import { getGitCursor, setGitCursor } from "../../sql/git-cursors.ts";
import { commitEvent, GIT_LOG_FORMAT, parseGitLog } from "../normalize/git.ts";

const log = rootLog.child({ service: "capture" });

/** Commits read on the first scan of a repo (most recent first in git, stored oldest first). */
export const GIT_BACKFILL_LIMIT = 5000;

function git(root: string, args: string[]): { ok: boolean; out: string; err: string } {
  try {
    const res = Bun.spawnSync(["git", "-C", root, ...args], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
    });
    return { ok: res.exitCode === 0, out: res.stdout.toString(), err: res.stderr.toString() };
  } catch (err) {
    return { ok: false, out: "", err: `git could not run (${(err as Error).message})` };
  }
}

/** git's own first line of complaint, without its `fatal: ` prefix. */
function firstLine(err: string): string {
  return (
    err
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0)
      ?.replace(/^(fatal|error): /, "")
      .slice(0, 200) ?? "no message"
  );
}

/** The repo's git folder, or undefined when `root` is not in a git work tree. */
export function gitDir(root: string): string | undefined {
  const r = git(root, ["rev-parse", "--absolute-git-dir"]);
  return r.ok ? r.out.trim() : undefined;
}

export interface GitReadResult {
  events: NormalizedEvent[];
  head: string | undefined;
  /** Set when the history could not be read (git missing, `git log` failing): not "no commits". */
  error?: string;
}

/** Commits after `since` (or the recent history), oldest first. */
export function readGitCommits(root: string, since: string | undefined, limit = GIT_BACKFILL_LIMIT): GitReadResult {
  const head = git(root, ["rev-parse", "--verify", "-q", "HEAD"]);
  if (!head.ok) {
    // A repository without commits yet (or no repository) has no history: that is no error.
    if (head.err.startsWith("git could not run")) return { events: [], head: undefined, error: head.err };
    return { events: [], head: undefined };
  }
  const headHash = head.out.trim();
  if (since === headHash) return { events: [], head: headHash };
  const base = ["log", `--format=${GIT_LOG_FORMAT}`, "--numstat", "--no-renames", "--relative", "--no-color"];
  let res = since ? git(root, [...base, `${since}..HEAD`]) : { ok: false, out: "", err: "" };
  if (!res.ok) res = git(root, [...base, "-n", String(limit), "HEAD"]);
  if (!res.ok) return { events: [], head: undefined, error: `git log failed: ${firstLine(res.err)}` };
  const commits = parseGitLog(res.out).reverse();
  return { events: commits.map((c) => commitEvent(c, root)), head: headHash };
}

export function gitCursor(state: Database, root: string): string | undefined {
  return getGitCursor(state, root);
}

export function saveGitCursor(state: Database, root: string, head: string): void {
  setGitCursor(state, root, head, nowIso());
}

interface Watched {
  root: string;
  dir: string;
  watchers: FSWatcher[];
  stamp: string;
}

/** Watches the git folders of registered repos; calls `onChange(root)` after a short quiet period. */
export class GitWatcher {
  private readonly repos = new Map<string, Watched>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly onChange: (root: string) => void,
    private readonly debounceMs = 300,
  ) {}

  /** Watch `root` if it is a git repo; false otherwise. */
  add(root: string): boolean {
    if (this.repos.has(root)) return true;
    const dir = gitDir(root);
    if (!dir) return false;
    const w: Watched = { root, dir, watchers: [], stamp: this.stamp(dir) };
    for (const sub of [dir, join(dir, "logs"), join(dir, "refs", "heads")]) {
      try {
        const fw = watch(sub, { recursive: false }, (_e, name) => {
          // In the git folder itself only HEAD and packed-refs matter (index changes on every `git status`).
          if (sub === dir && name !== null && !/^(HEAD|packed-refs)/.test(String(name))) return;
          this.schedule(root);
        });
        fw.on("error", () => fw.close());
        w.watchers.push(fw);
      } catch {
        // folder missing (fresh repo): the sweep covers it
      }
    }
    this.repos.set(root, w);
    return true;
  }

  remove(root: string): void {
    const w = this.repos.get(root);
    if (!w) return;
    for (const fw of w.watchers) fw.close();
    this.repos.delete(root);
  }

  roots(): string[] {
    return [...this.repos.keys()];
  }

  /** Periodic check without spawning git: did HEAD or its reflog change? */
  sweep(): void {
    for (const w of this.repos.values()) {
      const s = this.stamp(w.dir);
      if (s !== w.stamp) {
        w.stamp = s;
        this.schedule(w.root);
      }
    }
  }

  private stamp(dir: string): string {
    const parts: string[] = [];
    for (const f of ["HEAD", join("logs", "HEAD"), "packed-refs"]) {
      try {
        const st = statSync(join(dir, f));
        parts.push(`${st.size}:${st.mtimeMs}`);
      } catch {
        parts.push("-");
      }
    }
    return parts.join("|");
  }

  private schedule(root: string): void {
    const t = this.timers.get(root);
    if (t) clearTimeout(t);
    this.timers.set(
      root,
      setTimeout(() => {
        this.timers.delete(root);
        const w = this.repos.get(root);
        if (w) w.stamp = this.stamp(w.dir);
        try {
          this.onChange(root);
        } catch (err) {
          log.warn(`git capture of ${root} failed: ${(err as Error).message}`);
        }
      }, this.debounceMs),
    );
  }

  stop(): void {
    for (const w of this.repos.values()) for (const fw of w.watchers) fw.close();
    this.repos.clear();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
