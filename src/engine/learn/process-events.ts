/**
 * `POST /process_events` (reference §5.1): store the batch's events if missing, grow/close episodes,
 * summarize them, and extract memory from every episode that closed — once. Idempotent: events
 * already in an episode are skipped, extracted episodes are never extracted again, so the same batch
 * twice changes nothing. Every write is committed before this returns (the daemon marks the events
 * processed only after a 2xx).
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { ProcessEventsRequest, type ProcessEventsResponse } from "../../shared/api.ts";
import { processConfig } from "../../shared/config.ts";
import type { ConfigValues } from "../../shared/config-keys.ts";
import { ProjectNotRegisteredError, UsageError } from "../../shared/errors.ts";
import type { EventDTO } from "../../shared/event.ts";
import { describeZodError } from "../../shared/http-guard.ts";
import { log as rootLog } from "../../shared/log.ts";
import { projectPaths } from "../../shared/paths.ts";
import { isoToMs, nowIso } from "../../shared/time.ts";
import {
  closedUnextracted,
  episodeEvents,
  getEpisode,
  saveEpisode,
  writeEpisodeFts,
  type Episode,
} from "../../sql/episodes.ts";
import { insertEvents } from "../../sql/events.ts";
import { openProjectDb, openUserDb } from "../../sql/open.ts";
import { DEFAULT_EPISODE_CONFIG, extractableEpisodes, segmentEvents, type EpisodeConfig } from "./episodes.ts";
import type { Candidate } from "./extract/candidate.ts";
import { toEngineEvent, userMessages, type EngineEvent } from "../events/event-view.ts";
import { extractOffline, finishCandidates, ruleInput } from "./extract/index.ts";
import { dropRestated, retireCoveredHabits } from "./apply/consolidate.ts";
import { withoutWhatRepoSays } from "./apply/repo-says.ts";
import { guidanceDigest, repoGuidance } from "./repo-guidance.ts";
import { passGate } from "./apply/gate.ts";
import { extractWithLlm } from "./extract/llm-extractor.ts";
import { isFailure, worthTheModel } from "./extract/precheck.ts";
import { episodeImportance } from "./importance.ts";
import { decideWithLlm, type DecisionCase } from "./apply/decide.ts";
import { type Embedder, embedderFromConfig } from "../llm/embeddings.ts";
import { createProvider, type LlmCallError, type LlmProvider } from "../llm/provider.ts";
import { backfillEmbeddings } from "./embedding-backfill.ts";
import { StateDbLedger, type UsageLedger } from "../llm/usage.ts";
import { scheduleSummaries } from "./summary-scheduler.ts";
import { offlineDigest } from "./summarize.ts";
import {
  applyProjectDecision,
  projectAnchorItems,
  ruleDecision,
  type ApplyContext,
  type Decision,
  type ExistingItem,
} from "./apply/update.ts";
import { applyUserDecision, userAnchorItems } from "./apply/user-style-store.ts";
import { recordAnchors } from "./apply/record-anchors.ts";
import { consolidateSubjects } from "./apply/consolidate-subjects.ts";
import { gradeOutcomes } from "./outcomes.ts";
import { followMoves } from "./apply/follow-moves.ts";
import { followRenames } from "./apply/follow-renames.ts";
import { deleteLlmWait } from "../../sql/llm-waits.ts";
import {
  isPassing,
  keepWaiting,
  modelPresent,
  routeEpisode,
  waitPolicy,
  type ModelAway,
  type WaitPolicy,
} from "./model-wait.ts";

const log = rootLog.child({ service: "learn" });

/** The most the LLM prompt spends on what the repository's guidance covers. */
const GUIDANCE_DIGEST_TOKENS = 300;

