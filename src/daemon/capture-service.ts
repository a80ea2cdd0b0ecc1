/**
 * CaptureService: one watcher per source (Claude Code, Codex CLI, Gemini CLI, git) writing
 * normalized events into each registered project's data.db. The daemon embeds it (contracts.md).
 *
 * start(): full scan of every enabled source from the persisted offsets, then watch. A changed file
 * is re-read to EOF on a ~50 ms trailing timer; a periodic sweep compares sizes (the recursive
 * watcher can miss the end of a burst); held-back events (an assistant response that may still grow)
 * are flushed after a quiet period. Offsets are persisted only after the events are committed.
 *
 * A commit that fails (disk full, any SQLite error) must not lose what was read: the file's in-memory
 * state is dropped, so the next read starts again from the persisted offset (the last one whose
 * events are committed), and dedup absorbs what did get in. Such a file is retried with backoff;
 * "disk full" is said once (log and `sqrl daemon status`) and once more when capture resumes.
 */
import type { Database } from "bun:sqlite";
import { existsSync, statSync, type Stats } from "node:fs";
import { processConfig } from "../shared/config.ts";
import type { NormalizedEvent } from "../shared/event.ts";
import { log as rootLog } from "../shared/log.ts";
import { listProjects } from "../shared/projects.ts";
import { nowIso } from "../shared/time.ts";
import { deleteFileOffset, getFileOffset, putFileOffset } from "../sql/file-offsets.ts";
import { openStateDb } from "../sql/open.ts";
import { ingestFileOnce, normalizerDeps, TRANSCRIPT_SOURCES } from "./backfill.ts";
import { ingestNormalized, ProjectDbPool, type IngestContext, type IngestResult } from "./ingest.ts";
import { refusalOf } from "./safe-open.ts";
import { flushTail, MAX_LINE_BYTES, newTailFile, readTail, type TailFile, type TailSource } from "./tail.ts";
import { gitCursor, GitWatcher, readGitCommits, saveGitCursor } from "./watchers/git.ts";
import { OpenCodeWatcher, opencodeDbPath, readOpenCode } from "./watchers/opencode.ts";
import { DirWatcher, listSourceFiles, type TranscriptSource } from "./watchers/transcript-source.ts";

const log = rootLog.child({ service: "capture" });

export interface SourceStatus {
  name: "claude" | "codex" | "gemini" | "qwen" | "copilot" | "opencode" | "git";
  enabled: boolean;
  path: string;
  files: number;
}

export interface CaptureOptions {
  /** Called after events were committed to a project's data.db. */
  onEvents?: (projectId: string, added: number) => void;
  /** Periodic size sweep, default ~2000. */
  sweepIntervalMs?: number;
}

/** Backoff of a file whose commit failed: first retry, and the longest wait. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 30_000;

interface FailedFile {
  failures: number;
  retryAt: number;
}

/** SQLite's "database or disk is full" (SQLITE_FULL), or the OS's ENOSPC. */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === "SQLITE_FULL" || e?.code === "ENOSPC" || /disk is full|no space left/i.test(e?.message ?? "");
}

/** Quiet time after which held-back events of a file are released. */
const IDLE_FLUSH_MS = 500;
/**
 * After a read that found new lines, look once more a little later: the watcher may say nothing
 * about the last write of a burst, and this catches it long before the periodic sweep.
 */
const RECHECK_MS = 250;
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

const SOURCE_TOOL: Record<TailSource, string> = {
  claude: "claude_code",
  codex: "codex",
  gemini: "gemini_cli",
  qwen: "qwen_code",
  copilot: "copilot_cli",
};

