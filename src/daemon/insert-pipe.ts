/**
 * The insert pipe: a big file's rows are built in this thread (parse, normalize, redact, hash,
 * serialize — JavaScript whose JIT is warm here) while ONE insert worker (insert-worker.ts) writes
 * the previous rows to SQLite on its own connections. On two cores the two halves overlap: an ingest
 * takes about as long as building the rows, instead of building plus inserting (issue 30).
 *
 * Rows cross as flat arrays of strings (insert-worker-protocol.ts), one project's ~1,000 rows per
 * message and transaction. The reader hands over batch by batch and looks at the worker's answers
 * between slices of the file (`room`): at most MAX_IN_FLIGHT messages are unanswered, so memory stays
 * bounded when the disk is slower than the rows.
 *
 * Whether the worker is used is decided once the file has been read for DECIDE_AFTER_MS (the rows
 * built meanwhile wait here): with another core about free, the rows go to the worker; on a busy
 * machine (where the extra thread only adds its own cost) they are inserted in this thread, as
 * without the pipe. Every path inserts the same rows, in the same order, with the same counts:
 * - a failed insert (full disk…) stops the file's inserts at that batch and throws the same
 *   `ProjectWriteError` the in-thread path throws;
 * - a worker that dies part way: every message it had not answered is inserted here (dedup absorbs
 *   what it had committed without answering), and the rest of the file goes on in this thread.
 *
 * The worker is started on first use, kept while files keep coming, stopped after a few idle seconds,
 * and never keeps the process alive on its own.
 */
import { availableParallelism } from "node:os";
import { sqrlEnv } from "../shared/env.ts";
import { log as rootLog } from "../shared/log.ts";
import { packEvents } from "../sql/events.ts";
import type { RowBatch } from "./file-rows.ts";
import {
  emptyIngestResult,
  insertPacked,
  mergeIngestResult,
  mergeUnmatched,
  ProjectWriteError,
  type IngestContext,
  type IngestResult,
} from "./ingest.ts";
import {
  readRowsHeader,
  ROWS_HEADER,
  rowsHeader,
  type InsertWorkerReply,
  type InsertWorkerRequest,
} from "./insert-worker-protocol.ts";
import { cpuSample, othersBusyBetween, type CpuSample } from "./machine-load.ts";

const log = rootLog.child({ service: "capture" });

/** Files from this size on go through the pipe (below it, starting and ending it costs more than it saves). */
export const PIPE_MIN_BYTES = 4 * 1024 * 1024;
/** Rows per message (one transaction each): small, so little is left to insert once the last row is built. */
export const PIPE_BATCH_ROWS = 1000;
/** The file is read this much at a time; the worker's answers are looked at in between. */
export const PIPE_SLICE_BYTES = 4 * 1024 * 1024;
/** Messages sent and not yet answered, at most, before the reader waits (~2 MiB each). */
const MAX_IN_FLIGHT = 8;
/** The machine's load is looked at over the first this-many ms of the file. */
const DECIDE_AFTER_MS = 100;
/** Cores the other processes keep busy, at most, for the worker to be used. */
const OTHERS_BUSY_LIMIT = 0.5;
const IDLE_STOP_MS = 5000;

type Mode = "undecided" | "worker" | "thread";

let worker: Worker | null = null;
/** The worker cannot be started in this process (a build without its entry point): stop trying. */
let unavailable = false;
let current: InsertPipe | null = null;
let nextJob = 1;
let idleTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * Whether big files may go through the pipe here: two cores or more, the worker available, no other
 * file in it. `SQRL_INSERT_WORKER` = 0 turns it off, 1 uses it whatever the load; so does
 * `SQRL_INGEST_WORKERS` = 0 (everything in one thread).
 */
export function insertPipeAllowed(): "auto" | "forced" | false {
  if (unavailable || current) return false;
  const env = insertWorkerEnv();
  if (env === false || sqrlEnv("SQRL_INGEST_WORKERS") === "0") return false;
  if (env === true) return "forced";
  return availableParallelism() >= 2 ? "auto" : false;
}

/** `SQRL_INSERT_WORKER`: true (1) forces the worker on for every line file, false (0) off; undefined: auto. */
export function insertWorkerEnv(): boolean | undefined {
  const env = sqrlEnv("SQRL_INSERT_WORKER");
  return env === "1" ? true : env === "0" ? false : undefined;
}

/** Stop the worker now (tests, shutdown). A file in the pipe goes on in this thread. */
export function stopInsertWorker(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  const w = worker;
  worker = null;
  w?.terminate();
  current?.workerGone();
}

