/**
 * Queries of state.db `git_cursors`: the last commit ingested per repository.
 */
import type { Database } from "bun:sqlite";

/** Last commit ingested per repo (state.db `git_cursors`). */
export function getGitCursor(db: Database, projectId: string): string | undefined {
  const row = db.query(`SELECT last_commit FROM git_cursors WHERE project_id = ?`).get(projectId) as {
    last_commit: string;
  } | null;
  return row?.last_commit;
}

export function setGitCursor(db: Database, projectId: string, lastCommit: string, at: string): void {
  db.query(
    `INSERT INTO git_cursors (project_id, last_commit, updated_at) VALUES (?, ?, ?)
     ON CONFLICT(project_id) DO UPDATE SET last_commit = excluded.last_commit, updated_at = excluded.updated_at`,
  ).run(projectId, lastCommit, at);
}

export function deleteGitCursor(db: Database, projectId: string): void {
  db.query(`DELETE FROM git_cursors WHERE project_id = ?`).run(projectId);
}
