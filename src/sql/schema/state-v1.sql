-- ~/.sqrl/state.db, version 1: machine-wide capture state.

-- Per-file read offsets: a restart resumes where it stopped; a shrunk or replaced file restarts at 0.
CREATE TABLE file_offsets (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL,            -- 'claude_code' | 'codex' | 'gemini_cli'
  offset INTEGER NOT NULL,         -- bytes consumed (complete lines only)
  size INTEGER NOT NULL,           -- file size when last read
  ino INTEGER,                     -- inode when last read (replacement detection)
  head_hash TEXT,                  -- hash of the first bytes (replacement detection)
  malformed INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);

-- Last git commit ingested per repo.
CREATE TABLE git_cursors (
  project_id TEXT PRIMARY KEY,
  last_commit TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- LLM tokens spent per UTC day (the daily cap and `sqrl status`).
CREATE TABLE llm_usage (
  day TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, provider, model)
);
