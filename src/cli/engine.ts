/**
 * `sqrl engine`: the memory engine's HTTP API in the foreground (normally started and supervised by
 * the daemon). Writes memory-service.json (0600) once listening and removes it on SIGTERM/SIGINT, or
 * when the process that started it goes away.
 */
import { defineCommand } from "citty";
import { UsageError } from "../shared/errors.ts";
import { configureLog, log as rootLog } from "../shared/log.ts";

const log = rootLog.child({ service: "engine" });
import { removeRuntimeInfo, writeRuntimeInfo } from "../shared/runtime-files.ts";
import { nowIso } from "../shared/time.ts";
import { VERSION } from "../version.ts";

export default defineCommand({
  meta: {
    name: "engine",
    description: "Run the memory engine's HTTP API in the foreground (the daemon starts it for you)",
  },
  args: {
    port: { type: "string", description: "Port on 127.0.0.1 (default: a free one)" },
  },
  async run({ args }) {
    // Read before anything slow: a parent that dies during start-up must still count as gone.
    const parent = process.ppid;
    const port = args.port === undefined ? 0 : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number (0-65535), got "${args.port}".`);
    const { processConfig } = await import("../shared/config.ts");
    const config = processConfig(); // read once here, passed down
    configureLog(config.get()["log.level"]);
    const { startEngineServer } = await import("../engine/server.ts");
    const server = await startEngineServer({ port, config });
    writeRuntimeInfo("engine", {
      pid: process.pid,
      host: "127.0.0.1",
      port: server.port,
      token: server.token,
      started_at: nowIso(),
      version: VERSION,
    });
    log.info(`engine listening on 127.0.0.1:${server.port} (pid ${process.pid})`);
    // The exact tokenizer takes ~0.5 s to load: start it now (after listening) rather than on the first request.
    const counter = config.get()["tokens.counter"];
    if (counter === "o200k") void import("../shared/tokens.ts").then((t) => t.loadTokenCounter("o200k"));
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`engine stopping (${signal})`);
      // A distilling run of claude/codex must not outlive the engine.
      (await import("../engine/llm/cli-run.ts")).stopCliRuns();
      removeRuntimeInfo("engine");
      await server.stop();
      process.exit(0);
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
    // Never outlive the process that started it (the daemon, killed hard or crashed): an orphaned
    // engine would hold its port and runtime file for nobody.
    setInterval(() => {
      if (process.ppid !== parent) void shutdown("its parent exited");
    }, 500).unref();
    await new Promise<never>(() => {}); // serve until signalled
  },
});
