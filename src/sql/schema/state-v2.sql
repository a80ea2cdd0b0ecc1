-- state.db v2: a transcript line longer than the cap is skipped up to its next newline without being
-- buffered; `skipping` = 1 says the persisted offset is inside such a line (a restart goes on skipping).
ALTER TABLE file_offsets ADD COLUMN skipping INTEGER NOT NULL DEFAULT 0;
