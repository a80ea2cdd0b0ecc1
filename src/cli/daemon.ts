/**
 * `sqrl daemon run|start|stop|restart|status|install|uninstall|logs`: the machine's one daemon, its service
 * unit and its log.
 */
import { defineCommand } from "citty";
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { type DaemonStatus, ROUTES } from "../shared/api.ts";
import { callRoute } from "../shared/api-client.ts";
import { isThisHomesDaemon } from "../shared/daemon-identity.ts";
import { DAEMON_OUT_MARK, daemonHealthy, daemonOutPath, ensureDaemon } from "../shared/daemon-launch.ts";
import { UsageError } from "../shared/errors.ts";
import { LOG_SERVICES } from "../shared/log.ts";
import { missingProjectNote } from "../shared/projects.ts";
import {
  daemonLockPath,
  isPidAlive,
  readLockPid,
  readRuntimeInfo,
  removeRuntimeInfo,
} from "../shared/runtime-files.ts";
import { relativeTime } from "../shared/time.ts";

const jsonArg = { json: { type: "boolean", description: "Print as JSON" } } as const;

function out(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts =
    d > 0 ? [`${d}d`, `${h}h`] : h > 0 ? [`${h}h`, `${m}m`] : m > 0 ? [`${m}m`, `${s % 60}s`] : [`${s % 60}s`];
  return parts.join(" ");
}

export function renderStatus(s: DaemonStatus): string {
  const lines: string[] = [];
  lines.push(
    `daemon    running (pid ${s.pid}, 127.0.0.1:${s.port}, up ${formatDuration(s.uptime_s)}, sqrl ${s.version})`,
  );
  const e = s.engine;
  lines.push(
    `engine    ${e.healthy ? "healthy" : "DOWN"}${e.pid ? ` (pid ${e.pid}${e.port ? `, port ${e.port}` : ""})` : ""}, ${e.restarts} restart${e.restarts === 1 ? "" : "s"}${e.last_error ? `; last error: ${e.last_error}` : ""}`,
  );
  const queued = s.projects.reduce((n, p) => n + p.queue_depth, 0);
  lines.push(
    `projects  ${s.projects.length} watched, ${queued} event${queued === 1 ? "" : "s"} waiting for the engine`,
  );
  for (const p of s.projects) {
    if (p.missing) {
      lines.push(`  ${p.project_id}: ${missingProjectNote(p.project_id)}`);
      continue;
    }
    const batch = p.last_batch_at ? `last batch ${relativeTime(p.last_batch_at)}` : "no batch sent yet";
    lines.push(
      `  ${p.project_id}: ${p.events} events, ${p.queue_depth} queued, ${batch}${p.last_error ? `; last error: ${p.last_error}` : ""}`,
    );
  }
  lines.push(`sources`);
  for (const src of s.sources)
    lines.push(
      `  ${src.name.padEnd(7)} ${src.enabled ? "on " : "off"} ${src.path} (${src.files} file${src.files === 1 ? "" : "s"})`,
    );
  lines.push(`error     ${s.last_error ?? "none"}`);
  return lines.join("\n");
}

/** Remove daemon.lock (a file; anything else there is left for the user, and `daemon start` names it). */
function removeLock(): void {
  try {
    rmSync(daemonLockPath(), { force: true });
  } catch {
    // not a file
  }
}

/**
 * Stop this home's daemon. daemon.json and daemon.lock only hold pids; a pid is signalled only once it
 * is shown to be this home's daemon (isThisHomesDaemon), never another home's daemon that now has it.
 */
async function stopDaemon(
  timeoutMs: number,
): Promise<{ state: "not_running" | "stopped" | "forced"; pid?: number; stale?: boolean; removed?: string[] }> {
  const info = readRuntimeInfo("daemon");
  const candidates = [...new Set([info?.pid, readLockPid()].filter((p): p is number => p !== undefined))];
  let pid: number | undefined;
  for (const p of candidates) if (await isThisHomesDaemon(p)) pid ??= p;
  if (pid === undefined) {
    const removed = [info && "daemon.json", existsSync(daemonLockPath()) && "daemon.lock"].filter(
      (f): f is string => typeof f === "string",
    );
    if (info) removeRuntimeInfo("daemon", info.pid);
    removeLock();
    return { state: "not_running", stale: removed.length > 0, ...(removed.length > 0 ? { removed } : {}) };
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isPidAlive(pid)) return { state: "stopped", pid };
    await Bun.sleep(50);
  }
  process.kill(pid, "SIGKILL");
  const engine = readRuntimeInfo("engine");
  if (engine && isPidAlive(engine.pid)) {
    try {
      process.kill(engine.pid, "SIGKILL");
    } catch {
      // already gone
    }
    removeRuntimeInfo("engine", engine.pid);
  }
  removeRuntimeInfo("daemon", pid);
  removeLock();
  return { state: "forced", pid };
}

