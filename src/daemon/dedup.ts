/**
 * The reference's dedup struct (architecture §3.1) plus the record's own id:
 * `{project_id, source_tool, event_type, session_id, timestamp_bucket, file_paths, content_signature, record_id}`.
 * `hash = sha256(JSON(struct))`; one row per (project_id, hash).
 */
import type { EventContent, EventType } from "../shared/event.ts";

export interface CanonicalStruct {
  project_id: string;
  source_tool: string;
  event_type: EventType;
  session_id: string | null;
  /** Timestamp rounded down to 5 minutes (ISO). */
  timestamp_bucket: string;
  /** Sorted repo-relative paths. */
  file_paths: string[];
  /** sha256 of the lightly normalized content (fields trimmed; the raw record left out). */
  content_signature: string;
  /** The source record's own id (Claude `uuid`, message id, call id, commit hash…), or null. */
  record_id: string | null;
}

const BUCKET_MS = 5 * 60 * 1000;

let lastIso = "";
let lastBucket = "";

export function timestampBucket(iso: string): string {
  if (iso === lastIso) return lastBucket; // consecutive events mostly share their timestamp
  const ms = Date.parse(iso);
  const bucket = Number.isFinite(ms) ? new Date(Math.floor(ms / BUCKET_MS) * BUCKET_MS).toISOString() : iso;
  lastIso = iso;
  lastBucket = bucket;
  return bucket;
}

/**
 * Content without the raw layer, each field trimmed, reduced to a sha256 (the struct stays small;
 * two contents are equal exactly when their signatures are).
 */
export function contentSignature(content: EventContent): string {
  let text = "";
  const keys = Object.keys(content).sort();
  for (const k of keys) {
    if (k === "raw") continue;
    const v = (content as Record<string, unknown>)[k];
    if (v === undefined) continue;
    text += `${k}=${typeof v === "string" ? v.trim() : (JSON.stringify(v) ?? "")}\u001f`;
  }
  return sha256Hex(text);
}

/**
 * A Claude Code response is written block by block: the same message id may come back longer (a
 * block written after a pause). It is one event whatever its length: its identity is its record id,
 * and a longer version replaces the stored one (sql/events.ts).
 */
export function growsInPlace(e: { source_tool: string; event_type: EventType; content: EventContent }): boolean {
  return (
    e.event_type === "assistant_response" &&
    e.source_tool === "claude_code" &&
    typeof e.content.record_id === "string" &&
    e.content.record_id.length > 0
  );
}

export function canonicalStruct(e: {
  project_id: string;
  source_tool: string;
  event_type: EventType;
  session_id: string | null;
  timestamp: string;
  file_paths: readonly string[];
  content: EventContent;
}): CanonicalStruct {
  return {
    project_id: e.project_id,
    source_tool: e.source_tool,
    event_type: e.event_type,
    session_id: e.session_id,
    timestamp_bucket: timestampBucket(e.timestamp),
    file_paths: [...e.file_paths].sort(),
    content_signature: growsInPlace(e) ? `grows:${e.content.record_id}` : contentSignature(e.content),
    record_id: e.content.record_id ?? null,
  };
}

export function hashStruct(s: CanonicalStruct): string {
  return sha256Hex(JSON.stringify(s));
}

/** sha256 of a string's UTF-8 bytes, as hex (the one-shot hasher: no hasher object per call). */
function sha256Hex(text: string): string {
  return Bun.SHA256.hash(text, "hex");
}

/** The event id is derived from the hash, so the same event always gets the same id. */
export function eventIdFromHash(hash: string): string {
  return `evt_${hash.slice(0, 32)}`;
}
