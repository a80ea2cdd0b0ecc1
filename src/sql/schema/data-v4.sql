-- data.db version 4.
-- Marks a person put on a memory from `sqrl ui` (or the engine API):
--   'pin'   — always eligible for task context, importance fixed at `importance` (the extractor leaves it alone);
--   'wrong' — forgotten with `reason` kept; `evidence_*` copy what the memory was made from, so the
--             extractor does not make it again from the same evidence (same anchor, same episode or events).
CREATE TABLE memory_marks (
  memory_id TEXT NOT NULL REFERENCES memory_items(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,                         -- 'pin' | 'wrong'
  at TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  importance REAL,                            -- pin: the fixed importance
  type TEXT NOT NULL,                         -- wrong: the anchor the extractor is held to
  key TEXT NOT NULL,
  evidence_episode_ids TEXT NOT NULL DEFAULT '[]',
  evidence_event_ids TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (memory_id, kind)
) WITHOUT ROWID;
CREATE INDEX idx_memory_marks_anchor ON memory_marks(kind, type, key);
