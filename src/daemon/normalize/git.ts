/**
 * git history → `git_commit` events. The watcher runs
 * `git log --format=<GIT_LOG_FORMAT> --numstat --no-renames --relative` and hands the output here.
 */
import type { NormalizedEvent } from "../../shared/event.ts";
import { isoOr } from "./types.ts";

/** Record separator before each commit, unit separator between fields; the numstat lines follow. */
export const GIT_LOG_FORMAT = "%x1e%H%x1f%P%x1f%an <%ae>%x1f%aI%x1f%B%x1f";

export interface GitCommit {
  hash: string;
  parents: string[];
  author: string;
  date: string;
  message: string;
  files: string[];
  insertions: number;
  deletions: number;
}

/** Parse `git log` output in GIT_LOG_FORMAT with `--numstat`. Commits come out in the log's order. */
export function parseGitLog(output: string): GitCommit[] {
  const commits: GitCommit[] = [];
  for (const chunk of output.split("\u001e")) {
    if (!chunk.trim()) continue;
    const fields = chunk.split("\u001f");
    if (fields.length < 6) continue;
    const [hash, parents, author, date, message, numstat] = fields as [string, string, string, string, string, string];
    const files: string[] = [];
    let insertions = 0;
    let deletions = 0;
    for (const line of numstat.split("\n")) {
      const m = /^(\d+|-)\t(\d+|-)\t(.+)$/.exec(line);
      if (!m) continue;
      if (m[1] !== "-") insertions += Number(m[1]);
      if (m[2] !== "-") deletions += Number(m[2]);
      files.push(m[3]!);
    }
    commits.push({
      hash: hash.trim(),
      parents: parents.trim() ? parents.trim().split(" ") : [],
      author,
      date,
      message: message.trim(),
      files,
      insertions,
      deletions,
    });
  }
  return commits;
}

export function commitEvent(c: GitCommit, root: string): NormalizedEvent {
  return {
    source_tool: "git",
    session_id: null,
    timestamp: isoOr(c.date, new Date(0).toISOString()),
    event_type: "git_commit",
    content: {
      text: c.message,
      commit: {
        hash: c.hash,
        author: c.author,
        message: c.message,
        files: c.files,
        insertions: c.insertions,
        deletions: c.deletions,
      },
      record_id: c.hash,
      raw: { hash: c.hash, parents: c.parents, author: c.author, date: c.date },
    },
    file_paths: c.files,
    cwd: root,
  };
}
