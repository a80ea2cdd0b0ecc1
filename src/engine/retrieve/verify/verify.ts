/**
 * Memories checked against today's code at the moment they are served (task_context, views, search
 * and through the views the SessionStart hook). The anchor comes from `memory_anchors`; an item
 * without one is anchored in memory on first serve (reads never write: `sqrl reprocess` and
 * `sqrl doctor` store anchors). Each result is cached with the mtime and size of every file it
 * looked at plus the repository stamp (HEAD and index), so a repeated call costs a few stat calls
 * per served item. A check never fails the read: anything unexpected is "unverifiable".
 */
import { log } from "../../../shared/log.ts";
import { nowIso } from "../../../shared/time.ts";
import { anchorJsonOf } from "../../../sql/memory-anchors.ts";
import type { MemoryItem } from "../../../sql/memory-items.ts";
import { Anchor, buildAnchor } from "../../anchors/anchor.ts";
import { stampOf } from "../../anchors/source-file.ts";
import {
  applyMoves,
  checkAnchor,
  namesToSearch,
  type CheckResult,
  type Move,
  type VerificationStatus,
} from "../../anchors/check.ts";
import { RepoState } from "../../anchors/repo-state.ts";
import type { RetrievalContext } from "../retrieval-context.ts";

export interface Verification {
  status: VerificationStatus;
  reason: string;
  moves: Move[];
}

interface Cached {
  anchorKey: string;
  repoStamp: string;
  result: CheckResult;
}

/** Per project root: check results and in-memory anchors of items that have none stored. */
const results = new Map<string, Map<string, Cached>>();
const lazyAnchors = new Map<string, Map<string, { key: string; anchor: Anchor }>>();

function mapOf<V>(m: Map<string, Map<string, V>>, root: string): Map<string, V> {
  let inner = m.get(root);
  if (!inner) {
    inner = new Map();
    m.set(root, inner);
  }
  return inner;
}

function stillValid(c: Cached, root: string, repoStamp: string, anchorKey: string): boolean {
  if (c.repoStamp !== repoStamp || c.anchorKey !== anchorKey) return false;
  for (const [path, was] of c.result.deps) {
    const now = stampOf(root, path);
    if (now === null || was === null) {
      if (now !== was) return false;
    } else if (now.mtimeMs !== was.mtimeMs || now.size !== was.size) return false;
  }
  return true;
}

type Checkable = Pick<MemoryItem, "id" | "content" | "file_paths" | "updated_at">;

function anchorFor(
  root: string,
  item: Checkable,
  stored: string | undefined,
  nowMs: number,
): { key: string; anchor: Anchor } | null {
  if (stored !== undefined) {
    const parsed = Anchor.safeParse(JSON.parse(stored));
    return parsed.success ? { key: stored, anchor: parsed.data } : null;
  }
  const lazy = mapOf(lazyAnchors, root);
  const key = `lazy:${item.updated_at}:${item.content.length}`;
  const hit = lazy.get(item.id);
  if (hit && hit.key === key) return hit;
  const built = { key, anchor: buildAnchor(root, item, "lazy", nowIso(nowMs), { searchRepo: false }) };
  lazy.set(item.id, built);
  return built;
}