async function startDaemon(timeoutS: number, json: boolean): Promise<void> {
  const running = readRuntimeInfo("daemon");
  if (running && (await daemonHealthy(running))) {
    if (json) out(JSON.stringify({ state: "already_running", pid: running.pid, port: running.port }));
    else out(`sqrl daemon is already running (pid ${running.pid}, 127.0.0.1:${running.port}).`);
    return;
  }
  const info = await ensureDaemon({ timeoutMs: timeoutS * 1000 });
  if (json) out(JSON.stringify({ state: "started", pid: info.pid, port: info.port }));
  else out(`sqrl daemon started (pid ${info.pid}, 127.0.0.1:${info.port}). Logs: \`sqrl daemon logs -f\`.`);
}

function parseSeconds(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--${name} must be a positive number of seconds, not "${String(value)}".`);
  return n;
}

const run = defineCommand({
  meta: { name: "run", description: "Run the daemon in the foreground (for service managers; Ctrl-C stops it)" },
  args: {
    detached: { type: "boolean", description: "Log only to ~/.sqrl/logs/daemon.log (used by `sqrl daemon start`)" },
  },
  async run({ args }) {
    const { runDaemon } = await import("../daemon/daemon.ts");
    const res = await runDaemon({
      detached: args.detached === true,
      // The page's "What the agent sees" runs the MCP tools' own code, wired here (the daemon imports no src/mcp).
      agentView: async (engine, project, ask) =>
        (await import("../mcp/agent-view.ts")).agentAnswers(engine, project, ask),
    });
    if (res.kind === "already_running") {
      process.stderr.write(
        `sqrl: a daemon is already running (pid ${res.pid}${res.info ? `, 127.0.0.1:${res.info.port}` : ""}); not starting another. Stop it with \`sqrl daemon stop\`.\n`,
      );
      process.exit(1); // a refusal is a failure: scripts and service managers must see it
      return;
    }
    process.exit(0);
  },
});

const start = defineCommand({
  meta: { name: "start", description: "Start the daemon in the background and wait until it answers" },
  args: { ...jsonArg, timeout: { type: "string", description: "Seconds to wait for it to answer (default 15)" } },
  async run({ args }) {
    await startDaemon(parseSeconds(args.timeout, "timeout", 15), args.json === true);
  },
});

const stop = defineCommand({
  meta: { name: "stop", description: "Stop the daemon (SIGTERM; SIGKILL after --timeout seconds)" },
  args: { ...jsonArg, timeout: { type: "string", description: "Seconds to wait for a graceful stop (default 20)" } },
  async run({ args }) {
    const res = await stopDaemon(parseSeconds(args.timeout, "timeout", 20) * 1000);
    if (args.json) return out(JSON.stringify(res));
    if (res.state === "not_running")
      out(`sqrl daemon is not running${res.removed ? ` (removed a stale ${res.removed.join(" and ")})` : ""}.`);
    else if (res.state === "stopped") out(`sqrl daemon stopped (pid ${res.pid}).`);
    else out(`sqrl daemon (pid ${res.pid}) did not stop in time and was killed.`);
  },
});

const restart = defineCommand({
  meta: { name: "restart", description: "Stop the daemon if it runs, then start it" },
  args: { ...jsonArg, timeout: { type: "string", description: "Seconds for each of stop and start (default 20)" } },
  async run({ args }) {
    const t = parseSeconds(args.timeout, "timeout", 20);
    const stopped = await stopDaemon(t * 1000);
    if (!args.json && stopped.state !== "not_running") out(`sqrl daemon stopped (pid ${stopped.pid}).`);
    await startDaemon(t, args.json === true);
  },
});

const status = defineCommand({
  meta: { name: "status", description: "Daemon pid, port, uptime, projects, sources, queue depth, engine health" },
  args: jsonArg,
  async run({ args }) {
    const info = readRuntimeInfo("daemon");
    if (!info || !(await daemonHealthy(info))) {
      if (args.json) out(JSON.stringify({ running: false }));
      else out(`sqrl daemon is not running. Start it with \`sqrl daemon start\`.`);
      process.exitCode = 1;
      return;
    }
    const s = await callRoute("daemon", ROUTES.status, {}, { info });
    if (args.json) out(JSON.stringify({ running: true, ...s }, null, 2));
    else out(renderStatus(s));
  },
});

const serviceArgs = {
  print: { type: "boolean", description: "Print the unit/plist instead of writing it" },
  platform: { type: "string", description: "linux (systemd) or darwin (launchd); default: this machine" },
  activate: {
    type: "boolean",
    default: true,
    description: "Also load it with systemctl --user / launchctl (--no-activate: only write the file)",
  },
} as const;

const install = defineCommand({
  meta: {
    name: "install",
    description: "Install the daemon as a systemd user service (Linux) or launchd agent (macOS)",
  },
  args: serviceArgs,
  async run({ args }) {
    const svc = await import("../daemon/service-install.ts");
    const platform = svc.parsePlatform(args.platform);
    if (args.print) {
      const file = svc.serviceFile(platform);
      process.stdout.write(file.content);
      return;
    }
    const { file, outcomes } = svc.installService(platform, args.activate !== false);
    out(`Wrote ${file.path}`);
    for (const o of outcomes)
      out(`${o.ok ? "ran" : "FAILED"}: ${o.command}${!o.ok && o.detail ? ` (${o.detail.split("\n")[0]})` : ""}`);
    const failed = outcomes.some((o) => !o.ok);
    if (args.activate === false || failed)
      out(`To load it yourself: ${file.activate.map((c) => c.join(" ")).join(" && ")}`);
    if (failed) {
      // The file is there but no service manager runs it: that is not installed.
      process.stderr.write(
        `sqrl: the service file is written but the service manager did not load it, so the daemon will not start at login. Fix the step that failed above, or run \`sqrl daemon start\` instead.\n`,
      );
      process.exitCode = 1;
    }
  },
});