export class CaptureService {
  private state: Database | null = null;
  private readonly pool = new ProjectDbPool();
  private ctx: IngestContext | null = null;
  private enabled: Record<SourceStatus["name"], boolean> = {
    claude: false,
    codex: false,
    gemini: false,
    qwen: false,
    copilot: false,
    opencode: false,
    git: false,
  };
  private readonly files = new Map<string, TailFile>();
  private readonly watchers = new Map<TailSource, DirWatcher>();
  private readonly flushTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly recheckTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private sweepTimer: ReturnType<typeof setInterval> | null = null;
  private git: GitWatcher | null = null;
  private opencode: OpenCodeWatcher | null = null;
  private running = false;
  private sweeping = false;
  /** Files whose last commit failed: retried from their persisted offset after a backoff. */
  private readonly failed = new Map<string, FailedFile>();
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  /** Set while commits fail for lack of space (said once, cleared once capture commits again). */
  private diskFullSince: string | null = null;
  /** Files already named in the log for being refused or holding unreadable lines: each is said once. */
  private readonly said = new Set<string>();

  constructor(private readonly opts: CaptureOptions = {}) {}

  async start(): Promise<void> {
    if (this.running) return;
    const cfg = processConfig().get();
    this.enabled = {
      claude: cfg["watch.claude"],
      codex: cfg["watch.codex"],
      gemini: cfg["watch.gemini"],
      qwen: cfg["watch.qwen"],
      copilot: cfg["watch.copilot"],
      opencode: cfg["watch.opencode"],
      git: cfg["watch.git"],
    };
    this.state = openStateDb();
    this.ctx = { projects: listProjects(), userId: cfg.user_id, pool: this.pool };
    this.running = true;
    for (const source of this.transcriptSources()) {
      await this.scan(source);
      const w = new DirWatcher(
        source,
        (path) => this.processFile(source, path),
        () => void this.scan(source),
      );
      w.start();
      this.watchers.set(source.name, w);
    }
    if (this.enabled.opencode) {
      this.opencode = new OpenCodeWatcher(() => this.scanOpenCode());
      this.opencode.start();
      this.scanOpenCode();
    }
    if (this.enabled.git) {
      this.git = new GitWatcher((root) => this.scanGit(root));
      for (const root of this.ctx.projects) this.addGitRepo(root);
    }
    this.sweepTimer = setInterval(() => void this.sweep(), this.opts.sweepIntervalMs ?? 2000);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const w of this.watchers.values()) w.stop();
    this.watchers.clear();
    this.git?.stop();
    this.git = null;
    this.opencode?.stop();
    this.opencode = null;
    for (const t of this.flushTimers.values()) clearTimeout(t);
    this.flushTimers.clear();
    for (const t of this.recheckTimers.values()) clearTimeout(t);
    this.recheckTimers.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    for (const file of this.files.values()) {
      try {
        this.commit(file, flushTail(file));
      } catch (err) {
        log.warn(`Flushing ${file.path} failed: ${(err as Error).message}`);
      }
    }
    this.files.clear();
    this.pool.close();
    this.state?.close();
    this.state = null;
  }

  /** Re-read projects.json; newly registered projects get their existing history (a rescan from 0). */
  async refreshProjects(): Promise<void> {
    if (!this.ctx) return;
    const next = listProjects();
    const before = new Set(this.ctx.projects);
    const added = next.filter((p) => !before.has(p));
    const removed = this.ctx.projects.filter((p) => !next.includes(p));
    this.ctx.projects = next;
    for (const root of removed) {
      this.git?.remove(root);
      this.pool.close(root);
    }
    if (added.length === 0) return;
    const only = new Set(added);
    const rescanCtx: IngestContext = { ...this.ctx, only };
    for (const source of this.transcriptSources()) {
      for (const path of listSourceFiles(source)) {
        if (!this.running) return;
        try {
          const res = await ingestFileOnce(path, source.name, source.isDocument(path), rescanCtx);
          this.report(res);
        } catch (err) {
          log.warn(`Backfill of ${path} failed: ${(err as Error).message}`);
        }
      }
    }
    if (this.opencode) this.scanOpenCode(0, only);
    for (const root of added) this.addGitRepo(root);
  }

  /** What keeps capture from committing right now (disk full), or null. */
  problem(): string | null {
    if (this.diskFullSince === null) return null;
    return `disk full since ${this.diskFullSince}: capture is paused and retries with backoff; nothing read is lost. Free some space on the disk that holds the projects' .ctx folders.`;
  }

  status(): SourceStatus[] {
    const out: SourceStatus[] = [];
    for (const name of ["claude", "codex", "gemini", "qwen", "copilot"] as const) {
      let files = 0;
      for (const f of this.files.values()) if (f.source === name) files++;
      out.push({ name, enabled: this.enabled[name], path: TRANSCRIPT_SOURCES[name].root(), files });
    }
    out.push({
      name: "opencode",
      enabled: this.enabled.opencode,
      path: opencodeDbPath(),
      files: this.opencode && existsSync(opencodeDbPath()) ? 1 : 0,
    });
    out.push({
      name: "git",
      enabled: this.enabled.git,
      path: "(registered repos)",
      files: this.git?.roots().length ?? 0,
    });
    return out;
  }

  // ---- transcripts ---------------------------------------------------------------------------

  private transcriptSources(): TranscriptSource[] {
    return (["claude", "codex", "gemini", "qwen", "copilot"] as const)
      .filter((n) => this.enabled[n])
      .map((n) => TRANSCRIPT_SOURCES[n]);
  }

  /** Read every file of a source that changed since it was last read. */
  private async scan(source: TranscriptSource): Promise<void> {
    let n = 0;
    const root = source.root();
    for (const path of listSourceFiles(source, root, (other) => this.sayRefused(other, root))) {
      if (!this.running) return;
      this.processFile(source, path, false);
      if (++n % 20 === 0) await Bun.sleep(0); // keep the daemon's API responsive during a big scan
    }
  }

  private async sweep(): Promise<void> {
    if (!this.running || this.sweeping) return;
    this.sweeping = true;
    try {
      for (const source of this.transcriptSources()) {
        const w = this.watchers.get(source.name);
        if (w && !w.watching) w.start();
        for (const path of listSourceFiles(source)) {
          if (!this.running) return;
          if (this.failed.has(path)) continue; // its retry timer reads it
          const f = this.files.get(path);
          const st = statOrNull(path);
          if (!f || !st || f.size !== st.size || (f.document && st.mtimeMs !== f.mtimeMs))
            this.processFile(source, path);
        }
      }
      this.git?.sweep();
      this.opencode?.sweep();
    } catch (err) {
      log.warn(`Capture sweep failed: ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }

  private tailFile(source: TranscriptSource, path: string): TailFile {
    let f = this.files.get(path);
    if (!f) {
      const saved = this.state ? getFileOffset(this.state, path) : undefined;
      f = newTailFile(
        path,
        source.name,
        source.isDocument(path),
        source.createNormalizer(path, normalizerDeps(this.ctx!)),
        saved,
      );
      this.files.set(path, f);
    }
    return f;
  }

  /** Read what a file gained, commit its events, then persist the offset. Never throws. */
  private processFile(source: TranscriptSource, path: string, recheck = true): void {
    if (!this.running || !this.ctx) return;
    const retry = this.failed.get(path);
    if (retry && Date.now() < retry.retryAt) return; // the retry timer comes back to it
    let f: TailFile | undefined;
    try {
      f = this.tailFile(source, path);
      const read = readTail(f, {
        renew: () => source.createNormalizer(path, normalizerDeps(this.ctx!)),
        within: source.root(),
      });
      if (read.missing) {
        this.files.delete(path);
        this.failed.delete(path);
        if (this.state) deleteFileOffset(this.state, path);
        this.sayRefused(path, source.root());
        return;
      }
      for (const at of read.overlong)
        log.warn(
          f.document
            ? `${path}: a document larger than ${MAX_LINE_BYTES / 2 ** 20} MiB was skipped (counted malformed); it is read again once it is smaller.`
            : `${path}: a line longer than ${MAX_LINE_BYTES / 2 ** 20} MiB starting at byte ${at} was skipped (counted malformed); capture goes on after its end.`,
        );
      // Over-long lines are said above, one by one; any other unreadable line once per file.
      if (read.malformed > read.overlong.length) this.sayMalformed(path, read.malformed - read.overlong.length);
      if (read.reset)
        log.warn(
          `${path} was truncated, replaced or rewritten; reading it again from the start (duplicates are skipped).`,
        );
      this.commit(f, read.events);
      this.committed(path);
      this.scheduleFlush(f);
      if (recheck && read.lines > 0 && !this.recheckTimers.has(path)) {
        this.recheckTimers.set(
          path,
          setTimeout(() => {
            this.recheckTimers.delete(path);
            this.processFile(source, path);
          }, RECHECK_MS),
        );
      }
    } catch (err) {
      this.commitFailed(source, path, f, err);
    }
  }

  /**
   * A read or commit failed: forget the file's in-memory state (its next read starts again from the
   * persisted offset, whose events are all committed) and retry it with backoff.
   */
  private commitFailed(source: TranscriptSource, path: string, f: TailFile | undefined, err: unknown): void {
    if (f && this.files.get(path) === f) this.files.delete(path);
    const t = this.flushTimers.get(path);
    if (t) clearTimeout(t);
    this.flushTimers.delete(path);
    const prev = this.failed.get(path);
    const failures = (prev?.failures ?? 0) + 1;
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
    this.failed.set(path, { failures, retryAt: Date.now() + delay });
    if (isDiskFull(err)) {
      if (this.diskFullSince === null) {
        this.diskFullSince = nowIso();
        log.error(
          `Disk full: capture cannot store events (${(err as Error).message}). Nothing read is lost: capture retries with backoff and catches up once space is freed.`,
        );
      }
    } else if (failures === 1 || failures % 10 === 0) {
      log.warn(
        `Capture of ${path} failed (${(err as Error).message}); it will be read again from its last stored offset in ${delay} ms.`,
      );
    }
    this.scheduleRetry(source);
  }

  /** A file named like a transcript that is not read (a FIFO, a looping link, a link out of the folder): said once. */
  private sayRefused(path: string, root: string): void {
    const why = refusalOf(path, root);
    if (!why || this.said.has(`refused:${path}`)) return;
    this.said.add(`refused:${path}`);
    const reasons = {
      not_regular: "it is not a regular file (a FIFO, socket or device)",
      link_outside: "it is a symbolic link to a file outside the agent's folder",
      link_loop: "it is a symbolic link that loops",
    } as const;
    log.warn(`Not reading ${path}: ${reasons[why]}. Only regular transcript files inside ${root} are captured.`);
  }

  /** Lines that are no record (not JSON, binary bytes, nested too deep) are skipped: said once per file. */
  private sayMalformed(path: string, count: number): void {
    if (this.said.has(`malformed:${path}`)) return;
    this.said.add(`malformed:${path}`);
    log.warn(
      `Skipped ${count} unreadable line${count === 1 ? "" : "s"} in ${path} (not JSON, binary bytes or nested too deep); the rest of the file is captured. Later ones are counted in state.db, not logged again.`,
    );
  }

  /** A commit went through: the file's backoff ends, and a disk-full state is over. */
  private committed(path: string): void {
    this.failed.delete(path);
    if (this.diskFullSince !== null) {
      log.info(`Disk space is back: capture resumed (paused since ${this.diskFullSince}).`);
      this.diskFullSince = null;
    }
  }

  /** Wake up for the earliest due retry. */
  private scheduleRetry(source: TranscriptSource): void {
    if (this.retryTimer || !this.running) return;
    let next = Infinity;
    for (const r of this.failed.values()) next = Math.min(next, r.retryAt);
    if (next === Infinity) return;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null;
        if (!this.running) return;
        const now = Date.now();
        for (const [path, r] of [...this.failed]) {
          if (r.retryAt > now) continue;
          const src = this.transcriptSources().find((s) => s.matches(path)) ?? source;
          r.retryAt = 0;
          this.processFile(src, path);
        }
        this.scheduleRetry(source);
      },
      Math.max(10, next - Date.now()),
    );
  }

  private commit(f: TailFile, events: NormalizedEvent[]): void {
    if (events.length > 0 && this.ctx) this.report(ingestNormalized(events, this.ctx));
    if (this.state) {
      putFileOffset(this.state, {
        path: f.path,
        source: SOURCE_TOOL[f.source],
        offset: f.safeOffset,
        size: f.size,
        ino: f.ino,
        head_hash: f.safeHeadHash,
        malformed: f.malformed,
        skipping: f.safeSkipping ? 1 : 0,
        updated_at: nowIso(),
      });
    }
  }

  private scheduleFlush(f: TailFile): void {
    const prev = this.flushTimers.get(f.path);
    if (prev) clearTimeout(prev);
    if (f.normalizer.heldFrom() === null) {
      this.flushTimers.delete(f.path);
      return;
    }
    this.flushTimers.set(
      f.path,
      setTimeout(() => {
        this.flushTimers.delete(f.path);
        if (!this.running || this.files.get(f.path) !== f) return;
        try {
          this.commit(f, flushTail(f));
          this.committed(f.path);
        } catch (err) {
          const source = TRANSCRIPT_SOURCES[f.source];
          this.commitFailed(source, f.path, f, err);
        }
      }, IDLE_FLUSH_MS),
    );
  }

  private report(res: IngestResult): void {
    if (!this.opts.onEvents) return;
    for (const [projectId, added] of res.addedByProject) {
      try {
        this.opts.onEvents(projectId, added);
      } catch (err) {
        log.warn(`onEvents callback failed: ${(err as Error).message}`);
      }
    }
  }

  // ---- git -----------------------------------------------------------------------------------

  private addGitRepo(root: string): void {
    if (!this.git) return;
    if (this.git.add(root)) this.scanGit(root);
  }

  private scanGit(root: string): void {
    if (!this.running || !this.state || !this.ctx?.projects.includes(root)) return;
    try {
      const { events, head, error } = readGitCommits(root, gitCursor(this.state, root));
      if (error) log.warn(`git capture of ${root}: ${error}`);
      if (events.length > 0) this.report(ingestNormalized(events, { ...this.ctx, only: new Set([root]) }));
      if (head) saveGitCursor(this.state, root, head);
    } catch (err) {
      log.warn(`git capture of ${root} failed: ${(err as Error).message}`);
    }
  }

  // ---- OpenCode -------------------------------------------------------------------------------

  /**
   * Read OpenCode's store from the persisted cursor (or `since`, for a newly registered project's
   * history) and store what changed. A store it cannot read (locked by its writer past the busy
   * timeout, corrupt, half-written) is said once and read again at its next change, from the same
   * cursor: nothing is lost and nothing else stops.
   */
  private scanOpenCode(since?: number, only?: ReadonlySet<string>): void {
    if (!this.running || !this.state || !this.ctx) return;
    const path = opencodeDbPath();
    if (!existsSync(path)) return;
    const saved = getFileOffset(this.state, path);
    try {
      const res = readOpenCode(path, since ?? saved?.offset ?? 0);
      if (res.events.length > 0) this.report(ingestNormalized(res.events, only ? { ...this.ctx, only } : this.ctx));
      if (since === undefined) {
        const st = statOrNull(path);
        putFileOffset(this.state, {
          path,
          source: "opencode",
          offset: res.cursor,
          size: st?.size ?? 0,
          ino: st?.ino ?? null,
          head_hash: null,
          malformed: 0,
          updated_at: nowIso(),
        });
      }
      if (this.said.delete(`opencode:${path}`)) log.info(`OpenCode store ${path} is readable again; capture resumed.`);
    } catch (err) {
      if (this.said.has(`opencode:${path}`)) return;
      this.said.add(`opencode:${path}`);
      log.warn(
        `Cannot read OpenCode's store ${path} (${(err as Error).message}); capture retries at its next change from where it stopped, nothing is lost.`,
      );
    }
  }
}
