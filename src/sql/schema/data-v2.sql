-- data.db version 2.
-- 1. memory_fts rows share the rowid of their memory_items row, so updates find them by rowid
--    (memory_id is UNINDEXED; a lookup by it scanned the whole index on every write).
CREATE TEMP TABLE _memory_fts_v1 AS
  SELECT m.rowid AS rid, f.memory_id AS memory_id, f.body AS body
  FROM memory_fts f JOIN memory_items m ON m.id = f.memory_id AND m.deleted = 0;
DELETE FROM memory_fts;
INSERT INTO memory_fts (rowid, memory_id, body) SELECT rid, memory_id, body FROM _memory_fts_v1;
DROP TABLE _memory_fts_v1;

-- 2. Team memory: what `sqrl sync` has exchanged through .ctx/shared/ (content-addressed files).
CREATE TABLE shared_sync (
  hash TEXT PRIMARY KEY,            -- sha256 of the shared item's (type, key, content)
  direction TEXT NOT NULL,          -- 'export' (written here) | 'import' (merged from a teammate's file)
  memory_id TEXT,                   -- the local item it produced or came from
  path TEXT NOT NULL,               -- repo-relative path of the file under .ctx/shared/
  at TEXT NOT NULL
);
