/**
 * When sqrl last took in each source's records for a project (the overview's "Last capture per
 * source"): events carry their own dates — a backfilled transcript from last year is dated last year —
 * so the capture time comes from the capture state: a transcript source by the last read of the
 * session files whose sessions belong to the project (state.db `file_offsets`, matched by the session
 * id in the file's name), git by the time its cursor last moved (`git_cursors`). Null when unknown
 * (events brought by `sqrl import`, files read before this was kept, or no state.db). Read-only.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { homePaths } from "../../shared/paths.ts";
import { openDatabase } from "../../sql/open.ts";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
/** Gemini names a chat file after the first 8 hex digits of its session id. */
const GEMINI_SHORT = /session-.*-([0-9a-f]{8})\.jsonl?$/i;

function later(a: string | undefined, b: string): string {
  return a === undefined || b > a ? b : a;
}

/** source_tool → ISO time of the last capture for `projectId`, from this machine's state.db (read-only). */
export function captureTimes(db: Database, projectId: string): Map<string, string> {
  if (!existsSync(homePaths.stateDb())) return new Map();
  let state: Database | undefined;
  try {
    state = openDatabase(homePaths.stateDb(), "state", { readonly: true });
    return captureTimesFrom(db, projectId, state);
  } catch {
    return new Map(); // an unreadable state.db: the times are unknown, the overview still answers
  } finally {
    state?.close();
  }
}

function captureTimesFrom(db: Database, projectId: string, state: Database): Map<string, string> {
  const out = new Map<string, string>();
  const bySession = new Map<string, string>();
  for (const r of db
    .query(`SELECT DISTINCT source_tool, session_id FROM events WHERE session_id IS NOT NULL AND source_tool != 'git'`)
    .all() as Array<{ source_tool: string; session_id: string }>) {
    const id = r.session_id.toLowerCase();
    bySession.set(id, r.source_tool);
    if (r.source_tool === "gemini_cli") bySession.set(id.slice(0, 8), r.source_tool);
  }
  if (bySession.size > 0) {
    for (const f of state.query(`SELECT path, updated_at FROM file_offsets`).all() as Array<{
      path: string;
      updated_at: string;
    }>) {
      const name = f.path.slice(f.path.lastIndexOf("/") + 1);
      // Copilot CLI keeps a session's events in a folder named after it: the id may be in the path.
      const id = (UUID.exec(name)?.[0] ?? GEMINI_SHORT.exec(name)?.[1] ?? UUID.exec(f.path)?.[0])?.toLowerCase();
      const source = id ? bySession.get(id) : undefined;
      if (source) out.set(source, later(out.get(source), f.updated_at));
    }
  }
  const git = state.query(`SELECT updated_at FROM git_cursors WHERE project_id = ?`).get(projectId) as {
    updated_at: string;
  } | null;
  if (git) out.set("git", git.updated_at);
  return out;
}
