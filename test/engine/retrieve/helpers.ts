import type { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MemoryType } from "../../../src/shared/api.ts";
import type { EventType } from "../../../src/shared/event.ts";
import { newId } from "../../../src/shared/ids.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { addEpisodeEvents, insertEpisode } from "../../../src/sql/episodes.ts";
import { insertEvents } from "../../../src/sql/events.ts";
import { insertMemoryItem, type MemoryItem } from "../../../src/sql/memory-items.ts";
import { openProjectDb } from "../../../src/sql/open.ts";

/** A project folder with its .ctx/data.db in a temp dir. */
export function tempProject(prefix = "sqrl-retrieval-"): { root: string; db: Database; cleanup: () => void } {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const root = join(base, "repo");
  mkdirSync(root, { recursive: true });
  const db = openProjectDb(root);
  return {
    root,
    db,
    cleanup: () => {
      db.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export interface ItemSpec {
  type: MemoryType;
  key: string;
  content: string;
  tags?: string[];
  importance?: number;
  file_paths?: string[];
  /** updated_at = now − age_days. */
  age_days?: number;
  user_id?: string | null;
  scope?: "user" | "project";
  id?: string;
  source_episode_id?: string | null;
  /** Who made it (default `manual`: written by a person, which machines leave alone). */
  extractor?: string;
}

const DAY = 86_400_000;

export function addItem(db: Database, root: string, spec: ItemSpec, nowMs: number): MemoryItem {
  const at = nowIso(nowMs - (spec.age_days ?? 1) * DAY);
  return insertMemoryItem(db, {
    id: spec.id ?? newId("mem", nowMs - (spec.age_days ?? 1) * DAY),
    project_id: root,
    user_id: spec.user_id ?? null,
    scope: spec.scope ?? "project",
    type: spec.type,
    key: spec.key,
    content: spec.content,
    tags: spec.tags ?? [],
    importance: spec.importance ?? 0.5,
    created_at: at,
    updated_at: at,
    source_episode_id: spec.source_episode_id ?? null,
    source_event_ids: [],
    confidence: 0.8,
    file_paths: spec.file_paths ?? [],
    evidence_episode_ids: spec.source_episode_id ? [spec.source_episode_id] : [],
    decision: "ADD_NEW",
    extractor: spec.extractor ?? "manual",
  });
}

export interface LabelledTask {
  task: string;
  files: string[];
  must: string[];
  nice: string[];
}

export interface LabelledSet {
  now: string;
  memories: ItemSpec[];
  related: LabelledTask[];
  unrelated: Array<{ task: string; files: string[] }>;
}

export const LABELLED_PATH = join(import.meta.dir, "..", "..", "fixtures", "retrieval", "labelled.json");

export function loadLabelled(): LabelledSet {
  return JSON.parse(readFileSync(LABELLED_PATH, "utf8")) as LabelledSet;
}

/** Insert the labelled memories; returns key → id. */
export function seedLabelled(db: Database, root: string, set: LabelledSet, nowMs: number): Map<string, string> {
  const ids = new Map<string, string>();
  db.transaction(() => {
    for (const m of set.memories) ids.set(m.key, addItem(db, root, m, nowMs).id);
  })();
  return ids;
}

// ---- episodes and events ------------------------------------------------------------------------

export interface EventSpec {
  type: EventType;
  content: Record<string, unknown>;
  /** Minutes after the episode start. */
  at: number;
  file_paths?: string[];
}

export interface EpisodeSpec {
  id: string;
  /** Episode start, days before now. */
  days_ago: number;
  summary: string;
  outcome?: string;
  file_paths?: string[];
  importance?: number;
  events: EventSpec[];
}

export function addEpisode(db: Database, root: string, spec: EpisodeSpec, nowMs: number): void {
  const start = nowMs - spec.days_ago * DAY;
  const events = spec.events.map((e, i) => ({
    id: `${spec.id}_ev${i}`,
    project_id: root,
    user_id: "alice",
    source_tool: "claude_code",
    session_id: `sess_${spec.id}`,
    timestamp: nowIso(start + e.at * 60_000),
    event_type: e.type,
    content_json: JSON.stringify(e.content),
    file_paths: e.file_paths ?? [],
    hash: `${spec.id}_h${i}`,
    processed_at: nowIso(nowMs),
  }));
  insertEvents(db, events);
  const end = events.at(-1)?.timestamp ?? nowIso(start);
  insertEpisode(db, {
    id: spec.id,
    project_id: root,
    user_id: "alice",
    session_id: `sess_${spec.id}`,
    start_ts: nowIso(start),
    end_ts: end,
    event_count: events.length,
    summary: spec.summary,
    importance: spec.importance ?? 0.5,
    created_at: end,
    status: "closed",
    closed_at: end,
    extracted_at: end,
    extractor: "offline",
    summary_source: "offline",
    outcome: spec.outcome ?? "",
    file_paths: spec.file_paths ?? [],
  });
  addEpisodeEvents(
    db,
    spec.id,
    events.map((e) => e.id),
  );
}
