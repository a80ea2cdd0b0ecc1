/** The batcher: sends each project's unprocessed events to the engine in batches (by size, interval and the episode gap), oldest first, and marks them processed after a 2xx. */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { ProcessEventsResponse, type ProcessEventsRequest } from "../shared/api.ts";
import { processConfig } from "../shared/config.ts";
import type { EventDTO } from "../shared/event.ts";
import { log as rootLog } from "../shared/log.ts";
import type { RuntimeInfo } from "../shared/runtime-files.ts";
import { nowIso } from "../shared/time.ts";
import { countEvents, markProcessed, unprocessedEvents } from "../sql/events.ts";
import { openProjectDb } from "../sql/open.ts";
import { llmWaitDue } from "../sql/llm-waits.ts";
import { projectPaths } from "../shared/paths.ts";
import { missingProjectNote } from "../shared/projects.ts";

const log = rootLog.child({ service: "batcher" });

export interface BatchSettings {
  intervalMs: number;
  minEvents: number;
  maxEvents: number;
  /**
   * Quiet time after the last batch before an empty batch is sent so the engine closes the
   * project's finished episodes (gap passed) and extracts them without waiting for new activity.
   */
  closeAfterMs: number;
  /** user_id of that empty batch (config `user_id`). */
  userId: string;
}

export interface BatcherOptions {
  /** The healthy engine, or undefined while it is down. */
  engine: () => RuntimeInfo | undefined;
  /** Registered project roots. */
  projects: () => readonly string[];
  /** Settings; default: read from config.toml on every tick (so `sqrl config set` applies live). */
  settings?: () => BatchSettings;
  /** Timeout of one `POST /process_events` (LLM extraction can be slow). */
  requestTimeoutMs?: number;
}

export interface ProjectQueueStatus {
  project_id: string;
  events: number;
  queue_depth: number;
  last_batch_at: string | null;
  last_error: string | null;
}

interface ProjectState {
  /** Events reported by capture since the last drain (decides the early trigger). */
  pending: number;
  lastBatchAt: string | null;
  lastError: string | null;
  failures: number;
  /** No retry before this time (ms epoch) after a failure. */
  retryAt: number;
  /** When events were last sent (ms epoch; 0 = not since start). */
  lastSentMs: number;
  /** Episodes may still be open in the engine: an empty batch is due once the project is quiet. */
  closeDue: boolean;
}

const RETRY_BASE_MS = 1_000;

export function settingsFromConfig(): BatchSettings {
  const cfg = processConfig().get();
  return {
    intervalMs: cfg["daemon.batch_interval_seconds"] * 1000,
    minEvents: cfg["daemon.batch_min_events"],
    maxEvents: cfg["daemon.batch_max_events"],
    closeAfterMs: (cfg["engine.episode_gap_minutes"] + 1) * 60_000,
    userId: cfg.user_id,
  };
}

class BatchFailure extends Error {
  override readonly name = "BatchFailure";
}

/**
 * Reference §4.2.5: every `batch_interval_seconds`, or as soon as `batch_min_events` unsent events
 * wait, send up to `batch_max_events` oldest unprocessed events per project to the engine's
 * `POST /process_events`. Events are marked processed only after a 2xx (the engine commits before
 * answering); a failure keeps them and retries with exponential backoff. One batch is in flight at a
 * time, so no event is ever sent twice concurrently.
 */
export class Batcher {
  private readonly opts: BatcherOptions;
  private readonly state = new Map<string, ProjectState>();
  private readonly dbs = new Map<string, Database>();
  private settings: BatchSettings;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopping = false;
  private inflight: AbortController | undefined;

  constructor(opts: BatcherOptions) {
    this.opts = opts;
    this.settings = this.readSettings(undefined);
  }

  private readSettings(previous: BatchSettings | undefined): BatchSettings {
    try {
      return (this.opts.settings ?? settingsFromConfig)();
    } catch (err) {
      if (!previous) throw err;
      log.warn(`batcher keeps its previous settings: ${(err as Error).message}`);
      return previous;
    }
  }

  start(): void {
    this.trigger();
  }

  /** Capture committed `added` events to a project: send early once enough wait. */
  notify(projectId: string, added: number): void {
    const st = this.stateOf(projectId);
    st.pending += added;
    if (st.pending >= this.settings.minEvents && Date.now() >= st.retryAt) this.trigger();
  }

  /** The engine (re)started: send whatever waits, backoff or not. */
  engineReady(): void {
    for (const st of this.state.values()) st.retryAt = 0;
    this.trigger();
  }

