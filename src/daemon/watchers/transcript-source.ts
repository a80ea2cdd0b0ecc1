/**
 * What a transcript source is (where its files live, which files count, how to normalize one),
 * plus the directory walk and the recursive watcher that every source shares.
 */
import { type FSWatcher, existsSync, readdirSync, statSync, watch } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { ConfigKey } from "../../shared/config-keys.ts";
import { log as rootLog } from "../../shared/log.ts";
import type { LineNormalizer, ToolUseLookup } from "../normalize/types.ts";
import type { TailSource } from "../tail.ts";

const log = rootLog.child({ service: "capture" });

export interface NormalizerDeps {
  lookupToolUse?: ToolUseLookup;
  /** Registered project roots (Gemini maps files to projects through them). */
  projects: () => readonly string[];
}

export interface TranscriptSource {
  name: TailSource;
  enabledKey: ConfigKey;
  /** The folder watched and scanned. */
  root(): string;
  /** Is this file (absolute path) one of the source's transcripts? */
  matches(path: string): boolean;
  /** Whole-document format (re-read entirely on change) rather than appended lines. */
  isDocument(path: string): boolean;
  createNormalizer(path: string, deps: NormalizerDeps): LineNormalizer;
}

/** Every file under `root` that the source accepts (no symlinked folders: no loops). */
export function listSourceFiles(
  source: TranscriptSource,
  root = source.root(),
  /** Told of each entry named like a transcript that is neither a folder nor a regular file (links, FIFOs…). */
  onOther?: (path: string) => void,
): string[] {
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile() && source.matches(p)) out.push(p);
      else if (onOther && source.matches(p)) onOther(p);
    }
  }
  return out.sort();
}

export function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/**
 * Bun's recursive `fs.watch`, used only as a "something changed under X" signal: each changed
 * file gets a trailing timer (the watcher coalesces events and may say nothing after the last write
 * of a burst, so the periodic sweep backs it up). A folder event triggers a rescan of the source.
 */
export class DirWatcher {
  private watcher: FSWatcher | null = null;
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private rescanTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly source: TranscriptSource,
    private readonly onFile: (path: string) => void,
    private readonly onRescan: () => void,
    private readonly debounceMs = 50,
  ) {}

  /**
   * Start watching. When the folder does not exist yet (the tool was never run), watch its nearest
   * existing ancestor until it appears; the periodic sweep also retries.
   */
  start(): boolean {
    const root = this.source.root();
    if (this.watcher) return true;
    if (!existsSync(root)) {
      this.watchAncestor(root);
      return false;
    }
    this.stopAncestor();
    try {
      this.watcher = watch(root, { recursive: true }, (_event, filename) => this.signal(root, filename));
      this.watcher.on("error", (err) => {
        log.warn(`Watcher on ${root} failed (${(err as Error).message}); the periodic sweep keeps capture going.`);
        this.stopWatcher();
      });
      return true;
    } catch (err) {
      log.warn(`Cannot watch ${root} (${(err as Error).message}); falling back to the periodic sweep.`);
      return false;
    }
  }

  private ancestor: FSWatcher | null = null;
  private ancestorDir = "";

  /** Watch the nearest existing ancestor of `root` (non-recursively) until `root` exists. */
  private watchAncestor(root: string): void {
    let dir = dirname(root);
    while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
    if (this.ancestor && this.ancestorDir === dir) return;
    this.stopAncestor();
    try {
      this.ancestor = watch(dir, { recursive: false }, () => {
        if (this.start()) this.scheduleRescan(); // start() moves to a closer ancestor while root is missing
      });
      this.ancestorDir = dir;
      this.ancestor.on("error", () => this.stopAncestor());
    } catch {
      this.ancestor = null; // the sweep retries
    }
  }

  private stopAncestor(): void {
    try {
      this.ancestor?.close();
    } catch {
      // already closed
    }
    this.ancestor = null;
  }

  get watching(): boolean {
    return this.watcher !== null;
  }

  private signal(root: string, filename: string | Buffer | null): void {
    if (filename === null) return this.scheduleRescan();
    const name = filename.toString();
    const path = join(root, name);
    if (this.source.matches(path)) return this.schedule(path);
    // A new folder (session, date dir): its files may have no event of their own.
    if (!name.includes(".") || !relative(root, path).split(sep).at(-1)?.includes(".")) this.scheduleRescan();
  }

  private schedule(path: string): void {
    const t = this.timers.get(path);
    if (t) clearTimeout(t);
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.onFile(path);
      }, this.debounceMs),
    );
  }

  private scheduleRescan(): void {
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    this.rescanTimer = setTimeout(() => {
      this.rescanTimer = null;
      this.onRescan();
    }, 200);
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
    this.stopAncestor();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    this.rescanTimer = null;
  }
}
