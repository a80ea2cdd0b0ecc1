-- data.db version 3.
-- Observations: what an episode showed that is not yet worth a memory on its own (a failure fixed
-- quickly, a check sequence that passed once, one violation of a lint rule). The extractor stores
-- them here and promotes one to a memory when it recurs in another episode — the gate that keeps
-- routine, one-off events out of memory (a routine compile error fixed by the next edit stays in its
-- episode). Never served; `sqrl reprocess` clears and rebuilds them.
CREATE TABLE observations (
  project_id TEXT NOT NULL,
  kind TEXT NOT NULL,               -- 'pitfall' | 'recipe' | 'lint_rule'
  signature TEXT NOT NULL,          -- what makes two observations the same (error signature, check set, rule name)
  episode_id TEXT NOT NULL,
  observed_at TEXT NOT NULL,        -- when the episode showed it (its end)
  candidate_json TEXT NOT NULL,     -- the memory it would make, as extracted from this episode
  PRIMARY KEY (project_id, kind, signature, episode_id)
);
CREATE INDEX idx_observations_sig ON observations(project_id, kind, signature);
