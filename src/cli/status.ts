/**
 * `sqrl status`: the daemon, the engine and every registered project's memory at a glance.
 */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { resolveProjectDir } from "./init-project.ts";
import { readProjectStatus, type ProjectStatus } from "./project-status.ts";
import { ProjectNotRegisteredError, SqrlError } from "../shared/errors.ts";
import { loadConfig } from "../shared/config.ts";
import { llmAccount } from "./llm-account.ts";
import { describeUsage } from "../engine/llm/usage-report.ts";

/** When the waiting events will be distilled: the daemon's next batch, or what starts it. */
export interface EngineNextRun {
  daemon_running: boolean;
  /** Upper bound in seconds until the next batch (daemon running), else null. */
  within_s: number | null;
  text: string;
}

async function engineNextRun(unprocessed: number): Promise<EngineNextRun> {
  const [{ readRuntimeInfo }, { daemonHealthy }, { processConfig }] = await Promise.all([
    import("../shared/runtime-files.ts"),
    import("../shared/daemon-launch.ts"),
    import("../shared/config.ts"),
  ]);
  const info = readRuntimeInfo("daemon");
  const running = info !== undefined && (await daemonHealthy(info));
  const interval = processConfig().get()["daemon.batch_interval_seconds"];
  if (running)
    return {
      daemon_running: true,
      within_s: interval,
      text:
        unprocessed > 0
          ? `the engine takes them within ${interval} s (the daemon batches every ${interval} s)`
          : `the daemon is running; new events reach the engine within ${interval} s`,
    };
  return {
    daemon_running: false,
    within_s: null,
    text:
      unprocessed > 0
        ? "the daemon is not running: `sqrl daemon start` (or any read command such as `sqrl context`) sends them to the engine"
        : "the daemon is not running (`sqrl daemon start`)",
  };
}

function checksLine(c: ProjectStatus["checks"]): string {
  if (c.of === 0) return "nothing to check yet";
  const part = c.checked < c.of ? ` (${c.checked} of ${c.of} checked; \`sqrl doctor\` checks all)` : "";
  const stale = c.stale > 0 ? "; `sqrl doctor` lists the stale ones" : "";
  return `against the code: ${c.verified} verified, ${c.moved} moved, ${c.stale} stale, ${c.unverifiable} unverifiable${part}; ${c.decayed} decayed for disuse${stale}`;
}

interface HostLine {
  host: string;
  scope: string;
  state: "ready" | "waiting" | "other_command";
  detail: string | null;
}

/** Where sqrl is registered for this project, and whether each host will start it. */
async function hostStates(root: string): Promise<HostLine[]> {
  const mod = await import("../mcp/hosts/index.ts");
  return mod.HOST_NAMES.flatMap((name): HostLine[] => {
    try {
      return mod
        .listHosts([name], { projectRoot: root })
        .filter((e) => e.registered)
        .map((e) => ({
          host: e.host,
          scope: e.scope,
          state: e.waiting ? "waiting" : e.current ? "ready" : "other_command",
          detail:
            e.waiting ??
            (e.current
              ? null
              : `runs ${[e.command, ...(e.args ?? [])].join(" ")}; sqrl hosts add ${e.host} --scope ${e.scope} updates it`),
        }));
    } catch (err) {
      // A host config sqrl cannot read must not hide the rest of the status.
      return [{ host: name, scope: "?", state: "other_command", detail: (err as Error).message }];
    }
  });
}

function renderHosts(hosts: HostLine[]): string {
  if (hosts.length === 0) return "none registered (sqrl hosts add claude codex)";
  return hosts.map((h) => `${h.host} (${h.scope}) ${h.state === "ready" ? "ready" : h.detail}`).join("\n          ");
}

const REASONS: Record<string, string> = {
  unavailable: "the model is not reachable",
  signed_out: "signed out",
  rate_limited: "rate-limited",
  timeout: "timed out",
};