/** Check items against the repository at `root` (ids of global style items are skipped: they are not about code). */
export function verifyItems(
  root: string,
  db: RetrievalContext["db"],
  items: readonly Checkable[],
  nowMs = Date.now(),
): Map<string, Verification> {
  const out = new Map<string, Verification>();
  const project = items.filter((i) => !i.id.startsWith("ust_"));
  if (project.length === 0) return out;
  let repo: RepoState;
  let stored: Map<string, string>;
  try {
    repo = new RepoState(root);
    stored = anchorJsonOf(
      db,
      project.map((i) => i.id),
    );
  } catch (err) {
    for (const i of project)
      out.set(i.id, { status: "unverifiable", reason: `check failed: ${(err as Error).message}`, moves: [] });
    return out;
  }
  const cache = mapOf(results, root);
  const todo: Array<{ item: Checkable; a: { key: string; anchor: Anchor } }> = [];
  for (const item of project) {
    try {
      const a = anchorFor(root, item, stored.get(item.id), nowMs);
      if (!a) {
        out.set(item.id, { status: "unverifiable", reason: "its anchor could not be read", moves: [] });
        continue;
      }
      const hit = cache.get(item.id);
      if (hit && stillValid(hit, root, repo.stamp, a.key))
        out.set(item.id, { status: hit.result.status, reason: hit.result.reason, moves: hit.result.moves });
      else todo.push({ item, a });
    } catch (err) {
      log.debug(`memory anchor of ${item.id} failed: ${(err as Error).message}`);
      out.set(item.id, { status: "unverifiable", reason: "the check could not run", moves: [] });
    }
  }
  // What the items name, asked of git once for all of them (not once per item).
  try {
    const names = [...new Set(todo.flatMap(({ a }) => namesToSearch(a.anchor)))];
    if (names.length > 0 && repo.isGit) {
      const present = repo.presentNames(names);
      repo.unmergedHolders(names.filter((n) => !present.has(n)));
    }
  } catch (err) {
    log.debug(`names of memories could not be looked up: ${(err as Error).message}`);
  }
  for (const { item, a } of todo) {
    try {
      const result = checkAnchor(a.anchor, repo);
      cache.set(item.id, { anchorKey: a.key, repoStamp: repo.stamp, result });
      out.set(item.id, { status: result.status, reason: result.reason, moves: result.moves });
    } catch (err) {
      log.debug(`memory check of ${item.id} failed: ${(err as Error).message}`);
      out.set(item.id, { status: "unverifiable", reason: "the check could not run", moves: [] });
    }
  }
  return out;
}

/** Where a read's memories are checked: the caller's linked worktree, else the project root. */
export function checkRoot(ctx: Pick<RetrievalContext, "projectId" | "workTree">): string {
  return ctx.workTree ?? ctx.projectId;
}

/** The item as served: moved paths and renamed identifiers written as they are today. */
export function asServed<T extends Pick<MemoryItem, "content" | "file_paths">>(
  item: T,
  v: Verification | undefined,
): T {
  if (!v || v.moves.length === 0) return item;
  const files = new Map(v.moves.filter((m) => m.kind === "file").map((m) => [m.from, m.to]));
  return {
    ...item,
    content: applyMoves(item.content, v.moves),
    file_paths: [...new Set(item.file_paths.map((p) => files.get(p) ?? p))],
  };
}

/** Short words for reasons and markdown. */
export function statusNote(v: Verification | undefined): string {
  if (!v) return "";
  if (v.status === "verified") return "checked against the code: still there";
  if (v.status === "moved") return `checked against the code: moved (${v.reason})`;
  if (v.status === "stale") return `may be out of date: ${v.reason}`;
  return `not checked against the code: ${v.reason}`;
}

/** A served item's reason with its check appended as one sentence: "…, updated 2 d ago; checked against the code: …." */
export function withStatusNote(reason: string, v: Verification): string {
  return `${reason.replace(/[.;\s]+$/, "")}; ${statusNote(v).replace(/[.;\s]+$/, "")}.`;
}

export function verificationField(v: Verification | undefined): {
  verification?: { status: VerificationStatus; reason: string };
} {
  return v ? { verification: { status: v.status, reason: v.reason } } : {};
}

/** Forget cached results (tests and benchmarks measure cold checks). */
export function clearVerificationCache(): void {
  results.clear();
  lazyAnchors.clear();
}

/** What a view's cache compares: the check results of the items it showed or held back. */
export function checkSignature(
  root: string,
  db: RetrievalContext["db"],
  items: readonly Checkable[],
  nowMs = Date.now(),
): string {
  const checks = verifyItems(root, db, items, nowMs);
  return [...items]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((i) => `${i.id}:${checks.get(i.id)?.status ?? "-"}:${checks.get(i.id)?.reason ?? ""}`)
    .join("|");
}

/** A full-mode line for a held-back item: shown apart, with why it may be out of date. */
export function outOfDateLine(content: string, v: Verification): string {
  return `- May be out of date (${v.reason}): ${content.trim().replace(/\s+/g, " ")}`;
}