export interface EngineDeps {
  config: ConfigValues;
  /** The LLM, or null for the offline extractor. Default: from config and the environment. */
  llm: LlmProvider | null;
  /** Daily token ledger (state.db). */
  ledger: UsageLedger;
  /** Clock (epoch ms). */
  now: () => number;
  /** The global user.db (user-scope style). */
  openUserDb: () => Database;
  episodes: EpisodeConfig;
  /** Read the repo's manifests when an episode is extracted (off in benchmarks of rules alone). */
  manifests: boolean;
  /** Most episodes summarized by the proactive scheduler per call. */
  summaryLimit: number;
  /** What recorded anchors say made them ('extract'; `sqrl reprocess` passes 'reprocess'). */
  anchorSource?: string;
  /** Embeddings stored after extraction, or null (`embeddings.provider = none`). Default: from config. */
  embedder: Embedder | null;
  /** How long episodes wait for the model when it is away (model-wait.ts). Default: from config. */
  wait: WaitPolicy;
  /** The passing failure this run met (fresh per request): the run's later episodes wait without a call. */
  away: ModelAway;
}

export async function resolveDeps(partial: Partial<EngineDeps>): Promise<EngineDeps> {
  const config = partial.config ?? processConfig().get();
  const now = partial.now ?? Date.now;
  return {
    config,
    now,
    llm: partial.llm !== undefined ? partial.llm : await createProvider(config),
    ledger: partial.ledger ?? new StateDbLedger(config["llm.daily_token_cap"], now),
    openUserDb: partial.openUserDb ?? (() => openUserDb()),
    episodes: partial.episodes ?? { ...DEFAULT_EPISODE_CONFIG, gapMs: config["engine.episode_gap_minutes"] * 60_000 },
    manifests: partial.manifests ?? true,
    summaryLimit: partial.summaryLimit ?? 5,
    embedder: partial.embedder !== undefined ? partial.embedder : (embedderFromConfig(config) ?? null),
    wait: partial.wait ?? waitPolicy(config),
    away: partial.away ?? modelPresent(),
    ...(partial.anchorSource ? { anchorSource: partial.anchorSource } : {}),
  };
}

/** One processing run per project at a time (extraction awaits the LLM between transactions). */
const locks = new Map<string, Promise<unknown>>();

export async function withProjectLock<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(projectId) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(fn);
  locks.set(projectId, run);
  try {
    return await run;
  } finally {
    if (locks.get(projectId) === run) locks.delete(projectId);
  }
}

export async function processEvents(
  req: ProcessEventsRequest,
  deps: Partial<EngineDeps> = {},
): Promise<ProcessEventsResponse> {
  const parsed = ProcessEventsRequest.safeParse(req);
  if (!parsed.success)
    throw new UsageError(`Invalid process_events request: ${describeZodError(parsed.error)}`, "bad_request");
  const body = parsed.data;
  const wrong = body.events.find((e) => e.project_id !== body.project_id);
  if (wrong)
    throw new UsageError(
      `Event ${wrong.id} belongs to ${wrong.project_id}, not ${body.project_id}: send one project per batch.`,
      "bad_request",
    );
  if (!existsSync(projectPaths.db(body.project_id))) throw new ProjectNotRegisteredError(body.project_id);
  const d = await resolveDeps(deps);
  return withProjectLock(body.project_id, async () => {
    const db = openProjectDb(body.project_id);
    try {
      return await run(db, body, d);
    } finally {
      db.close();
    }
  });
}

