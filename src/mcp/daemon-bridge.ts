/**
 * The MCP layer's only way to memory: the daemon API, through the shared route table.
 */
import type { z } from "zod";
import { type Route, routeAt } from "../shared/api.ts";
import type { CallOptions } from "../shared/api-client.ts";
import { DaemonUnreachableError, SqrlError } from "../shared/errors.ts";
import { homePaths } from "../shared/paths.ts";
import type { RuntimeInfo, RuntimeKind } from "../shared/runtime-files.ts";

/** How the bridge starts a daemon that does not answer (default: `ensureDaemon`). */
export type DaemonStarter = (opts: { timeoutMs: number }) => Promise<RuntimeInfo>;

export interface BridgeOptions {
  /** Which API to call: the daemon (default) or, in tests and tools that need it, the engine directly. */
  kind?: RuntimeKind;
  /** Where to find it; default: the runtime file of `kind` (daemon.json / memory-service.json). */
  target?: () => RuntimeInfo | undefined;
  /** Timeout of every API call (ms). */
  timeoutMs?: number;
  /** Start the daemon when it does not answer; `false` never starts one. */
  start?: DaemonStarter | false;
  /** How long a start may take before the call gives up (ms). */
  startTimeoutMs?: number;
}

/** Well under a host's own tool timeout: a frozen engine costs a few seconds and a clear error, never half a minute. */
export const DEFAULT_CALL_TIMEOUT_MS = 8_000;
export const DEFAULT_START_TIMEOUT_MS = 10_000;
/** After a failed start, calls within this window fail at once instead of waiting for another start. */
const START_RETRY_AFTER_MS = 30_000;

async function defaultStarter(opts: { timeoutMs: number }): Promise<RuntimeInfo> {
  const { ensureDaemon } = await import("../shared/daemon-launch.ts");
  return ensureDaemon({ timeoutMs: opts.timeoutMs });
}

/**
 * The MCP layer's only way to memory: each tool maps to one call of the daemon API. When no daemon
 * answers, it is started (detached) and the call retried once; when that fails too the error says
 * why and what to run. Every call has a timeout, so a tool never hangs.
 */
export class DaemonBridge {
  private readonly kind: RuntimeKind;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly starter: DaemonStarter | false;
  private readonly target?: () => RuntimeInfo | undefined;
  private lastStartFailure?: { at: number; error: DaemonUnreachableError };

  constructor(opts: BridgeOptions = {}) {
    this.kind = opts.kind ?? "daemon";
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    this.starter = opts.start ?? (this.kind === "daemon" ? defaultStarter : false);
    this.target = opts.target;
  }

  /**
   * One call of the route at `path` (the route table gives its method: the input travels as a JSON
   * body for POST routes), its answer validated against the route's response schema and `schema`.
   */
  async request<T>(path: string, opts: CallOptions, schema: z.ZodType<T>): Promise<T> {
    const r = routeAt(path);
    if (!r) throw new Error(`${path} is not in the route table (src/shared/api.ts ROUTES)`);
    return schema.parse(await this.call(r, opts.query ?? opts.body ?? {}, opts.timeoutMs));
  }

  /** One call of a route of the table, its answer validated against the route's response schema. */
  async call<R extends Route>(r: R, input: unknown, timeoutMs?: number): Promise<ReturnType<R["response"]["parse"]>> {
    const { routeCall, checkAnswer } = await import("../shared/api-client.ts");
    const raw = await this.callWithStart(r.path, routeCall(r, input, timeoutMs));
    return checkAnswer(r, this.kind, raw);
  }

  private async callOnce(path: string, opts: CallOptions, info?: RuntimeInfo): Promise<unknown> {
    const { callApi } = await import("../shared/api-client.ts");
    return callApi<unknown>(
      this.kind,
      path,
      { ...opts, timeoutMs: opts.timeoutMs ?? this.timeoutMs },
      info ?? this.target?.(),
    );
  }

  private async callWithStart(path: string, opts: CallOptions): Promise<unknown> {
    try {
      return await this.callOnce(path, opts);
    } catch (err) {
      if (err instanceof DaemonUnreachableError && /timed out/.test(err.message)) {
        // it is running but does not answer: starting another would not help, waiting longer neither
        throw new SqrlError(
          "timeout",
          `sqrl's memory did not answer within ${Math.round((opts.timeoutMs ?? this.timeoutMs) / 1000)} s (the engine may be busy or stuck; the daemon restarts one that stops answering). Retry in a moment; \`sqrl daemon status\` shows its state.`,
          { status: 504, cause: err },
        );
      }
      if (!(err instanceof DaemonUnreachableError) || this.starter === false) throw err;
      const info = await this.startDaemon(err);
      return this.callOnce(path, opts, info);
    }
  }

  private async startDaemon(first: DaemonUnreachableError): Promise<RuntimeInfo> {
    const recent = this.lastStartFailure;
    if (recent && Date.now() - recent.at < START_RETRY_AFTER_MS) throw recent.error;
    const starter = this.starter as DaemonStarter;
    try {
      const info = await withTimeout(
        starter({ timeoutMs: this.startTimeoutMs }),
        this.startTimeoutMs + 1_000,
        "starting the daemon timed out",
      );
      this.lastStartFailure = undefined;
      return info;
    } catch (err) {
      const why =
        err instanceof DaemonUnreachableError ? detailOf(err) : err instanceof Error ? err.message : String(err);
      const error = new DaemonUnreachableError(
        `${detailOf(first)}; starting it failed: ${why}; its logs are in ${homePaths.logs()}, \`sqrl daemon run\` shows errors in the foreground`,
        err,
      );
      this.lastStartFailure = { at: Date.now(), error };
      throw error;
    }
  }
}

function detailOf(err: DaemonUnreachableError): string {
  const m = /not reachable \((.*)\)\. Start it/s.exec(err.message);
  return m?.[1] ?? err.message;
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
