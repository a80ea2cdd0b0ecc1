import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { consola } from "consola";
import { resolve } from "node:path";
import { log } from "../shared/log.ts";
import { serverManifest } from "./manifest.ts" with { type: "macro" };

/**
 * `sqrl mcp` over stdio. Hosts start it per session and wait for `initialize` + `tools/list`, so
 * those two are answered from the build-time manifest (the real server's own answers, inlined by a
 * Bun macro) before the SDK and zod are even loaded. Right after (or at the first other message) the
 * real `McpServer` from `createServer()` is loaded, replayed the client's `initialize`, and from
 * then on handles everything. stdout carries nothing but protocol; the process exits when stdin closes.
 */
const MANIFEST = await serverManifest();

type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Record<string, unknown> };

const REPLAY_ID = "sqrl-replayed-initialize";
/** Load the real server this long after the last message if no tools/list came (ms). */
const IDLE_LOAD_MS = 30;

/** stdout belongs to the protocol: every logger and stray console.log goes to stderr instead. */
function keepStdoutForProtocol(): void {
  consola.options.stdout = process.stderr;
  consola.options.stderr = process.stderr;
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

function writeMessage(msg: unknown): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

function initializeResult(requested: unknown): Record<string, unknown> {
  const version = typeof requested === "string" && MANIFEST.supportedProtocolVersions.includes(requested) ? requested : MANIFEST.latestProtocolVersion;
  return { protocolVersion: version, capabilities: MANIFEST.capabilities, serverInfo: MANIFEST.serverInfo, instructions: MANIFEST.instructions };
}

/** Requests handed to the real server and not answered yet (stdin may close before they are). */
const inflight = new Set<string | number>();
let onIdle: (() => void) | undefined;

/** The transport the real McpServer is connected to: messages come from the stdin reader below. */
class RelayTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    const id = "id" in message && !("method" in message) ? (message.id as string | number) : undefined;
    if (id === REPLAY_ID) return; // the replayed initialize's answer was already given
    writeMessage(message);
    if (id !== undefined && inflight.delete(id) && inflight.size === 0) onIdle?.();
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/** How long a closed stdin waits for requests still being answered (ms). */
const SHUTDOWN_GRACE_MS = 35_000;

function waitForAnswers(ms: number): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    onIdle = () => {
      clearTimeout(timer);
      done();
    };
  });
}

export async function runStdioServer(opts: { cwd?: string } = {}): Promise<void> {
  keepStdoutForProtocol();
  const cwd = opts.cwd ? resolve(opts.cwd) : process.cwd();
  let initialize: Message | undefined;
  let initialized = false;
  let relay: RelayTransport | undefined;
  let loading: Promise<RelayTransport> | undefined;
  let queue: Message[] = [];
  let idle: ReturnType<typeof setTimeout> | undefined;
  let closeServer: (() => Promise<void>) | undefined;

  const load = (): Promise<RelayTransport> => {
    loading ??= (async () => {
      const { createServer, defaultDeps } = await import("./server.ts");
      const deps = defaultDeps({ cwd });
      const server = createServer(deps);
      const transport = new RelayTransport();
      await server.connect(transport);
      closeServer = async () => {
        await deps.tracer?.close();
        await server.close();
      };
      if (initialize) transport.onmessage?.({ ...initialize, id: REPLAY_ID } as JSONRPCMessage);
      if (initialized) transport.onmessage?.({ jsonrpc: "2.0", method: "notifications/initialized" });
      relay = transport;
      const pending = queue;
      queue = [];
      for (const m of pending) transport.onmessage?.(m as JSONRPCMessage);
      log.debug(`sqrl mcp: server ready (cwd ${cwd})`);
      return transport;
    })().catch((err: unknown) => {
      log.error(`sqrl mcp: could not start the server: ${(err as Error).message}`);
      process.exit(1);
    });
    return loading;
  };

  const handleEarly = (msg: Message): boolean => {
    if (msg.method === "initialize" && msg.id !== undefined) {
      initialize = msg;
      writeMessage({ jsonrpc: "2.0", id: msg.id, result: initializeResult(msg.params?.protocolVersion) });
      return true;
    }
    if (msg.method === "notifications/initialized") {
      initialized = true;
      return true;
    }
    if (msg.method === "tools/list" && msg.id !== undefined && msg.params?.cursor === undefined) {
      writeMessage({ jsonrpc: "2.0", id: msg.id, result: { tools: MANIFEST.tools } });
      setImmediate(() => void load());
      return true;
    }
    if (msg.method === "ping" && msg.id !== undefined) {
      writeMessage({ jsonrpc: "2.0", id: msg.id, result: {} });
      return true;
    }
    return false;
  };

  const onMessage = (msg: Message): void => {
    if (!relay && !loading && handleEarly(msg)) {
      clearTimeout(idle);
      if (!loading) idle = setTimeout(() => void load(), IDLE_LOAD_MS);
      return;
    }
    if (msg.id !== undefined && msg.method !== undefined) inflight.add(msg.id);
    if (relay) relay.onmessage?.(msg as JSONRPCMessage);
    else {
      queue.push(msg);
      void load();
    }
  };

  let buffer = "";
  const decoder = new TextDecoder();
  process.stdin.on("data", (chunk: Buffer) => {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (line.trim() === "") continue;
      let msg: Message;
      try {
        msg = JSON.parse(line) as Message;
      } catch (err) {
        log.warn(`sqrl mcp: ignored a line that is not JSON: ${(err as Error).message}`);
        continue;
      }
      onMessage(msg);
    }
  });

  let closing = false;
  const shutdown = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    clearTimeout(idle);
    try {
      if (loading) await loading;
      if (inflight.size > 0) await waitForAnswers(SHUTDOWN_GRACE_MS);
      await closeServer?.();
    } catch (err) {
      log.debug(`sqrl mcp: shutdown: ${(err as Error).message}`);
    }
    process.exit(0);
  };
  process.stdin.on("end", () => void shutdown());
  process.stdin.on("close", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
}
