/**
 * Anchors recorded where memories are stored (issue 15 item 1): after an episode's updates are
 * applied, every project item they produced is anchored against the repository as it is now — the
 * files it cites, the identifiers found in them, its scripts and, for pitfalls and decisions, the
 * commit the episode's events show the fix or decision landing in. `sqrl reprocess` records them
 * the same way for an existing store.
 */
import type { Database } from "bun:sqlite";
import type { EventDTO } from "../../../shared/event.ts";
import { log } from "../../../shared/log.ts";
import { nowIso } from "../../../shared/time.ts";
import { anchorJsonOf, putAnchorJson } from "../../../sql/memory-anchors.ts";
import { getMemoryItem, type MemoryItem } from "../../../sql/memory-items.ts";
import { buildAnchor, namedInContent } from "../../anchors/anchor.ts";
import { wordRe } from "../../anchors/source-file.ts";
import { gitDirs, runGit } from "../../../shared/git.ts";
import { currentText } from "./follow-renames.ts";

interface EpisodeCommit {
  sha: string;
  files: string[];
}

/** `[main 1a2b3c4] message` — what `git commit` prints. */
const COMMIT_LINE = /^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\]/m;

/** Commits an episode's events show being made: git_commit events and the output of `git commit`. */
export function episodeCommits(events: readonly EventDTO[]): EpisodeCommit[] {
  const out: EpisodeCommit[] = [];
  for (const e of events) {
    let c: {
      commit?: { hash?: string; files?: string[] };
      command?: string;
      output?: string;
      exit_code?: number | null;
    } = {};
    try {
      c = JSON.parse(e.content_json) as typeof c;
    } catch {
      continue;
    }
    if (e.event_type === "git_commit" && c.commit?.hash) out.push({ sha: c.commit.hash, files: c.commit.files ?? [] });
    else if (
      (e.event_type === "command_run" || e.event_type === "test_run") &&
      /\bgit\b[^|;&]*\bcommit\b/.test(c.command ?? "") &&
      c.exit_code === 0
    ) {
      const m = COMMIT_LINE.exec(c.output ?? "");
      if (m) out.push({ sha: m[1]!, files: [...e.file_paths] });
    }
  }
  return out;
}

/** One edit an episode made to a file of the repository: the file and the text the edit left. */
interface Written {
  path: string;
  text: string;
}

/** The episode's edits of files git tracks or would track (an ignored file is not the repository's code). */
export function episodeWrites(root: string, events: readonly EventDTO[]): Written[] {
  const edits = events.filter((e) => e.event_type === "code_change" && e.file_paths.length === 1);
  const files = [...new Set(edits.flatMap((e) => e.file_paths))].filter(
    (f) => !f.startsWith("/") && !f.startsWith(".."),
  );
  // Outside git nothing can be checked for landing: no process spawned.
  if (files.length === 0 || !gitDirs(root)) return [];
  const ignored = new Set((runGit(root, ["check-ignore", "--", ...files.slice(0, 200)]) ?? "").split("\n"));
  return edits
    .filter((e) => files.includes(e.file_paths[0]!) && !ignored.has(e.file_paths[0]!))
    .map((e) => ({ path: e.file_paths[0]!, text: currentText(e.content_json) }));
}

/** The identifiers `content` cites that the episode's own edits wrote, with the file each went into. */
export function introducedNames(content: string, written: readonly Written[]): Array<{ name: string; path: string }> {
  if (written.length === 0) return [];
  const out: Array<{ name: string; path: string }> = [];
  for (const name of namedInContent(content, { prose: true })) {
    if (name.includes("/") || /\.[A-Za-z][A-Za-z0-9]{0,5}$/.test(name)) continue; // a path: branches tell
    const w = written.findLast((x) => wordRe(name).test(x.text));
    if (w) out.push({ name, path: w.path });
  }
  return out;
}

function isDecision(item: Pick<MemoryItem, "type" | "tags" | "key">): boolean {
  return item.type === "pitfall" || item.tags.includes("decision") || item.key.startsWith("decision:");
}

/** The fix or decision commit of an item: the episode's last commit touching its files (or the last one). */
function commitFor(root: string, item: MemoryItem, commits: readonly EpisodeCommit[]): string | null {
  if (!isDecision(item) || commits.length === 0) return null;
  const touching = commits.filter((c) => c.files.some((f) => item.file_paths.includes(f)));
  const pick = (touching.length > 0 ? touching : commits).at(-1)!;
  if (pick.sha.length === 40) return pick.sha;
  return runGit(root, ["rev-parse", "--verify", "--quiet", `${pick.sha}^{commit}`])?.trim() || null;
}

/** Anchor the project items `ids` that have none yet (own transaction; a failure is logged, never thrown). */
export function recordAnchors(
  db: Database,
  root: string,
  ids: readonly string[],
  events: readonly EventDTO[],
  source: string,
  nowMs: number,
): void {
  try {
    const commits = episodeCommits(events);
    let written: Written[] | null = null;
    const at = nowIso(nowMs);
    const rows: Array<[string, string]> = [];
    const have = anchorJsonOf(db, [...new Set(ids)]);
    for (const id of new Set(ids)) {
      // An item seen again (NOOP) keeps the anchor it was first recorded with.
      if (have.has(id)) continue;
      const item = getMemoryItem(db, id);
      if (item?.scope !== "project" || item.deleted) continue;
      rows.push([
        id,
        JSON.stringify(
          buildAnchor(
            root,
            {
              content: item.content,
              file_paths: item.file_paths,
              commit: commitFor(root, item, commits),
              introduced: introducedNames(item.content, (written ??= episodeWrites(root, events))),
            },
            source,
            at,
          ),
        ),
      ]);
    }
    db.transaction(() => {
      for (const [id, json] of rows) putAnchorJson(db, id, json, at);
    }).immediate();
  } catch (err) {
    log.warn(`could not record memory anchors: ${(err as Error).message}`);
  }
}