const uninstall = defineCommand({
  meta: { name: "uninstall", description: "Remove the systemd user service / launchd agent" },
  args: serviceArgs,
  async run({ args }) {
    const svc = await import("../daemon/service-install.ts");
    const platform = svc.parsePlatform(args.platform);
    if (args.print) {
      out(svc.serviceFile(platform).path);
      return;
    }
    const { file, existed, outcomes } = svc.uninstallService(platform, args.activate !== false);
    out(existed ? `Removed ${file.path}` : `${file.path} was not installed`);
    for (const o of outcomes)
      out(`${o.ok ? "ran" : "FAILED"}: ${o.command}${!o.ok && o.detail ? ` (${o.detail.split("\n")[0]})` : ""}`);
  },
});

function lastLines(path: string, n: number, keep: (line: string) => boolean): string {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n").filter((l) => l !== "" && keep(l));
  return lines.slice(-n).join("\n");
}

/** The last `n` lines daemon.out holds since the last start's mark; undefined when there are none. */
function lastStartOutput(n: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(daemonOutPath(), "utf8");
  } catch {
    return undefined;
  }
  const mark = text.lastIndexOf(DAEMON_OUT_MARK);
  const since = mark < 0 ? text : text.slice(text.indexOf("\n", mark) + 1);
  const lines = since.split("\n").filter((l) => l.trim() !== "");
  return lines.length > 0 && n > 0 ? lines.slice(-n).join("\n") : undefined;
}

const logs = defineCommand({
  meta: {
    name: "logs",
    description:
      "Print the daemon log (~/.sqrl/logs/daemon.log, daemon and engine records) and what the last started daemon printed itself (logs/daemon.out); -f follows the log",
  },
  args: {
    follow: { type: "boolean", alias: "f", description: "Keep printing new lines (Ctrl-C stops)" },
    lines: { type: "string", alias: "n", description: "How many last lines to print first (default 100)" },
    service: {
      type: "string",
      description: `Only records of this service (${LOG_SERVICES.join(", ")})`,
    },
  },
  async run({ args }) {
    const [{ daemonLogPath }, { serviceOfLine }] = await Promise.all([
      import("../daemon/log-file.ts"),
      import("../shared/log.ts"),
    ]);
    const path = daemonLogPath();
    const n = args.lines === undefined ? 100 : Number(args.lines);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--lines must be a whole number, not "${args.lines}".`);
    const service = args.service;
    if (service !== undefined && !(LOG_SERVICES as readonly string[]).includes(service))
      throw new UsageError(`Unknown service "${service}". Use one of: ${LOG_SERVICES.join(", ")}.`);
    const keep = service ? (line: string) => serviceOfLine(line) === service : () => true;
    const started = service === undefined ? lastStartOutput(n) : undefined;
    if (existsSync(path)) {
      const text = lastLines(path, n, keep);
      if (text) out(text);
    } else if (!args.follow && !started) {
      out(`No daemon log yet at ${path}. Start the daemon with \`sqrl daemon start\`.`);
      return;
    }
    // What the last detached daemon printed itself (why it stopped at once, a crash): not in daemon.log.
    if (started) out(`--- ${daemonOutPath()} (the daemon's own output since its last start) ---\n${started}`);
    if (args.follow) await follow(path, keep);
  },
});

/** Print the lines appended to `path` that `keep` accepts, following rotation (file replaced or shrunk). */
async function follow(path: string, keep: (line: string) => boolean): Promise<never> {
  let position = existsSync(path) ? statSync(path).size : 0;
  let ino = existsSync(path) ? statSync(path).ino : -1;
  let partial = "";
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    await Bun.sleep(250);
    if (!existsSync(path)) continue;
    const st = statSync(path);
    if (st.ino !== ino || st.size < position) {
      ino = st.ino;
      position = 0;
      partial = "";
    }
    if (st.size === position) continue;
    const fd = openSync(path, "r");
    try {
      let read: number;
      while ((read = readSync(fd, buf, 0, buf.length, position)) > 0) {
        position += read;
        const lines = (partial + buf.subarray(0, read).toString("utf8")).split("\n");
        partial = lines.pop() ?? "";
        const shown = lines.filter(keep);
        if (shown.length > 0) process.stdout.write(`${shown.join("\n")}\n`);
      }
    } finally {
      closeSync(fd);
    }
  }
}

export default defineCommand({
  meta: { name: "daemon", description: "Run, start, stop, inspect and install the sqrl daemon (one per machine)" },
  subCommands: { run, start, stop, restart, status, install, uninstall, logs },
});
