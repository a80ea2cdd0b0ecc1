/**
 * One-shot reading of whole transcript files (backfill, `sqrl ingest <files>`, the rescan after a new
 * project registration). Reads from byte 0 with a fresh normalizer, flushes at the end, ingests in
 * big batches; never touches the daemon's persisted offsets — dedup makes re-reading free of effect.
 */
import { existsSync, openSync, readSync, closeSync } from "node:fs";
import { basename } from "node:path";
import type { NormalizedEvent } from "../shared/event.ts";
import { emptyIngestResult, ingestNormalized, lookupStoredToolUse, mergeIngestResult, type IngestContext, type IngestResult } from "./ingest.ts";
import { newTailFile, readTail, type TailSource } from "./tail.ts";
import { claudeSource } from "./watchers/claude.ts";
import { codexSource } from "./watchers/codex.ts";
import { geminiSource } from "./watchers/gemini.ts";
import type { NormalizerDeps, TranscriptSource } from "./watchers/transcript-source.ts";

export const TRANSCRIPT_SOURCES: Record<TailSource, TranscriptSource> = { claude: claudeSource, codex: codexSource, gemini: geminiSource };

/** Events are inserted once this many are waiting (one transaction per project per batch). */
export const INGEST_BATCH = 5000;

export interface FileIngestResult extends IngestResult {
  path: string;
  source: TailSource;
  lines: number;
  malformed: number;
  events: number;
}

export function normalizerDeps(ctx: IngestContext): NormalizerDeps {
  return { lookupToolUse: (cwd, session, id) => lookupStoredToolUse(ctx, cwd, session, id), projects: () => ctx.projects };
}

/** Guess the format of a file given explicitly: Codex (`session_meta` / `{type, payload}`), Gemini (JSON document or metadata+`$set` JSONL), else Claude Code. */
export function sniffSource(path: string): { source: TailSource; document: boolean } {
  if (!existsSync(path)) return { source: "claude", document: false };
  const fd = openSync(path, "r");
  const buf = Buffer.alloc(64 * 1024);
  const n = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  const head = buf.toString("utf8", 0, n);
  const firstLine = head.split("\n", 1)[0] ?? "";
  let first: Record<string, unknown> | undefined;
  try {
    first = JSON.parse(firstLine) as Record<string, unknown>;
  } catch {
    first = undefined;
  }
  if (!first) {
    // Not a line of JSON: a pretty-printed document (Gemini's rewritten format).
    if (/^\s*\{/.test(head) && /"messages"\s*:/.test(head)) return { source: "gemini", document: true };
    return { source: basename(path).startsWith("rollout-") ? "codex" : "claude", document: false };
  }
  if (Array.isArray(first.messages) && typeof first.sessionId === "string") return { source: "gemini", document: true };
  if (first.type === "session_meta" || ("payload" in first && typeof first.type === "string" && "timestamp" in first)) return { source: "codex", document: false };
  if (typeof first.sessionId === "string" && "projectHash" in first && !("type" in first)) return { source: "gemini", document: false };
  return { source: "claude", document: false };
}

/** Read one file from the start and ingest all of it. */
export async function ingestFileOnce(path: string, source: TailSource, document: boolean, ctx: IngestContext): Promise<FileIngestResult> {
  const src = TRANSCRIPT_SOURCES[source];
  const deps = normalizerDeps(ctx);
  const renew = () => src.createNormalizer(path, deps);
  const file = newTailFile(path, source, document, renew());
  const result: FileIngestResult = { ...emptyIngestResult(), path, source, lines: 0, malformed: 0, events: 0 };
  const ingest = (events: NormalizedEvent[]) => {
    result.events += events.length;
    for (let i = 0; i < events.length; i += INGEST_BATCH) mergeIngestResult(result, ingestNormalized(events.slice(i, i + INGEST_BATCH), ctx));
  };
  const read = readTail(file, { final: true, renew, sink: ingest });
  result.lines = read.lines;
  result.malformed = read.malformed;
  await Bun.sleep(0); // let a daemon's API breathe between files
  return result;
}
