-- data.db version 6 (episodes waiting for the model).
-- A closed episode whose LLM extraction failed for a passing reason (the provider down, signed out,
-- rate-limited, timed out) waits here instead of going to the offline rules; the engine tries it again
-- at next_try_at, and the offline rules take it only after llm.wait_max_hours or when the user says so
-- (`sqrl reprocess --offline-pending`). The row goes in the same transaction that marks the episode
-- extracted, so an episode is never extracted twice, whatever restarts in between.
CREATE TABLE llm_waits (
  episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
  reason TEXT NOT NULL,             -- 'unavailable' | 'signed_out' | 'rate_limited' | 'timeout'
  detail TEXT NOT NULL DEFAULT '',  -- the provider's short message of the last failure
  attempts INTEGER NOT NULL DEFAULT 1,
  first_failed_at TEXT NOT NULL,
  last_tried_at TEXT NOT NULL,
  next_try_at TEXT NOT NULL
);
CREATE INDEX idx_llm_waits_next ON llm_waits(next_try_at);
