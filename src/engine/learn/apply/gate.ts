/**
 * The recurrence gate. A candidate that one episode cannot prove lasting (a failure fixed at once,
 * a check sequence that passed once, one violation of a lint rule) carries a `gate`: it is recorded
 * as an observation, and becomes a memory only when a second episode shows the same signature. The
 * promoted memory carries the evidence of every episode that showed it (its count) and importance
 * that grows with recurrence. Call inside a write transaction.
 */
import type { Database } from "bun:sqlite";
import { observationsOf, recordObservation } from "../../../sql/observations.ts";
import type { Candidate } from "../extract/candidate.ts";

export function passGate(db: Database, projectId: string, c: Candidate, observedAt: string): Candidate | null {
  if (!c.gate) return c;
  const { gate, ...plain } = c;
  recordObservation(db, projectId, gate.kind, gate.signature, c.source_episode_id, observedAt, JSON.stringify(plain));
  const seen = observationsOf(db, projectId, gate.kind, gate.signature);
  const episodes = [...new Set(seen.map((o) => o.episode_id))];
  if (episodes.length < 2) return null;
  const earlier = seen
    .filter((o) => o.episode_id !== c.source_episode_id)
    .map((o) => JSON.parse(o.candidate_json) as Candidate);
  return {
    ...plain,
    importance: Math.min(1, plain.importance + 0.05 * (episodes.length - 1)),
    confidence: Math.min(1, plain.confidence + 0.05),
    tags: [...new Set([...plain.tags, "recurring"])],
    source_event_ids: [
      ...new Set([...earlier.flatMap((e) => e.source_event_ids.slice(0, 3)), ...plain.source_event_ids]),
    ].slice(-40),
    file_paths: [...new Set([...plain.file_paths, ...earlier.flatMap((e) => e.file_paths)])].slice(0, 12),
    evidence_episodes: episodes.filter((e) => e !== c.source_episode_id),
  };
}
