-- data.db version 7.
-- When sqrl learned each memory on this machine (stored it, or a person wrote it). created_at and
-- updated_at date a memory by its evidence — a backfilled transcript from last year makes a memory
-- "from last year" — so decay for disuse counts from this instead: history imported today is not
-- already unused for 90 days. Rows stored before this version count as learned now.
ALTER TABLE memory_meta ADD COLUMN learned_at TEXT;
UPDATE memory_meta SET learned_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