  /** The engine went away: abort the batch in flight (its events stay unprocessed). */
  engineDown(): void {
    this.inflight?.abort(new BatchFailure("the engine went down during the batch"));
  }

  /** Run a flush now (or right after the running one). */
  trigger(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.flushAll();
        } while (this.again && !this.stopping);
      } finally {
        this.running = undefined;
        this.schedule();
      }
    })();
    return this.running;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopping) return;
    const now = Date.now();
    let delay = this.settings.intervalMs;
    for (const st of this.state.values()) if (st.retryAt > now) delay = Math.min(delay, st.retryAt - now);
    this.timer = setTimeout(() => void this.trigger(), Math.max(10, delay));
  }

  private async flushAll(): Promise<void> {
    this.settings = this.readSettings(this.settings);
    const projects = this.opts.projects();
    this.closeRemoved(projects);
    for (const project of projects) {
      if (this.stopping) return;
      const st = this.stateOf(project);
      if (Date.now() < st.retryAt) continue;
      if (!this.opts.engine()) return; // nothing can be sent; engineReady() triggers again
      try {
        await this.flushProject(project, st);
      } catch (err) {
        this.projectFailed(project, st, err);
      }
    }
  }

  /**
   * One project's database failed (corrupt, unreadable): it alone is backed off and marked in
   * `status()` with what to do; the projects after it go on.
   */
  private projectFailed(project: string, st: ProjectState, err: unknown): void {
    st.failures++;
    const delay = Math.min(Math.max(this.settings.intervalMs, RETRY_BASE_MS), RETRY_BASE_MS * 2 ** (st.failures - 1));
    st.retryAt = Date.now() + delay;
    const message = (err as Error).message;
    st.lastError = `${nowIso()}: ${project} (${projectPaths.db(project)}): ${message}. Run \`sqrl doctor ${project}\` to check the file.`;
    // a broken connection may keep failing: open the file afresh next time
    this.dbs.get(project)?.close();
    this.dbs.delete(project);
    if (st.failures === 1 || st.failures % 10 === 0)
      log.error(
        `memory processing of ${project} failed: ${projectPaths.db(project)}: ${message}; other projects go on. Run \`sqrl doctor ${project}\`.`,
      );
  }

  private async flushProject(project: string, st: ProjectState): Promise<void> {
    const db = this.dbOf(project, st);
    if (!db) return;
    while (!this.stopping) {
      const engine = this.opts.engine();
      if (!engine) return;
      const events = unprocessedEvents(db, project, this.settings.maxEvents);
      if (events.length === 0) {
        st.pending = 0;
        await this.closeQuietEpisodes(engine, project, st);
        await this.retryWaitingEpisodes(engine, db, project);
        return;
      }
      try {
        for (const group of groupByUser(events)) {
          await this.send(engine, { project_id: project, user_id: group.userId, events: group.events });
          markProcessed(
            db,
            group.events.map((e) => e.id),
            nowIso(),
          );
        }
      } catch (err) {
        st.failures++;
        const delay = Math.min(this.settings.intervalMs, RETRY_BASE_MS * 2 ** (st.failures - 1));
        st.retryAt = Date.now() + delay;
        st.lastError = `${nowIso()}: ${(err as Error).message}`;
        log.warn(
          `batch of ${events.length} events for ${project} failed (${(err as Error).message}); kept them, retrying in ${delay} ms`,
        );
        return;
      }
      st.lastBatchAt = nowIso();
      st.lastSentMs = Date.now();
      st.closeDue = true;
      st.lastError = null;
      st.failures = 0;
      st.retryAt = 0;
      log.debug(`sent ${events.length} events of ${project} to the engine`);
      if (events.length < this.settings.maxEvents) {
        st.pending = 0;
        return;
      }
      await Bun.sleep(0); // let the server answer requests between batches of a long backlog
    }
  }

  /**
   * Once a project has been quiet for longer than the episode gap, send one empty batch: the engine
   * closes the episodes whose gap has passed and extracts them (at start-up this also closes what a
   * previous run left open). A failure just leaves it due for the next tick.
   */
  private async closeQuietEpisodes(engine: RuntimeInfo, project: string, st: ProjectState): Promise<void> {
    if (!st.closeDue || Date.now() - st.lastSentMs < this.settings.closeAfterMs) return;
    try {
      await this.send(engine, { project_id: project, user_id: this.settings.userId, events: [] });
      st.closeDue = false;
      log.debug(`asked the engine to close quiet episodes of ${project}`);
    } catch (err) {
      log.warn(`closing quiet episodes of ${project} failed (${(err as Error).message}); will retry`);
    }
  }

  /**
   * Episodes that wait for the model (its call failed for a passing reason) and whose retry is due:
   * an empty batch lets the engine try them again. A failure leaves them due for the next tick.
   */
  private async retryWaitingEpisodes(engine: RuntimeInfo, db: Database, project: string): Promise<void> {
    if (!llmWaitDue(db, nowIso())) return;
    try {
      await this.send(engine, { project_id: project, user_id: this.settings.userId, events: [] });
      log.debug(`asked the engine to retry the episodes of ${project} that wait for the model`);
    } catch (err) {
      log.warn(`retrying the episodes of ${project} that wait for the model failed (${(err as Error).message})`);
    }
  }

  private async send(engine: RuntimeInfo, body: ProcessEventsRequest): Promise<void> {
    const controller = new AbortController();
    this.inflight = controller;
    const timeout = this.opts.requestTimeoutMs ?? 600_000;
    try {
      let res: Response;
      try {
        res = await fetch(`http://127.0.0.1:${engine.port}/process_events`, {
          method: "POST",
          headers: { authorization: `Bearer ${engine.token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.any([controller.signal, AbortSignal.timeout(timeout)]),
        });
      } catch (err) {
        const reason = controller.signal.aborted ? controller.signal.reason : err;
        throw new BatchFailure(`engine unreachable: ${(reason as Error)?.message ?? String(reason)}`);
      }
      const text = await res.text();
      if (!res.ok) throw new BatchFailure(`engine answered ${res.status}: ${text.slice(0, 300)}`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (!ProcessEventsResponse.safeParse(parsed).success)
        log.warn(`engine's /process_events answer is not a ProcessEventsResponse: ${text.slice(0, 200)}`);
    } finally {
      if (this.inflight === controller) this.inflight = undefined;
    }
  }

  private stateOf(project: string): ProjectState {
    let st = this.state.get(project);
    if (!st) {
      st = { pending: 0, lastBatchAt: null, lastError: null, failures: 0, retryAt: 0, lastSentMs: 0, closeDue: true };
      this.state.set(project, st);
    }
    return st;
  }

  private dbOf(project: string, st: ProjectState): Database | undefined {
    const open = this.dbs.get(project);
    if (open) return open;
    if (!existsSync(project)) {
      st.lastError = missingProjectNote(project);
      return undefined;
    }
    try {
      const db = openProjectDb(project);
      this.dbs.set(project, db);
      return db;
    } catch (err) {
      st.lastError = (err as Error).message;
      log.warn(`cannot open ${project}/.ctx/data.db: ${(err as Error).message}`);
      return undefined;
    }
  }

  private closeRemoved(projects: readonly string[]): void {
    for (const [p, db] of this.dbs) {
      if (!projects.includes(p)) {
        db.close();
        this.dbs.delete(p);
        this.state.delete(p);
      }
    }
  }

  /** Queue depth and batch history of every registered project. */
  status(): ProjectQueueStatus[] {
    return this.opts.projects().map((project) => {
      const st = this.stateOf(project);
      const db = this.dbOf(project, st);
      let counts = { total: 0, unprocessed: 0 };
      try {
        if (db) counts = countEvents(db, project);
      } catch (err) {
        st.lastError ??= `${nowIso()}: ${project} (${projectPaths.db(project)}): ${(err as Error).message}. Run \`sqrl doctor ${project}\` to check the file.`;
      }
      return {
        project_id: project,
        events: counts.total,
        queue_depth: counts.unprocessed,
        last_batch_at: st.lastBatchAt,
        last_error: st.lastError,
        ...(existsSync(project) ? {} : { missing: true }),
      };
    });
  }

  /** Stop: let the batch in flight finish (up to `graceMs`, then abort it), close the databases. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const running = this.running;
    if (running) {
      const finished = await Promise.race([running.then(() => true), Bun.sleep(graceMs).then(() => false)]);
      if (!finished) {
        this.inflight?.abort(new BatchFailure("the daemon is shutting down"));
        await running.catch(() => undefined);
      }
    }
    for (const db of this.dbs.values()) db.close();
    this.dbs.clear();
  }
}

function groupByUser(events: readonly EventDTO[]): Array<{ userId: string; events: EventDTO[] }> {
  const groups = new Map<string, EventDTO[]>();
  for (const e of events) {
    const list = groups.get(e.user_id);
    if (list) list.push(e);
    else groups.set(e.user_id, [e]);
  }
  return [...groups].map(([userId, list]) => ({ userId, events: list }));
}
