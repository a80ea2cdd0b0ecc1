-- ~/.sqrl/user.db, version 1. user_style_items is the reference §3.4 table, column for column.
CREATE TABLE user_style_items (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  tags TEXT NOT NULL,
  importance REAL NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  source TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_user_style_key ON user_style_items(user_id, key);

-- Evidence of each current global style item (which projects/episodes/events showed it).
CREATE TABLE user_style_meta (
  item_id TEXT PRIMARY KEY REFERENCES user_style_items(id) ON DELETE CASCADE,
  confidence REAL NOT NULL DEFAULT 0.5,
  evidence TEXT NOT NULL DEFAULT '[]'   -- JSON [{project_id, episode_id, event_ids}]
);

-- Superseded versions of global style items (the unique (user_id, key) index keeps one current row).
CREATE TABLE user_style_history (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  tags TEXT NOT NULL,
  importance REAL NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  source TEXT NOT NULL,
  valid_to TEXT NOT NULL,
  superseded_by TEXT NOT NULL,
  superseded_by_episode TEXT,
  decision TEXT NOT NULL
);
CREATE INDEX idx_user_style_history_key ON user_style_history(user_id, key);