/** How many episodes wait for the model, why, and until when they may. */
function waitingLine(w: ProjectStatus["llm"]["waiting"]): string {
  if (w.count === 0) return "";
  const why = Object.entries(w.by_reason)
    .map(([r, n]) => `${n} ${REASONS[r] ?? r}`)
    .join(", ");
  const next = w.next_try_at ? `; next try ${w.next_try_at}` : "";
  return `; ${w.count} episode${w.count === 1 ? " waits" : "s wait"} for it (${why}${next}); \`sqrl reprocess --offline-pending\` extracts them offline now`;
}

function render(s: ProjectStatus & { engine_next_run: EngineNextRun }, hosts: HostLine[], account?: string): string {
  const lines = [
    `Project   ${s.project_id}`,
    `Events    ${s.events.total} stored, ${s.events.unprocessed} waiting for the engine; ${s.engine_next_run.text}`,
    `Episodes  ${s.episodes.total} (${s.episodes.open} open)`,
    `Memory    ${s.memory_items.total} items${
      s.memory_items.total > 0
        ? `: ${Object.entries(s.memory_items.by_type)
            .map(([t, n]) => `${n} ${t}`)
            .join(", ")}`
        : ""
    }`,
    `Checked   ${checksLine(s.checks)}`,
    `Global    ${s.user_style_items} user-style items in user.db`,
    `LLM       ${describeUsage(s.llm)}${waitingLine(s.llm.waiting)}`,
    ...(account ? [`          ${account}`] : []),
    `Views     ${s.views.length === 0 ? "none generated yet" : s.views.map((v) => `${v.name} (${v.stale ? "stale" : "fresh"}, ${v.generated_at})`).join(", ")}`,
    `Hosts     ${renderHosts(hosts)}`,
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * What the running daemon knows is wrong (disk full, this project's database failing), in a line
 * each; empty when all is well or no daemon runs (status never starts one, and waits at most 1 s).
 */
async function daemonHealth(root: string): Promise<string[]> {
  const { callApi } = await import("../shared/api-client.ts");
  let s: { last_error: string | null; projects: Array<{ project_id: string; last_error: string | null }> };
  try {
    s = await callApi("daemon", "/status", { timeoutMs: 1000 });
  } catch {
    return [];
  }
  const out: string[] = [];
  if (s.last_error) out.push(`daemon: ${s.last_error}`);
  const mine = s.projects.find((p) => p.project_id === root)?.last_error;
  if (mine) out.push(mine.includes("sqrl doctor") ? `UNHEALTHY: ${mine}` : `last batch error: ${mine}`);
  return out;
}

export default defineCommand({
  meta: { name: "status", description: "What sqrl has stored for a project (works with the daemon down)" },
  args: {
    path: { type: "positional", required: false, default: ".", description: "Project folder or a path inside it" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  async run({ args }) {
    const dir = resolveProjectDir(args.path);
    const root = existsSync(projectPaths.db(dir)) ? dir : projectForPath(dir, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(dir);
    const cfg = loadConfig();
    let snapshot: ProjectStatus;
    try {
      snapshot = readProjectStatus(root, cfg);
    } catch (err) {
      // a damaged data.db: say which file and what to do, never a stack trace
      throw new SqrlError(
        "damaged_db",
        `${projectPaths.db(root)} cannot be read (${(err as Error).message}). Run \`sqrl doctor ${root}\` for what to do.`,
      );
    }
    const status = { ...snapshot, engine_next_run: await engineNextRun(snapshot.events.unprocessed) };
    const health = await daemonHealth(root);
    const hosts = await hostStates(root);
    const account = await llmAccount(cfg);
    if (args.json)
      process.stdout.write(
        `${JSON.stringify({ ...status, llm: { ...status.llm, account: account?.json ?? null }, health, hosts }, null, 2)}\n`,
      );
    else
      process.stdout.write(
        `${render(status, hosts, account?.line)}${health.length > 0 ? `Health    ${health.join("\n          ")}\n` : ""}`,
      );
  },
});