/** Messages the worker has answered in the file in the pipe (tests). */
export function insertPipeAnswered(): number {
  return current?.answered ?? 0;
}

/**
 * The worker's entry point: beside this file when run from source; in the compiled binary (where
 * every module reports the binary's own URL) an entry point of scripts/build.ts, kept under its path
 * below src/.
 */
function workerEntry(): string {
  const here = import.meta.url;
  if (here.endsWith("/insert-pipe.ts")) return new URL("./insert-worker.ts", here).href;
  return new URL("./daemon/insert-worker.js", here).href;
}

function startWorker(): Worker | null {
  if (worker) return worker;
  let w: Worker;
  try {
    w = new Worker(workerEntry());
  } catch (err) {
    unavailable = true;
    log.debug(`insert worker unavailable, inserting in-thread: ${(err as Error).message}`);
    return null;
  }
  let answered = false;
  const gone = () => {
    if (worker !== w) return;
    worker = null;
    w.terminate(); // after an error it may still run: never leave it behind
    current?.workerGone();
  };
  w.onmessage = (event: MessageEvent<InsertWorkerReply>) => {
    answered = true;
    current?.onReply(event.data);
  };
  w.onerror = (event: ErrorEvent) => {
    if (!answered) unavailable = true; // it could not even load
    log.debug(`insert worker failed, inserting in-thread: ${event.message}`);
    gone();
  };
  w.addEventListener("close", gone);
  worker = w;
  return w;
}

function scheduleIdleStop(): void {
  worker?.unref(); // idle: never what keeps the process alive
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(stopInsertWorker, IDLE_STOP_MS);
  idleTimer.unref?.();
}

/**
 * One file's rows on their way to SQLite. `post` each batch as it is built, `await room()` between
 * slices of the file, `await finish()` at its end (also after a failure: it settles what was sent).
 */
export class InsertPipe {
  readonly job = nextJob++;
  /** Messages answered by the worker. */
  answered = 0;
  /** Rows went to the worker (from the decision on). */
  usedWorker = false;
  private mode: Mode;
  private readonly started: CpuSample;
  /** Undecided: the messages held here; worker: the messages sent and not answered, in order. */
  private queue: Array<(string | null)[]> = [];
  private batch = 0;
  private readonly result: IngestResult = emptyIngestResult();
  private readonly failures: Array<{ root: string; error: Error }> = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  private workerDied = false;

  /** Null when the pipe cannot be used (see `insertPipeAllowed`). */
  static open(ctx: IngestContext, path: string, forced: boolean): InsertPipe | null {
    const allowed = insertPipeAllowed();
    if (!allowed || !startWorker()) return null;
    return new InsertPipe(ctx, path, forced || allowed === "forced");
  }

  private constructor(
    private readonly ctx: IngestContext,
    private readonly path: string,
    forced: boolean,
  ) {
    current = this;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    worker?.ref(); // a file in flight keeps the process alive until its rows are in
    this.started = cpuSample();
    this.mode = forced ? "worker" : "undecided";
    this.usedWorker = forced;
    if (forced) log.debug(`insert worker: ${path}`);
  }

  /** Hand on one batch of rows (a failed in-thread insert throws `ProjectWriteError`, as without the pipe). */
  post(batch: RowBatch): void {
    this.result.skipped += batch.skipped;
    if (batch.unmatched) mergeUnmatched((this.result.unmatched ??= {}), batch.unmatched);
    if (batch.byProject.length === 0) return;
    const n = this.batch++;
    const messages: Array<(string | null)[]> = [];
    for (const [root, rows] of batch.byProject) {
      try {
        this.ctx.pool.get(root); // created and migrated here, before the worker opens it
      } catch {
        // the worker fails to open it too, and says so like the in-thread insert would
      }
      messages.push(packEvents(rows, rowsHeader(this.job, n, root, this.ctx.userId)));
    }
    if (this.mode === "thread") this.insertHere(messages);
    else if (this.mode === "undecided") for (const m of messages) this.queue.push(m);
    else for (const m of messages) this.send(m);
  }

  /** Between slices: decide, take the worker's answers, wait while too much is in flight. */
  async room(): Promise<void> {
    if (this.mode === "undecided" && performance.now() - this.started.at >= DECIDE_AFTER_MS) this.decide(false);
    if (this.mode !== "worker") return;
    this.throwIfFailed();
    while (this.waiting() && this.queue.length >= MAX_IN_FLIGHT) await this.nextAnswer();
    if (this.workerDied) this.takeOver();
    this.throwIfFailed();
  }

