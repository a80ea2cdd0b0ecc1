/**
 * Proactive summarization: closed episodes without a summary get one, and — with an LLM configured —
 * offline summaries are upgraded to LLM ones, in order of the biggest token savings (raw events
 * minus summary). Only `episodes`, `episode_state` and `episode_fts` are written; raw events are
 * read, never changed or deleted.
 */
import type { Database } from "bun:sqlite";
import { z } from "zod";
import { log as rootLog } from "../../shared/log.ts";
import {
  episodeEvents,
  episodesForSummary,
  saveEpisode,
  getEpisode,
  setEpisodeSummary,
  writeEpisodeFts,
} from "../../sql/episodes.ts";
import { toEngineEvent } from "../events/event-view.ts";
import { renderEpisode } from "./extract/episode-render.ts";
import { callForJson } from "../llm/json-call.ts";
import type { LlmProvider } from "../llm/provider.ts";
import type { UsageLedger } from "../llm/usage.ts";
import { offlineDigest, SUMMARY_MAX_TOKENS } from "./summarize.ts";
import { estimateTokens } from "../../shared/tokens.ts";

const log = rootLog.child({ service: "learn" });

export interface SchedulerOptions {
  db: Database;
  projectId: string;
  llm: LlmProvider | null;
  ledger: UsageLedger | null;
  contextWindowTokens: number;
  /** Most episodes handled in one run. */
  limit: number;
}

export interface SchedulerResult {
  offline: string[];
  llm: string[];
}

const SUMMARY_SYSTEM = `Summarize one episode of a developer's coding session for later recall, in 80-150 tokens: the goal, what changed (files), which commands/tests ran and how they ended, the outcome. Return ONLY JSON: {"summary": string}.`;
const SummaryOutput = z.object({ summary: z.string().min(20).max(2000) });
const SUMMARY_JSON_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["summary"],
  properties: { summary: { type: "string" } },
};

async function llmSummary(o: SchedulerOptions, episodeId: string): Promise<string> {
  const events = episodeEvents(o.db, episodeId).map(toEngineEvent);
  const r = renderEpisode(events, Math.max(500, o.contextWindowTokens - 600));
  const out = await callForJson(
    o.llm!,
    o.ledger!,
    {
      system: SUMMARY_SYSTEM,
      prompt: `${r.text}\n\nReturn the JSON object now.`,
      maxTokens: 400,
      jsonSchema: SUMMARY_JSON_SCHEMA,
    },
    SummaryOutput,
  );
  let s = out.summary.trim();
  while (estimateTokens(s) > SUMMARY_MAX_TOKENS && s.length > 40)
    s = s.slice(0, Math.floor(s.length * 0.9)).replace(/\s+\S*$/, "…");
  return s;
}

function offlineSummary(db: Database, episodeId: string): void {
  const ep = getEpisode(db, episodeId);
  if (!ep) return;
  const digest = offlineDigest(episodeEvents(db, episodeId).map(toEngineEvent));
  ep.summary = digest.summary;
  ep.outcome = digest.outcome;
  ep.file_paths = digest.file_paths;
  ep.summary_source = "offline";
  db.transaction(() => {
    saveEpisode(db, ep);
    writeEpisodeFts(db, ep.id, ep.summary, ep.file_paths);
  }).immediate();
}

export async function scheduleSummaries(o: SchedulerOptions): Promise<SchedulerResult> {
  const result: SchedulerResult = { offline: [], llm: [] };
  const useLlm = o.llm !== null && o.ledger !== null;
  const queue = episodesForSummary(o.db, o.projectId, useLlm ? ["none", "offline"] : ["none"], o.limit);
  let llmOk = useLlm;
  for (const ep of queue) {
    if (llmOk) {
      try {
        const summary = await llmSummary(o, ep.id);
        o.db.transaction(() => setEpisodeSummary(o.db, ep.id, summary, "llm")).immediate();
        result.llm.push(ep.id);
        continue;
      } catch (err) {
        log.info(`LLM summary stopped (${(err as Error).message}); continuing offline.`);
        llmOk = false;
      }
    }
    if (ep.summary_source === "none") {
      offlineSummary(o.db, ep.id);
      result.offline.push(ep.id);
    }
  }
  return result;
}