function storedIds(db: Database, ids: readonly string[]): Set<string> {
  const rows = db
    .query(`SELECT id FROM events WHERE id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as Array<{ id: string }>;
  return new Set(rows.map((r) => r.id));
}

/** Offline summary, outcome, paths and importance of an episode from its current events. */
function refreshEpisode(db: Database, ep: Episode): void {
  const events = episodeEvents(db, ep.id).map(toEngineEvent);
  const digest = offlineDigest(events);
  ep.summary = digest.summary;
  ep.outcome = digest.outcome;
  ep.file_paths = digest.file_paths;
  ep.summary_source = "offline";
  ep.importance = episodeImportance(events);
  saveEpisode(db, ep);
  writeEpisodeFts(db, ep.id, ep.summary, ep.file_paths);
}

async function run(db: Database, body: ProcessEventsRequest, d: EngineDeps): Promise<ProcessEventsResponse> {
  const nowMs = d.now();
  let eventEpisode = new Map<string, string>();
  db.transaction(() => {
    insertEvents(db, body.events); // a savepoint inside this transaction
    const present = storedIds(
      db,
      body.events.map((e) => e.id),
    );
    const seg = segmentEvents(
      db,
      body.project_id,
      body.events.filter((e) => present.has(e.id)),
      d.episodes,
      nowMs,
    );
    eventEpisode = seg.eventEpisode;
    for (const id of seg.touched) {
      const ep = getEpisode(db, id);
      if (ep) refreshEpisode(db, ep);
    }
  }).immediate();

  const ready = extractableEpisodes(db, body.project_id, d.episodes, closedUnextracted(db, body.project_id));
  const memoryIds: string[] = [];
  let manifests = d.manifests;
  const extracted: Episode[] = [];
  for (const ep of ready) {
    const ids = await extractEpisode(db, body.project_id, body.user_id, ep, d, manifests);
    if (ids === null) continue; // waits for the model
    memoryIds.push(...ids);
    extracted.push(ep);
    manifests = false;
  }
  // One subject, one memory: what the new episodes stored meets older items on the same subject under other keys.
  // The model while it answers; the offline rules when it is away.
  if (extracted.length > 0)
    await consolidateSubjects(
      db,
      body.project_id,
      memoryIds,
      extracted.map((e) => e.id),
      { llm: d.away.failure ? null : d.llm, ledger: d.ledger, nowMs },
    );
  if (d.embedder) await backfillEmbeddings(db, body.project_id, d.embedder, memoryIds);
  // What happened next grades what was stored: failing recipes flagged, unused memories decayed.
  if (extracted.length > 0)
    gradeOutcomes(
      db,
      body.project_id,
      nowMs,
      d.config["memory.decay_days"],
      extracted.map((e) => e.id),
    );
  // A path the later sessions stopped using, for one edit away from it: the memory follows the new name.
  if (extracted.length > 0)
    followRenames(
      db,
      body.project_id,
      extracted.map((e) => e.id),
      nowMs,
    );
  // Code moved since the last batch (HEAD changed): moved memories get a version with today's names.
  followMoves(db, body.project_id, nowMs);
  if (d.summaryLimit > 0 && d.llm && !d.away.failure) {
    await scheduleSummaries({
      db,
      projectId: body.project_id,
      // An agent CLI spends the user's plan: its episodes get their summary from the extraction call,
      // the others keep the offline digest rather than one more run each.
      llm: d.llm.name === "claude_code" || d.llm.name === "codex" ? null : d.llm,
      ledger: d.ledger,
      contextWindowTokens: d.config["llm.context_window_tokens"],
      limit: d.summaryLimit,
    });
  }
  const episodeIds = [
    ...new Set([
      ...body.events.map((e) => eventEpisode.get(e.id)).filter((x): x is string => x !== undefined),
      ...extracted.map((e) => e.id),
    ]),
  ];
  return { episode_ids: episodeIds, memory_item_ids: [...new Set(memoryIds)] };
}

interface Extraction {
  candidates: Candidate[];
  extractor: "offline" | "llm";
  summary: string | null;
}

/** The episode must wait for the model: its call failed for a passing reason (model-wait.ts). */
class WaitForModel extends Error {
  constructor(readonly failure: LlmCallError) {
    super(failure.message);
  }
}

/** Events that prove a model's pitfall within its episode: failures, and the user's words after the opening request. */
function proofEvents(events: readonly EngineEvent[]): Set<string> {
  const out = new Set(events.filter(isFailure).map((e) => e.id));
  for (const m of userMessages(events).slice(1)) out.add(m.ev.id);
  return out;
}

async function extractCandidates(
  projectId: string,
  ep: Episode,
  events: readonly EngineEvent[],
  d: EngineDeps,
  llm: LlmProvider | null,
  manifests: boolean,
  dtos: readonly EventDTO[],
): Promise<Extraction> {
  const input = ruleInput(ep.id, projectId, dtos);
  if (llm) {
    try {
      const digest = guidanceDigest(repoGuidance(projectId), GUIDANCE_DIGEST_TOKENS);
      const out = await extractWithLlm(llm, d.ledger, ep.id, events, d.config["llm.context_window_tokens"], digest);
      const offline = extractOffline(input, { manifests });
      const manifestFacts = offline.filter((c) => c.rule === "project-manifests" || c.rule === "repo-hooks");
      // The LLM's candidates pass the same gates as the rules', and everything is distilled (capped,
      // portable paths). A model's pitfall stands on its own when the rules call a pitfall of this episode
      // lasting, or when its cited evidence holds the proof: an event that failed (a failed command or
      // test, a tool error, a refused call) or the user stepping in after the episode's opening request
      // (a correction, what they saw themselves). Otherwise it waits for a second episode under the same
      // key. The old gate (every model pitfall waited unless the rules found a lasting one) held back, on
      // the packmind train sessions and the holdout (blind stand-in answers, session 8), lessons a
      // reviewer's audit kept: "the pre-commit hook lints the whole working tree", "the Linear MCP
      // create_document takes only a project"; a model seldom repeats a key exactly, so they never came back.
      const lasting = offline.some((c) => c.type === "pitfall" && !c.gate);
      const proof = proofEvents(events);
      const gated = out.candidates.map((c) =>
        c.type === "pitfall" && !lasting && !c.source_event_ids.some((id) => proof.has(id))
          ? { ...c, gate: { kind: "pitfall" as const, signature: `llm:${c.key}` } }
          : c,
      );
      return {
        candidates: finishCandidates([...gated, ...manifestFacts], [projectId]),
        extractor: "llm",
        summary: out.summary,
      };
    } catch (err) {
      // The model is away for now (down, signed out, rate-limited, timed out): the episode waits for it.
      if (isPassing(err, d.wait)) throw new WaitForModel(err);
      log.info(`LLM extraction of ${ep.id} fell back to offline rules: ${(err as Error).message}`);
    }
  }
  return { candidates: extractOffline(input, { manifests }), extractor: "offline", summary: null };
}

async function decide(cases: Array<DecisionCase & { index: number }>, d: EngineDeps): Promise<Map<number, Decision>> {
  const decisions = new Map<number, Decision>();
  const contested = cases.filter((c) => c.existing.length > 0);
  if (d.llm && contested.length > 0) {
    try {
      const byLlm = await decideWithLlm(d.llm, d.ledger, contested);
      for (const [i, dec] of byLlm) decisions.set(contested[i]!.index, dec);
    } catch (err) {
      log.info(`LLM update decisions fell back to rules: ${(err as Error).message}`);
    }
  }
  for (const c of cases) if (!decisions.has(c.index)) decisions.set(c.index, ruleDecision(c.candidate, c.existing));
  return decisions;
}

/**
 * Extract one closed episode and apply the updates; marks it extracted (and ends its wait for the
 * model) in the same transaction. Null when the episode waits for the model instead (model-wait.ts).
 */
export async function extractEpisode(
  db: Database,
  projectId: string,
  userId: string,
  ep: Episode,
  d: EngineDeps,
  manifests: boolean,
): Promise<string[] | null> {
  const dtos = episodeEvents(db, ep.id);
  const events = dtos.map(toEngineEvent);
  // An episode with nothing the model would learn from (extract/precheck.ts) is the rules' alone.
  const forModel = d.llm !== null && (!d.config["llm.precheck"] || worthTheModel(events));
  const route = routeEpisode(db, ep.id, forModel, d.wait, d.away, d.now());
  if (route === "wait") {
    if (d.away.failure) keepWaiting(db, ep.id, d.away.failure, d.wait, d.away, d.now());
    return null;
  }
  let extracted: Extraction;
  try {
    extracted = await extractCandidates(projectId, ep, events, d, route === "llm" ? d.llm : null, manifests, dtos);
  } catch (err) {
    if (!(err instanceof WaitForModel)) throw err;
    keepWaiting(db, ep.id, err.failure, d.wait, d.away, d.now());
    log.info(`episode ${ep.id} waits for the model (${err.failure.kind}): ${err.failure.message}`);
    return null;
  }
  // Another process (a user's `sqrl reprocess --offline-pending`) may have taken it meanwhile.
  if (getEpisode(db, ep.id)?.extracted_at) return [];
  // What one episode cannot prove lasting waits for a second one (apply/gate.ts).
  const observedAt = ep.end_ts || nowIso(d.now());
  const gated = db
    .transaction(() =>
      extracted.candidates.map((c) => passGate(db, projectId, c, observedAt)).filter((c): c is Candidate => c !== null),
    )
    .immediate();
  const ex = { ...extracted, candidates: withoutWhatRepoSays(projectId, dropRestated(db, projectId, gated)) };
  const userDb = ex.candidates.some((c) => c.scope === "user") ? d.openUserDb() : null;
  try {
    const cases = ex.candidates.map((candidate, index) => ({
      index,
      candidate,
      existing: (candidate.scope === "user"
        ? userAnchorItems(userDb!, userId, candidate.key)
        : projectAnchorItems(db, projectId, candidate)) as ExistingItem[],
    }));
    const decisions = await decide(cases, d);
    // A memory dates from when the episode showed it, not from when it was processed: a backfilled
    // preference stated weeks ago is not "just now", and recency ranks it as what it is.
    const observedMs = isoToMs(ep.end_ts) || d.now();
    // Learned now, though: decay for disuse counts from when sqrl stored it, not from the evidence's age.
    const ctx: ApplyContext = {
      projectId,
      extractor: ex.extractor,
      nowMs: Math.min(d.now(), observedMs),
      learnedMs: d.now(),
    };
    // Facts read from the repo's manifests (go.mod, package.json) were seen now, whatever the episode's age.
    const readNow: ApplyContext = { ...ctx, nowMs: d.now() };
    const ctxOf = (c: Candidate) => (c.rule === "project-manifests" ? readNow : ctx);
    const ids: string[] = [];
    if (userDb) {
      userDb
        .transaction(() => {
          for (const c of cases)
            if (c.candidate.scope === "user")
              ids.push(applyUserDecision(userDb, userId, c.candidate, decisions.get(c.index)!, ctx));
        })
        .immediate();
    }
    db.transaction(() => {
      const cur = getEpisode(db, ep.id);
      if (!cur || cur.extracted_at) return; // gone, or extracted by another process meanwhile: never twice
      for (const c of cases)
        if (c.candidate.scope === "project")
          ids.push(applyProjectDecision(db, c.candidate, decisions.get(c.index)!, ctxOf(c.candidate)));
      retireCoveredHabits(db, projectId, ep.id, nowIso(ctx.nowMs));
      deleteLlmWait(db, ep.id);
      cur.extracted_at = nowIso(ctx.nowMs);
      cur.extractor = ex.extractor;
      if (ex.summary) {
        cur.summary = ex.summary;
        cur.summary_source = "llm";
        writeEpisodeFts(db, cur.id, cur.summary, cur.file_paths);
      }
      saveEpisode(db, cur);
    }).immediate();
    // What each stored item cites, as the repository shows it now (user-scope ids are not in data.db).
    recordAnchors(db, projectId, ids, dtos, d.anchorSource ?? "extract", d.now());
    return ids;
  } finally {
    userDb?.close();
  }
}
