/**
 * `sqrl mcp` over stdio. Hosts start it per session and wait for `initialize` + `tools/list`, so
 * those two are answered from the build-time manifest (the real server's own answers, inlined by a
 * Bun macro) before the SDK and zod are even loaded. Right after (or at the first other message) the
 * real `McpServer` from `createServer()` is loaded, replayed the client's `initialize`, and from
 * then on handles everything. stdout carries nothing but protocol.
 *
 * `StdioServer` takes its streams as arguments (tests drive it in-process). Every line is checked
 * before anything reads its fields: a line that is not JSON gets -32700 (Parse error), a message
 * that is not a JSON-RPC 2.0 request, notification or response gets -32600 (Invalid Request), and
 * a line longer than the read cap is dropped with -32600. When the input closes, a last message
 * without its newline is still answered, answers still being computed get a short grace, then the
 * server stops: well within a second.
 *
 * Request ids are given back exactly as sent: an integer id beyond 2^53 (which a JS number would
 * round) travels inside as a stand-in string and is written back as the same digits.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { consola } from "consola";
import { resolve } from "node:path";
import { log } from "../shared/log.ts";
import { serverManifest } from "./manifest.ts" with { type: "macro" };

const MANIFEST = await serverManifest();

type Id = string | number;
type Message = {
  jsonrpc: "2.0";
  id?: Id;
  method?: string;
  params?: Record<string, unknown> | unknown[];
  result?: unknown;
  error?: unknown;
};

const REPLAY_ID = "sqrl-replayed-initialize";
/** Load the real server this long after the last message if no tools/list came (ms). */
const IDLE_LOAD_MS = 30;
/** Longest line read (bytes): a bigger one is dropped with an error, never buffered without end. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** How long a closed input waits for requests still being answered (ms). */
export const SHUTDOWN_GRACE_MS = 700;

export const PARSE_ERROR = -32700;

/** Integer ids a JS number would round: the source digits, kept from JSON.parse's reviver. */
const BIG_ID_HINT = /"id"\s*:\s*-?\d{16,}/;
const INTEGER = /^-?\d+$/;
/** JSON.rawJSON (Bun, V8): a value JSON.stringify writes as these exact characters. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/**
 * JSON.parse of one message; an `id` that is an integer beyond Number.MAX_SAFE_INTEGER comes back
 * as `bigId(digits)` so it is never rounded.
 */
export function parseMessage(text: string, bigId: (digits: string) => string): unknown {
  if (!BIG_ID_HINT.test(text)) return JSON.parse(text);
  const exact = new WeakMap<object, string>();
  const v = JSON.parse(text, function (this: object, key, value, ctx?: { source?: string }) {
    if (key === "id" && typeof value === "number" && !Number.isSafeInteger(value) && INTEGER.test(ctx?.source ?? ""))
      exact.set(this, ctx!.source!);
    return value;
  }) as unknown;
  if (v !== null && typeof v === "object" && !Array.isArray(v)) {
    const digits = exact.get(v);
    if (digits !== undefined) (v as Record<string, unknown>).id = bigId(digits);
  }
  return v;
}
export const INVALID_REQUEST = -32600;

