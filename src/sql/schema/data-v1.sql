-- <repo>/.ctx/data.db, version 1.
-- The four reference tables (events, episodes, memory_items, view_meta) are column for column the
-- architecture's §3; everything sqrl adds lives in side tables so the reference shape stays exact.

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  source_tool TEXT NOT NULL,
  session_id TEXT,
  timestamp TEXT NOT NULL,
  event_type TEXT NOT NULL,
  content_json TEXT NOT NULL,
  file_paths TEXT NOT NULL,
  hash TEXT NOT NULL,
  processed_at TEXT NULL
);
CREATE INDEX idx_events_project_time ON events(project_id, timestamp);
CREATE INDEX idx_events_processed   ON events(project_id, processed_at);
CREATE INDEX idx_events_session     ON events(project_id, session_id);
-- Dedup rule: one row per (project_id, hash).
CREATE UNIQUE INDEX idx_events_project_hash ON events(project_id, hash);

CREATE TABLE episodes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT,
  start_ts TEXT NOT NULL,
  end_ts TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  summary TEXT NOT NULL,
  importance REAL NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_episodes_project_time ON episodes(project_id, start_ts);

CREATE TABLE memory_items (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  user_id TEXT,
  scope TEXT NOT NULL,
  type TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  tags TEXT NOT NULL,
  importance REAL NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  source_episode_id TEXT,
  source_event_ids TEXT NOT NULL,
  embedding BLOB,
  graph_neighbors TEXT,
  deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_mem_project_type ON memory_items(project_id, type);
CREATE INDEX idx_mem_key          ON memory_items(project_id, key);
CREATE INDEX idx_mem_updated      ON memory_items(project_id, updated_at);

CREATE TABLE view_meta (
  view_name TEXT PRIMARY KEY,
  last_generated TEXT NOT NULL,
  events_count_at_gen INTEGER NOT NULL,
  ttl_seconds INTEGER NOT NULL
);

-- ---- sqrl additions ---------------------------------------------------------------------------

-- Which events make up an episode, and the episode's life cycle (open episodes grow; closed ones are extracted once).
CREATE TABLE episode_events (
  episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES events(id),
  PRIMARY KEY (episode_id, event_id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX idx_episode_events_event ON episode_events(event_id);

CREATE TABLE episode_state (
  episode_id TEXT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
  status TEXT NOT NULL DEFAULT 'open',          -- 'open' | 'closed'
  closed_at TEXT,
  extracted_at TEXT,                            -- set once extraction committed
  extractor TEXT,                               -- 'offline' | 'llm'
  summary_source TEXT NOT NULL DEFAULT 'none',  -- 'none' | 'offline' | 'llm'
  outcome TEXT NOT NULL DEFAULT '',             -- e.g. 'tests green', 'error unresolved', 'committed'
  file_paths TEXT NOT NULL DEFAULT '[]'         -- JSON array of repo-relative paths touched
);
CREATE INDEX idx_episode_state_status ON episode_state(status);

-- Evidence, confidence and lineage of memory items: supersede never destroys a row.
CREATE TABLE memory_meta (
  memory_id TEXT PRIMARY KEY REFERENCES memory_items(id) ON DELETE CASCADE,
  confidence REAL NOT NULL DEFAULT 0.5,
  file_paths TEXT NOT NULL DEFAULT '[]',
  evidence_episode_ids TEXT NOT NULL DEFAULT '[]',
  valid_from TEXT NOT NULL,
  valid_to TEXT,                                -- set when superseded or forgotten
  superseded_by TEXT REFERENCES memory_items(id),
  superseded_by_episode TEXT,
  decision TEXT NOT NULL DEFAULT 'ADD_NEW',     -- the update verb that created this row
  extractor TEXT NOT NULL DEFAULT 'offline'     -- 'offline' | 'llm' | 'manual' | 'import'
);
CREATE INDEX idx_memory_meta_superseded ON memory_meta(superseded_by);

-- Full-text index over memory items and episode summaries. `body` holds code-aware expanded
-- tokens (snake_case, camelCase, paths and dotted names split) so porter stemming applies to parts.
CREATE VIRTUAL TABLE memory_fts USING fts5(memory_id UNINDEXED, body, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE episode_fts USING fts5(episode_id UNINDEXED, body, tokenize = 'porter unicode61');

-- Every MCP tool call, for `sqrl log`.
CREATE TABLE tool_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts TEXT NOT NULL,
  tool TEXT NOT NULL,
  args_json TEXT NOT NULL,
  memory_ids TEXT NOT NULL DEFAULT '[]',
  token_estimate INTEGER,
  latency_ms REAL NOT NULL,
  error TEXT
);
CREATE INDEX idx_tool_calls_ts ON tool_calls(ts);
CREATE INDEX idx_tool_calls_tool ON tool_calls(tool, ts);
