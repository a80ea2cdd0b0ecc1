/**
 * The daemon's log file: a size-rotated append-only file that receives every record of the
 * daemon's logger and the engine child's lines, all in the one format of src/shared/log.ts.
 */
import { closeSync, existsSync, fstatSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir } from "../shared/fs-atomic.ts";
import { formatRecord, type LogSink, logSinks, setLogSinks } from "../shared/log.ts";
import { homePaths } from "../shared/paths.ts";

/** The daemon's log file (rotated to daemon.log.1 … daemon.log.<keep>). */
export function daemonLogPath(): string {
  return join(homePaths.logs(), "daemon.log");
}

/** Where a detached daemon's raw stdout/stderr go (crash output that bypasses the logger). */
export function daemonOutPath(): string {
  return join(homePaths.logs(), "daemon.out");
}

export interface RotatingLogOptions {
  /** Rotate once the file grows past this many bytes. */
  maxBytes?: number;
  /** Rotated files kept besides the live one. */
  keep?: number;
}

/** An append-only text file that rotates by size: `x.log` → `x.log.1` → … → `x.log.<keep>`. */
export class RotatingLog {
  readonly path: string;
  private readonly maxBytes: number;
  private readonly keep: number;
  private fd: number | undefined;
  private size = 0;

  constructor(path: string, opts: RotatingLogOptions = {}) {
    this.path = path;
    this.maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
    this.keep = opts.keep ?? 3;
    this.open();
  }

  private open(): void {
    ensurePrivateDir(join(this.path, "..")); // logs name projects and files: the owner's alone
    this.fd = openSync(this.path, "a", 0o600);
    this.size = fstatSync(this.fd).size;
  }

  write(text: string): void {
    if (this.fd === undefined) return;
    const line = text.endsWith("\n") ? text : `${text}\n`;
    const bytes = Buffer.from(line);
    if (this.size > 0 && this.size + bytes.length > this.maxBytes) this.rotate();
    writeSync(this.fd!, bytes);
    this.size += bytes.length;
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    if (this.keep > 0) renameSync(this.path, `${this.path}.1`);
    else rmSync(this.path, { force: true });
    this.open();
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

export interface LogFileHandle {
  file: RotatingLog;
  /**
   * Write a line that did not come through this process's logger (the engine child's output): a
   * line already in the log format passes unchanged, anything else is wrapped as an info record
   * tagged with `service`.
   */
  raw(line: string, service?: string): void;
  detach(): void;
}

/** Does `line` already start like a formatted record (ISO time, level)? */
const FORMATTED = /^\d{4}-\d\d-\d\dT[\d:.]+Z [A-Z]+ /;

/**
 * Send sqrl's logger to the rotating daemon log as well as stderr. With `stderr: false` (a detached
 * daemon whose stderr already goes to a file) only the rotating log is written.
 */
export function attachLogFile(opts: RotatingLogOptions & { path?: string; stderr?: boolean } = {}): LogFileHandle {
  const file = new RotatingLog(opts.path ?? daemonLogPath(), opts);
  const toFile: LogSink = (_r, line) => file.write(line);
  const previous = setLogSinks(opts.stderr === false ? [toFile] : [...logSinks(), toFile]);
  return {
    file,
    raw: (line: string, service?: string) => {
      const text = FORMATTED.test(line)
        ? line
        : formatRecord({ time: new Date(), level: "info", message: line, fields: service ? { service } : {} });
      file.write(text);
      if (opts.stderr !== false) process.stderr.write(`${text}\n`);
    },
    detach: () => {
      setLogSinks(previous);
      file.close();
    },
  };
}
