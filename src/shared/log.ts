/**
 * sqrl's logger: tagged, structured, one line per record, the same format in every process and in
 * the daemon's log file (the engine's lines pass through it unchanged):
 *
 *   2026-06-01T10:00:00.000Z WARN  service=capture file unreadable path=/x/y.jsonl error="EACCES"
 *
 * `log.child({ service: "capture" })` tags a part; fields are key=value (values with spaces or quotes
 * are JSON-quoted). Everything goes to stderr (stdout belongs to command output and, in `sqrl mcp`, to
 * the protocol) and to any sink a process adds (the daemon's rotating file). The level comes from
 * config (`log.level`), `SQRL_LOG_LEVEL` (0 error … 5 trace) overrides it, `--debug` raises it to trace.
 * `sqrl daemon logs --service X` filters on the service tag.
 */
import { sqrlEnvNumber } from "./env.ts";

export type LogValue = string | number | boolean | null | undefined;
export type LogFields = Record<string, LogValue>;

export const LOG_LEVELS = ["error", "warn", "info", "debug", "trace"] as const;

/** The services whose records go to the daemon log (`sqrl daemon logs --service`). */
export const LOG_SERVICES = [
  "daemon",
  "api",
  "capture",
  "batcher",
  "supervisor",
  "engine",
  "learn",
  "retrieve",
  "llm",
] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
/** Numeric levels (consola's scale, which SQRL_LOG_LEVEL has always used): a record shows when its number ≤ the level. */
const LEVEL_NUMBER: Record<LogLevelName, number> = { error: 0, warn: 1, info: 3, debug: 4, trace: 5 };

export interface LogRecord {
  time: Date;
  level: LogLevelName;
  message: string;
  /** Bindings of the logger (service, …) then the call's own fields. */
  fields: LogFields;
}

export type LogSink = (record: LogRecord, line: string) => void;

function quote(v: LogValue): string {
  const s = String(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
}

/** The one line format. The message stays as written (it is for humans); fields follow it. */
export function formatRecord(r: LogRecord): string {
  const tags: string[] = [];
  const rest: string[] = [];
  for (const [k, v] of Object.entries(r.fields)) {
    if (v === undefined) continue;
    (k === "service" ? tags : rest).push(`${k}=${quote(v)}`);
  }
  const msg = r.message.replace(/\s*\n\s*/g, " ⏎ ");
  return [r.time.toISOString(), r.level.toUpperCase().padEnd(5), ...tags, msg, ...rest]
    .filter((p) => p !== "")
    .join(" ");
}

/** The service tag of a formatted line, or undefined. */
export function serviceOfLine(line: string): string | undefined {
  return /^\S+ +[A-Z]+ +service=(\S+)/.exec(line)?.[1];
}

const stderrSink: LogSink = (_r, line) => {
  process.stderr.write(`${line}\n`);
};

interface Root {
  level: number;
  sinks: LogSink[];
}

function levelFromEnv(): number | undefined {
  const n = sqrlEnvNumber("SQRL_LOG_LEVEL");
  return n === undefined ? undefined : Math.max(-1, Math.min(5, Math.round(n)));
}

export class Logger {
  constructor(
    private readonly root: Root,
    private readonly bindings: LogFields = {},
  ) {}

  /** A logger whose records carry `bindings` too (e.g. `{ service: "capture" }`). */
  child(bindings: LogFields): Logger {
    return new Logger(this.root, { ...this.bindings, ...bindings });
  }

  /** Current numeric level (0 error … 5 trace; -1 silent). */
  get level(): number {
    return this.root.level;
  }

  set level(n: number) {
    this.root.level = n;
  }

  enabled(level: LogLevelName): boolean {
    return LEVEL_NUMBER[level] <= this.root.level;
  }

  error(message: string, fields?: LogFields): void {
    this.write("error", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.write("warn", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.write("info", message, fields);
  }
  debug(message: string, fields?: LogFields): void {
    this.write("debug", message, fields);
  }
  trace(message: string, fields?: LogFields): void {
    this.write("trace", message, fields);
  }

  private write(level: LogLevelName, message: string, fields?: LogFields): void {
    if (!this.enabled(level)) return;
    const record: LogRecord = {
      time: new Date(),
      level,
      message,
      fields: fields ? { ...this.bindings, ...fields } : this.bindings,
    };
    const line = formatRecord(record);
    for (const sink of this.root.sinks) sink(record, line);
  }
}

const root: Root = { level: levelFromEnv() ?? LEVEL_NUMBER.info, sinks: [stderrSink] };

/** The process's root logger (tag parts with `log.child`). */
export const log = new Logger(root);

/** Where records go: stderr by default. Returns the sinks that were in place. */
export function setLogSinks(sinks: LogSink[]): LogSink[] {
  const previous = root.sinks;
  root.sinks = sinks;
  return previous;
}

export function logSinks(): readonly LogSink[] {
  return root.sinks;
}

export { stderrSink };

/** Apply config's `log.level`, unless SQRL_LOG_LEVEL or --debug already set one. */
export function configureLog(level: LogLevelName): void {
  if (levelFromEnv() !== undefined || debugOn) return;
  root.level = LEVEL_NUMBER[level];
}

let debugOn = false;

export function setDebug(on: boolean): void {
  if (!on) return;
  debugOn = true;
  root.level = LEVEL_NUMBER.trace;
}