  /** The file is read: every row committed (or the failure thrown), the worker's connections closed. */
  async finish(): Promise<IngestResult> {
    const built = performance.now();
    await this.settle();
    if (this.usedWorker)
      log.debug(
        `insert worker: ${this.path}: rows built in ${Math.round(built - this.started.at)} ms, the last ones in ${Math.round(performance.now() - built)} ms later`,
      );
    this.throwIfFailed();
    return this.result;
  }

  /**
   * Wait for every message sent, close the worker's connections, free the pipe. Throws only the
   * unexpected (a failed insert is kept for `finish`). Returns what is committed so far.
   */
  async settle(): Promise<IngestResult> {
    if (current !== this) return this.result;
    try {
      if (this.mode === "undecided") this.decide(true);
      while (this.waiting() && this.queue.length > 0) await this.nextAnswer();
      if (this.workerDied) this.takeOver();
      if (this.mode === "worker" && this.post_({ kind: "end", job: this.job }))
        while (this.waiting() && !this.ended) await this.nextAnswer();
    } catch (err) {
      if (!(err instanceof ProjectWriteError)) throw err;
      this.failures.push(...err.failures); // an in-thread insert of what the worker left failed
    } finally {
      current = null;
      scheduleIdleStop();
    }
    return this.result;
  }

  /** The worker's reply (module-level dispatch). */
  onReply(msg: InsertWorkerReply): void {
    if (msg.job !== this.job) return;
    if (msg.kind === "ended") this.ended = true;
    else if (msg.kind === "ack") {
      this.queue.shift();
      this.answered++;
      if (msg.error) {
        const error = new Error(msg.error.message) as Error & { code?: string };
        if (msg.error.code) error.code = msg.error.code;
        this.failures.push({ root: msg.root, error });
      } else if (!msg.dropped) {
        this.result.added += msg.added;
        this.result.duplicates += msg.duplicates;
        if (msg.added > 0)
          this.result.addedByProject.set(msg.root, (this.result.addedByProject.get(msg.root) ?? 0) + msg.added);
      }
    }
    this.wake();
  }

  /** The worker is gone (died, or stopped): what it had not answered is inserted here, at the next look. */
  workerGone(): void {
    if (this.mode === "worker") this.workerDied = true;
    this.wake();
  }

  private decide(atEnd: boolean): void {
    const others = othersBusyBetween(this.started, cpuSample());
    // a file read before the look ends is small: its rows go in here (the worker would only add a hand-over)
    const useWorker = !atEnd && worker !== null && others < OTHERS_BUSY_LIMIT;
    log.debug(
      `${useWorker ? "insert worker" : "insert in-thread"}: ${this.path} (${others.toFixed(2)} cores busy with other processes)`,
    );
    const held = this.queue;
    this.queue = [];
    this.mode = useWorker ? "worker" : "thread";
    this.usedWorker = useWorker;
    if (useWorker) for (const m of held) this.send(m);
    else this.insertHere(held);
  }

  private send(m: (string | null)[]): void {
    this.queue.push(m);
    if (!this.post_(m)) this.workerGone();
  }

  private post_(msg: InsertWorkerRequest): boolean {
    if (!worker) return false;
    try {
      worker.postMessage(msg);
      return true;
    } catch {
      return false;
    }
  }

  /** Insert messages in this thread, each batch's projects together (as the in-thread path does). */
  private insertHere(messages: ReadonlyArray<(string | null)[]>): void {
    let i = 0;
    while (i < messages.length) {
      const batch = readRowsHeader(messages[i]!)!.batch;
      const group: Array<[string, (string | null)[]]> = [];
      for (; i < messages.length && readRowsHeader(messages[i]!)!.batch === batch; i++)
        group.push([readRowsHeader(messages[i]!)!.root, messages[i]!]);
      mergeIngestResult(this.result, insertPacked(group, 0, this.ctx.userId, this.ctx.pool, ROWS_HEADER));
    }
  }

  /** The worker died: insert here what it had not answered, and go on in this thread. */
  private takeOver(): void {
    this.workerDied = false;
    if (this.mode !== "worker") return;
    this.mode = "thread";
    const unanswered = this.queue;
    this.queue = [];
    log.debug(`insert worker gone: ${unanswered.length} message(s) of ${this.path} inserted in-thread`);
    if (this.failures.length === 0) this.insertHere(unanswered);
  }

  private throwIfFailed(): void {
    if (this.failures.length > 0) throw new ProjectWriteError([...this.failures], { ...this.result });
  }

  /** Answers can still come. */
  private waiting(): boolean {
    return this.mode === "worker" && !this.workerDied && worker !== null;
  }

  private nextAnswer(): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }
}
