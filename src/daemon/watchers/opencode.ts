/**
 * OpenCode: its live SQLite store (`opencode.db`, WAL mode, written by OpenCode). Read without ever
 * locking the writer: a read-only connection (it cannot write, so it never checkpoints the WAL), a
 * short busy timeout, and a cursor on `part.time_updated` (ms) so that each read only takes the
 * parts changed since the last one. A part not final yet (a tool still running, an answer still
 * streaming) holds the cursor back, so it is read again once it is; dedup absorbs the re-reads.
 * Changes are noticed by watching OpenCode's data folder for `opencode.db`/`-wal` writes, backed by
 * a size/mtime check in the periodic sweep (a stat, no query while idle).
 */
import { Database } from "bun:sqlite";
import { existsSync, type FSWatcher, statSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import type { NormalizedEvent } from "../../shared/event.ts";
import { opencodeDataDir } from "../../shared/paths.ts";
import { openCodePartEvents, type OpenCodeRow, partIsFinal } from "../normalize/opencode.ts";
import { asRecord } from "../normalize/types.ts";

export function opencodeDbPath(): string {
  return join(opencodeDataDir(), "opencode.db");
}

export interface OpenCodeRead {
  events: NormalizedEvent[];
  /** The next cursor (time_updated ms): every part up to it is final and read. */
  cursor: number;
  parts: number;
}

function parse(text: unknown): Record<string, unknown> {
  try {
    return asRecord(JSON.parse(String(text))) ?? {};
  } catch {
    return {};
  }
}

/**
 * Every part changed at or after `since` (ms), as events of its final parts. Throws on a store it
 * cannot read (locked past the busy timeout, corrupt, not OpenCode's): the caller says so and
 * retries later from the same cursor.
 */
export function readOpenCode(path: string, since: number): OpenCodeRead {
  const db = new Database(path, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 2000");
    const rows = db
      .query(
        `SELECT p.id AS part_id, p.session_id, p.time_created, p.time_updated, p.data AS part_data,
                m.data AS message_data, s.directory, s.parent_id
           FROM part p JOIN message m ON m.id = p.message_id JOIN session s ON s.id = p.session_id
          WHERE p.time_updated >= ?
          ORDER BY p.time_updated, p.id`,
      )
      .all(since) as Array<{
      part_id: string;
      session_id: string;
      time_created: number;
      time_updated: number;
      part_data: string;
      message_data: string;
      directory: string;
      parent_id: string | null;
    }>;
    const events: NormalizedEvent[] = [];
    let cursor = since;
    let held: number | null = null;
    for (const r of rows) {
      const row: OpenCodeRow = {
        partId: r.part_id,
        sessionId: r.session_id,
        directory: r.directory,
        parentId: r.parent_id,
        message: parse(r.message_data),
        part: parse(r.part_data),
        timeCreated: r.time_created,
      };
      if (!partIsFinal(row)) {
        held ??= r.time_updated;
        continue;
      }
      events.push(...openCodePartEvents(row));
      cursor = Math.max(cursor, r.time_updated);
    }
    return { events, cursor: held === null ? cursor : Math.min(cursor, held), parts: rows.length };
  } finally {
    db.close();
  }
}

/** Size and mtime of the db and its WAL: changes when OpenCode writes. */
export function opencodeStamp(path: string): string {
  const parts: string[] = [];
  for (const f of [path, `${path}-wal`]) {
    try {
      const st = statSync(f);
      parts.push(`${st.size}:${st.mtimeMs}`);
    } catch {
      parts.push("-");
    }
  }
  return parts.join("|");
}

/** Watches OpenCode's data folder; calls `onChange` after a short quiet period when the store is written. */
export class OpenCodeWatcher {
  private watcher: FSWatcher | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stamp = "";

  constructor(
    private readonly onChange: () => void,
    private readonly debounceMs = 50,
  ) {}

  /** Start (or retry) watching; false while the folder does not exist yet (the sweep retries). */
  start(): boolean {
    if (this.watcher) return true;
    const dir = dirname(opencodeDbPath());
    if (!existsSync(dir)) return false;
    try {
      this.watcher = watch(dir, { recursive: false }, (_e, name) => {
        if (name === null || String(name).startsWith("opencode.db")) this.schedule();
      });
      this.watcher.on("error", () => this.stopWatcher());
      return true;
    } catch {
      return false;
    }
  }

  /** The periodic check: a stat of the db and its WAL, a read only when they changed. */
  sweep(): void {
    if (!this.watcher) this.start();
    const s = opencodeStamp(opencodeDbPath());
    if (s !== this.stamp) this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.stamp = opencodeStamp(opencodeDbPath());
      this.onChange();
    }, this.debounceMs);
  }

  private stopWatcher(): void {
    try {
      this.watcher?.close();
    } catch {
      // already closed
    }
    this.watcher = null;
  }

  stop(): void {
    this.stopWatcher();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
