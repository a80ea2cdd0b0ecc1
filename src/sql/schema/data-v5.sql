-- data.db version 5 (memory anchors).
-- What each memory cites in the repository, as the repository confirmed it when recorded: files,
-- identifiers with the line and a fingerprint of the lines around them, package scripts, and the fix
-- or decision commit (src/engine/anchors/anchor.ts holds the JSON's shape). Memories are checked
-- against today's code with it before they are served. Items without a row are anchored in memory
-- on first serve; `sqrl reprocess` and `sqrl doctor` store them.
CREATE TABLE memory_anchors (
  memory_id TEXT PRIMARY KEY REFERENCES memory_items(id) ON DELETE CASCADE,
  anchor_json TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);

-- What happened to a memory after it was stored (outcome grading and decay): a recipe whose commands
-- kept failing, a pitfall whose error came back after its fix, a memory that went unused so long that
-- its importance decayed. Never deletes anything; `sqrl status` counts them, `sqrl show` says why.
CREATE TABLE memory_outcomes (
  memory_id TEXT PRIMARY KEY REFERENCES memory_items(id) ON DELETE CASCADE,
  flag TEXT,                        -- 'recipe_failing' | 'fix_insufficient' | NULL
  flag_reason TEXT,
  flagged_at TEXT,
  decay_steps INTEGER NOT NULL DEFAULT 0,
  decayed_at TEXT                   -- when importance last decayed for disuse
);
