/**
 * Observations (data-v3.sql): what one episode showed that is not a memory on its own yet. The
 * extractor records one per (kind, signature, episode) and promotes it when the same signature shows
 * up in another episode. Never served.
 */
import type { Database } from "bun:sqlite";

/**
 * `name_change`: a later episode used a path one edit away from one a memory cites; `name_use`: it
 * used the cited path itself (apply/follow-renames.ts). `recipe_run`: whether a recipe's commands
 * passed in an episode; `failure_seen`: a failure with a pitfall's key (outcomes.ts).
 */
export type ObservationKind =
  | "pitfall"
  | "recipe"
  | "lint_rule"
  | "name_change"
  | "name_use"
  | "recipe_run"
  | "failure_seen";

export interface Observation {
  episode_id: string;
  observed_at: string;
  candidate_json: string;
}

/** Record (or refresh) one episode's observation of `signature`. */
export function recordObservation(
  db: Database,
  projectId: string,
  kind: ObservationKind,
  signature: string,
  episodeId: string,
  observedAt: string,
  candidateJson: string,
): void {
  db.query(
    `INSERT INTO observations (project_id, kind, signature, episode_id, observed_at, candidate_json) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, kind, signature, episode_id) DO UPDATE SET observed_at = excluded.observed_at, candidate_json = excluded.candidate_json`,
  ).run(projectId, kind, signature, episodeId, observedAt, candidateJson);
}

/** Every episode's observation of `signature`, oldest first. */
export function observationsOf(
  db: Database,
  projectId: string,
  kind: ObservationKind,
  signature: string,
): Observation[] {
  return db
    .query(
      `SELECT episode_id, observed_at, candidate_json FROM observations WHERE project_id = ? AND kind = ? AND signature = ? ORDER BY observed_at, episode_id`,
    )
    .all(projectId, kind, signature) as Observation[];
}

/** Forget a project's observations (before `sqrl reprocess` rebuilds them). */
export function clearObservations(db: Database, projectId: string): void {
  db.query(`DELETE FROM observations WHERE project_id = ?`).run(projectId);
}