/** stdout belongs to the protocol: every logger and stray console.log goes to stderr instead. */
function keepStdoutForProtocol(): void {
  consola.options.stdout = process.stderr;
  consola.options.stderr = process.stderr;
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

function initializeResult(requested: unknown): Record<string, unknown> {
  const version =
    typeof requested === "string" && MANIFEST.supportedProtocolVersions.includes(requested)
      ? requested
      : MANIFEST.latestProtocolVersion;
  return {
    protocolVersion: version,
    capabilities: MANIFEST.capabilities,
    serverInfo: MANIFEST.serverInfo,
    instructions: MANIFEST.instructions,
  };
}

function isId(v: unknown): v is Id {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

/** What a parsed line is: a message to handle, or the error to answer (with the id when one can be read). */
export type Checked = { ok: true; msg: Message } | { ok: false; id: Id | null; message: string };

/** JSON-RPC 2.0 shape check (MCP: ids are strings or numbers, never null; params are objects). */
export function checkMessage(v: unknown): Checked {
  if (v === null || typeof v !== "object")
    return { ok: false, id: null, message: "Invalid Request: a message is a JSON object" };
  if (Array.isArray(v))
    return { ok: false, id: null, message: "Invalid Request: batches are not supported; send one message per line" };
  const m = v as Record<string, unknown>;
  const id = isId(m.id) ? m.id : null;
  if (m.jsonrpc !== "2.0") return { ok: false, id, message: 'Invalid Request: "jsonrpc" must be "2.0"' };
  if ("id" in m && !isId(m.id))
    return { ok: false, id: null, message: "Invalid Request: id must be a string or a number" };
  if ("method" in m) {
    if (typeof m.method !== "string" || m.method.length === 0)
      return { ok: false, id, message: "Invalid Request: method must be a non-empty string" };
    if ("params" in m && (m.params === null || typeof m.params !== "object"))
      return { ok: false, id, message: "Invalid Request: params must be an object" };
    return { ok: true, msg: m as Message };
  }
  if (id !== null && ("result" in m || "error" in m)) return { ok: true, msg: m as Message }; // a response to a server request
  return { ok: false, id, message: "Invalid Request: neither a request, a notification nor a response" };
}

export interface StdioServerOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Default project_root of the tools. */
  cwd?: string;
  /** The real server (default: `createServer(defaultDeps({ cwd }))` from server.ts, loaded lazily). */
  load?: (cwd: string) => Promise<{ server: McpServer; close: () => Promise<void> }>;
  maxLineBytes?: number;
  graceMs?: number;
}

async function loadDefault(cwd: string): Promise<{ server: McpServer; close: () => Promise<void> }> {
  const { createServer, defaultDeps } = await import("./server.ts");
  const deps = defaultDeps({ cwd });
  const server = createServer(deps);
  return {
    server,
    close: async () => {
      await deps.tracer?.close();
      await server.close();
    },
  };
}

/** The transport the real McpServer is connected to: messages come from the input reader. */
class RelayTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly deliver: (message: JSONRPCMessage) => void) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    this.deliver(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

export class StdioServer {
  private readonly cwd: string;
  private readonly maxLine: number;
  private readonly grace: number;
  private initialize: Message | undefined;
  private initialized = false;
  private relay: RelayTransport | undefined;
  private loading: Promise<RelayTransport | undefined> | undefined;
  private queue: Message[] = [];
  private idle: ReturnType<typeof setTimeout> | undefined;
  private closeServer: (() => Promise<void>) | undefined;
  /** Stand-in string → the exact digits of an integer id too big for a JS number. */
  private readonly bigIds = new Map<string, string>();
  private bigIdCount = 0;
  /** Requests handed to the real server and not answered yet. */
  private readonly inflight = new Set<Id>();
  private onAnswered: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  private stopped!: () => void;
  /** Resolves once the input closed and the server stopped. */
  readonly done: Promise<void>;

  constructor(private readonly opts: StdioServerOptions) {
    this.cwd = opts.cwd ? resolve(opts.cwd) : process.cwd();
    this.maxLine = opts.maxLineBytes ?? MAX_LINE_BYTES;
    this.grace = opts.graceMs ?? SHUTDOWN_GRACE_MS;
    this.done = new Promise((r) => (this.stopped = r));
  }

  /** Start reading; returns at once (see `done`). */
  start(): void {
    let parts: Buffer[] = [];
    let size = 0;
    let dropping = false;
    const input = this.opts.input;
    input.on("data", (chunk: Buffer | string) => {
      let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) {
          if (dropping) return;
          size += buf.length;
          if (size > this.maxLine) {
            this.tooLong();
            parts = [];
            size = 0;
            dropping = true;
            return;
          }
          parts.push(buf);
          return;
        }
        const head = buf.subarray(0, nl);
        buf = buf.subarray(nl + 1);
        if (dropping) {
          dropping = false;
          continue;
        }
        if (size + head.length > this.maxLine) this.tooLong();
        else this.line(parts.length === 0 ? head.toString("utf8") : Buffer.concat([...parts, head]).toString("utf8"));
        parts = [];
        size = 0;
      }
    });
    // a last message without its newline is a whole message once the input ends
    const last = () => {
      if (!dropping && size > 0 && size <= this.maxLine) this.line(Buffer.concat(parts).toString("utf8"));
      parts = [];
      size = 0;
      void this.shutdown();
    };
    input.on("end", last);
    input.on("close", last);
    input.on("error", () => void this.shutdown());
  }

  private write(msg: unknown): void {
    const m = msg as { id?: unknown };
    const digits = typeof m.id === "string" ? this.bigIds.get(m.id) : undefined;
    // the exact digits the client sent (JSON.rawJSON writes them as a number, unrounded)
    const out = digits === undefined ? msg : { ...(msg as object), id: rawJSON(digits) };
    this.opts.output.write(`${JSON.stringify(out)}\n`);
    if (digits !== undefined && ("result" in m || "error" in m)) this.bigIds.delete(m.id as string);
  }

  private bigId(digits: string): string {
    const key = `sqrl-big-id-${++this.bigIdCount}:${digits}`;
    this.bigIds.set(key, digits);
    return key;
  }

  private fail(id: Id | null, code: number, message: string): void {
    this.write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private tooLong(): void {
    this.fail(null, INVALID_REQUEST, `Invalid Request: a message longer than ${this.maxLine} bytes was dropped`);
  }

  private line(raw: string): void {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = parseMessage(text, (d) => this.bigId(d));
    } catch {
      this.fail(null, PARSE_ERROR, "Parse error: the line is not valid JSON");
      return;
    }
    const checked = checkMessage(parsed);
    if (!checked.ok) {
      this.fail(checked.id, INVALID_REQUEST, checked.message);
      return;
    }
    this.onMessage(checked.msg);
  }

  private handleEarly(msg: Message): boolean {
    const params = msg.params as Record<string, unknown> | undefined;
    if (msg.method === "initialize" && msg.id !== undefined) {
      this.initialize = msg;
      this.write({ jsonrpc: "2.0", id: msg.id, result: initializeResult(params?.protocolVersion) });
      return true;
    }
    if (msg.method === "notifications/initialized") {
      this.initialized = true;
      return true;
    }
    if (msg.method === "tools/list" && msg.id !== undefined && params?.cursor === undefined) {
      this.write({ jsonrpc: "2.0", id: msg.id, result: { tools: MANIFEST.tools } });
      setImmediate(() => void this.load());
      return true;
    }
    if (msg.method === "ping" && msg.id !== undefined) {
      this.write({ jsonrpc: "2.0", id: msg.id, result: {} });
      return true;
    }
    return false;
  }

  private onMessage(msg: Message): void {
    if (this.closing) return;
    if (!this.relay && !this.loading && this.handleEarly(msg)) {
      clearTimeout(this.idle);
      if (!this.loading) this.idle = setTimeout(() => void this.load(), IDLE_LOAD_MS);
      return;
    }
    if (msg.id !== undefined && msg.method !== undefined) this.inflight.add(msg.id);
    if (this.relay) this.relay.onmessage?.(msg as JSONRPCMessage);
    else {
      this.queue.push(msg);
      void this.load();
    }
  }

  /** An answer from the real server: written unless it answers the replayed initialize. */
  private deliver(message: JSONRPCMessage): void {
    const id = "id" in message && !("method" in message) ? (message.id as Id) : undefined;
    if (id === REPLAY_ID) return; // the replayed initialize's answer was already given
    this.write(message);
    if (id !== undefined && this.inflight.delete(id) && this.inflight.size === 0) this.onAnswered?.();
  }

  private load(): Promise<RelayTransport | undefined> {
    this.loading ??= (async () => {
      const loaded = await (this.opts.load ?? loadDefault)(this.cwd);
      const transport = new RelayTransport((m) => this.deliver(m));
      await loaded.server.connect(transport);
      this.closeServer = loaded.close;
      if (this.initialize) transport.onmessage?.({ ...this.initialize, id: REPLAY_ID } as JSONRPCMessage);
      if (this.initialized) transport.onmessage?.({ jsonrpc: "2.0", method: "notifications/initialized" });
      this.relay = transport;
      const pending = this.queue;
      this.queue = [];
      for (const m of pending) transport.onmessage?.(m as JSONRPCMessage);
      log.debug(`sqrl mcp: server ready (cwd ${this.cwd})`);
      return transport;
    })().catch((err: unknown) => {
      log.error(`sqrl mcp: could not start the server: ${(err as Error).message}`);
      for (const m of this.queue)
        if (m.id !== undefined && m.method !== undefined)
          this.fail(m.id, -32603, "Internal error: the sqrl MCP server could not start; see its stderr");
      this.queue = [];
      void this.shutdown();
      return undefined;
    });
    return this.loading;
  }

  /** Input closed (or a signal): answer what is in flight within the grace, then stop. */
  shutdown(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.idle);
      try {
        if (this.loading) await Promise.race([this.loading, Bun.sleep(this.grace)]);
        if (this.inflight.size > 0) {
          await new Promise<void>((done) => {
            const timer = setTimeout(done, this.grace);
            this.onAnswered = () => {
              clearTimeout(timer);
              done();
            };
          });
        }
        await Promise.race([this.closeServer?.(), Bun.sleep(200)]);
      } catch (err) {
        log.debug(`sqrl mcp: shutdown: ${(err as Error).message}`);
      }
      this.stopped();
    })();
    return this.closing;
  }
}

/** `sqrl mcp`: serve stdin/stdout; the process exits once stdin closes (within a second). */
export async function runStdioServer(opts: { cwd?: string } = {}): Promise<void> {
  keepStdoutForProtocol();
  const server = new StdioServer({ input: process.stdin, output: process.stdout, cwd: opts.cwd });
  server.start();
  process.on("SIGINT", () => void server.shutdown());
  process.on("SIGTERM", () => void server.shutdown());
  void server.done.then(() => process.exit(0));
}
