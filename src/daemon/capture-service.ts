/**
 * CaptureService: one watcher per source (Claude Code, Codex CLI, Gemini CLI, git) writing
 * normalized events into each registered project's data.db. The daemon embeds it (contracts.md).
 *
 * start(): full scan of every enabled source from the persisted offsets, then watch. A changed file
 * is re-read to EOF on a ~50 ms trailing timer; a periodic sweep compares sizes (the recursive
 * watcher can miss the end of a burst); held-back events (an assistant response that may still grow)
 * are flushed after a quiet period. Offsets are persisted only after the events are committed.
 */
import type { Database } from "bun:sqlite";
import { statSync, type Stats } from "node:fs";
import { loadConfig } from "../shared/config.ts";
import type { NormalizedEvent } from "../shared/event.ts";
import { log } from "../shared/log.ts";
import { listProjects } from "../shared/projects.ts";
import { nowIso } from "../shared/time.ts";
import { deleteFileOffset, getFileOffset, putFileOffset } from "../sql/file-offsets.ts";
import { openStateDb } from "../sql/open.ts";
import { ingestFileOnce, normalizerDeps, TRANSCRIPT_SOURCES } from "./backfill.ts";
import { ingestNormalized, ProjectDbPool, type IngestContext, type IngestResult } from "./ingest.ts";
import { flushTail, newTailFile, readTail, type TailFile, type TailSource } from "./tail.ts";
import { gitCursor, GitWatcher, readGitCommits, saveGitCursor } from "./watchers/git.ts";
import { DirWatcher, listSourceFiles, type TranscriptSource } from "./watchers/transcript-source.ts";

export interface SourceStatus {
  name: "claude" | "codex" | "gemini" | "git";
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

const SOURCE_TOOL: Record<TailSource, string> = { claude: "claude_code", codex: "codex", gemini: "gemini_cli" };

export class CaptureService {
  private state: Database | null = null;
  private readonly pool = new ProjectDbPool();
  private ctx: IngestContext | null = null;
  private enabled: Record<SourceStatus["name"], boolean> = { claude: false, codex: false, gemini: false, git: false };
  private readonly files = new Map<string, TailFile>();
  private readonly watchers = new Map<TailSource, DirWatcher>();
  private readonly flushTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly recheckTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private sweepTimer: ReturnType<typeof setInterval> | null = null;
  private git: GitWatcher | null = null;
  private running = false;
  private sweeping = false;

  constructor(private readonly opts: CaptureOptions = {}) {}

  async start(): Promise<void> {
    if (this.running) return;
    const cfg = loadConfig();
    this.enabled = { claude: cfg["watch.claude"], codex: cfg["watch.codex"], gemini: cfg["watch.gemini"], git: cfg["watch.git"] };
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
    for (const t of this.flushTimers.values()) clearTimeout(t);
    this.flushTimers.clear();
    for (const t of this.recheckTimers.values()) clearTimeout(t);
    this.recheckTimers.clear();
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
    for (const root of added) this.addGitRepo(root);
  }

  status(): SourceStatus[] {
    const out: SourceStatus[] = [];
    for (const name of ["claude", "codex", "gemini"] as const) {
      let files = 0;
      for (const f of this.files.values()) if (f.source === name) files++;
      out.push({ name, enabled: this.enabled[name], path: TRANSCRIPT_SOURCES[name].root(), files });
    }
    out.push({ name: "git", enabled: this.enabled.git, path: "(registered repos)", files: this.git?.roots().length ?? 0 });
    return out;
  }

  // ---- transcripts ---------------------------------------------------------------------------

  private transcriptSources(): TranscriptSource[] {
    return (["claude", "codex", "gemini"] as const).filter((n) => this.enabled[n]).map((n) => TRANSCRIPT_SOURCES[n]);
  }

  /** Read every file of a source that changed since it was last read. */
  private async scan(source: TranscriptSource): Promise<void> {
    let n = 0;
    for (const path of listSourceFiles(source)) {
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
          const f = this.files.get(path);
          const st = statOrNull(path);
          if (!f || !st || f.size !== st.size || (f.document && st.mtimeMs !== f.mtimeMs)) this.processFile(source, path);
        }
      }
      this.git?.sweep();
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
      f = newTailFile(path, source.name, source.isDocument(path), source.createNormalizer(path, normalizerDeps(this.ctx!)), saved);
      this.files.set(path, f);
    }
    return f;
  }

  /** Read what a file gained, commit its events, then persist the offset. Never throws. */
  private processFile(source: TranscriptSource, path: string, recheck = true): void {
    if (!this.running || !this.ctx) return;
    try {
      const f = this.tailFile(source, path);
      const read = readTail(f, { renew: () => source.createNormalizer(path, normalizerDeps(this.ctx!)) });
      if (read.missing) {
        this.files.delete(path);
        if (this.state) deleteFileOffset(this.state, path);
        return;
      }
      if (read.reset) log.info(`${path} was truncated or replaced; reading it again from the start.`);
      this.commit(f, read.events);
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
      log.warn(`Capture of ${path} failed: ${(err as Error).message}`);
    }
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
        } catch (err) {
          log.warn(`Flushing ${f.path} failed: ${(err as Error).message}`);
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
    if (!this.running || !this.state || !this.ctx || !this.ctx.projects.includes(root)) return;
    try {
      const { events, head } = readGitCommits(root, gitCursor(this.state, root));
      if (events.length > 0) this.report(ingestNormalized(events, { ...this.ctx, only: new Set([root]) }));
      if (head) saveGitCursor(this.state, root, head);
    } catch (err) {
      log.warn(`git capture of ${root} failed: ${(err as Error).message}`);
    }
  }
}
