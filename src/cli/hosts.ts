/**
 * `sqrl hosts add|remove|list`: register the sqrl MCP server (and the Claude Code hook) with the agents'
 * hosts.
 */
import { defineCommand } from "citty";
import { resolve } from "node:path";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { confirm } from "./confirm.ts";
import { resolveProjectDir } from "./init-project.ts";

type HostsModule = typeof import("../mcp/hosts/index.ts");
const loadHosts = (): Promise<HostsModule> => import("../mcp/hosts/index.ts");

const commonArgs = {
  hosts: {
    type: "positional",
    required: false,
    description: "claude, codex, gemini, cursor, qwen, opencode, copilot or all (space- or comma-separated)",
  },
  scope: {
    type: "string",
    description:
      "user (default: your own config, every repo, no approval prompt) or project (the repo's shared files, portable `sqrl` command; codex has only user)",
  },
  path: { type: "string", default: ".", description: "The project (default: the current directory)" },
  json: { type: "boolean", description: "Print the result as JSON" },
} as const;

/** The project the hosts are set up for: the registered project containing `path`, else `path` itself. */
function projectRootOf(path: string): string {
  const dir = resolveProjectDir(path);
  return projectForPath(dir, listProjects()) ?? resolve(dir);
}

function describeChange(c: { host: string; scope: string; path: string; action: string; via: string }): string {
  const what: Record<string, string> = {
    added: "registered sqrl in",
    updated: "updated sqrl in",
    unchanged: "sqrl already registered in",
    removed: "removed sqrl from",
    absent: "sqrl was not in",
  };
  return `${c.host} (${c.scope}): ${what[c.action] ?? c.action} ${c.path}${c.via === "cli" ? " (via the claude CLI)" : ""}`;
}

function describeHook(action: string, path: string): string {
  const what: Record<string, string> = {
    added: "installed the SessionStart hook in",
    updated: "updated the SessionStart hook in",
    unchanged: "SessionStart hook already in",
    removed: "removed the SessionStart hook from",
    absent: "no SessionStart hook in",
  };
  return `claude: ${what[action] ?? action} ${path}`;
}

export interface HostSetupResult {
  changes: Array<{ host: string; scope: string; path: string; action: string; via: string }>;
  hook?: { path: string; action: string };
  lines: string[];
}

/**
 * Register sqrl with the named hosts for `projectRoot`; for Claude Code also the SessionStart hook,
 * in the same scope (asked once; `--yes` or `hook` answer; an installed hook is kept current without
 * asking again). Shared by `sqrl hosts add` and `sqrl init --hosts`.
 */
export async function addHostsFor(
  projectRoot: string,
  hosts: string | string[],
  opts: { scope?: string; yes: boolean; hook?: boolean },
): Promise<HostSetupResult> {
  const mod = await loadHosts();
  const names = mod.parseHostList(hosts);
  const scope = mod.parseScope(opts.scope);
  const changes = mod.addHosts(names, { projectRoot, scope });
  const lines = changes.map(describeChange);
  let hook: HostSetupResult["hook"];
  if (names.includes("claude") && opts.hook !== false) {
    const claudeScope = mod.scopeFor(mod.HOSTS.claude, scope);
    const path = mod.claudeSettingsPath(projectRoot, claudeScope);
    const installed = mod.sessionStartHookCommand(path) !== undefined;
    const wanted =
      installed ||
      opts.hook === true ||
      (await confirm(`Install the Claude Code SessionStart hook (style + brief at session start) in ${path}?`, {
        yes: opts.yes,
      }));
    if (wanted) {
      hook = mod.installSessionStartHook(path, mod.sessionStartHookLine(claudeScope));
      lines.push(describeHook(hook.action, hook.path));
    } else lines.push("claude: SessionStart hook not installed (pass --yes or --hook to install it)");
  }
  if (names.includes("qwen") && opts.hook !== false) {
    // Qwen Code runs Claude Code's hook format (hooks.SessionStart in its settings.json, the
    // hookSpecificOutput.additionalContext answer): the same hook, beside sqrl's MCP entry.
    const qwenScope = mod.scopeFor(mod.HOSTS.qwen, scope);
    const path = mod.qwenSettingsPath(projectRoot, qwenScope);
    const installed = mod.sessionStartHookCommand(path) !== undefined;
    const wanted =
      installed ||
      opts.hook === true ||
      (await confirm(`Install the Qwen Code SessionStart hook (style + brief at session start) in ${path}?`, {
        yes: opts.yes,
      }));
    if (wanted) {
      const q = mod.installSessionStartHook(
        path,
        mod.sessionStartHookLine(qwenScope),
        qwenScope === "user" ? 0o600 : 0o644,
      );
      lines.push(describeHook(q.action, q.path).replace(/^claude:/, "qwen:"));
    } else lines.push("qwen: SessionStart hook not installed (pass --yes or --hook to install it)");
  }
  const all = mod.listHosts(names, { projectRoot });
  for (const entry of all) {
    if (entry.registered && entry.waiting && changes.some((c) => c.host === entry.host && c.scope === entry.scope))
      lines.push(`${entry.host} (${entry.scope}): ${entry.waiting}`);
  }
  for (const c of changes) {
    const other = all.find((e) => e.host === c.host && e.scope !== c.scope && e.registered);
    if (other)
      lines.push(
        `note: sqrl is registered with ${c.host} in ${other.scope} scope too (${other.path}); keep one: sqrl hosts remove ${c.host} --scope ${other.scope}`,
      );
  }
  if (changes.some((c) => c.scope === "project") && !mod.sqrlOnPath()) {
    lines.push(
      "note: the project's files run `sqrl` from PATH (no path of this machine goes into git), and sqrl is not on PATH here: add its folder to PATH, or use --scope user",
    );
  }
  return { changes, hook, lines };
}

/** `sqrl init --hosts …`: the lines init prints. */
export async function setupHostsForInit(projectRoot: string, hosts: string, yes: boolean): Promise<string[]> {
  return (await addHostsFor(projectRoot, hosts, { yes })).lines;
}

const add = defineCommand({
  meta: {
    name: "add",
    description:
      "Register sqrl's MCP server with hosts: claude, codex, gemini, cursor, qwen, opencode, copilot (or all)",
  },
  args: {
    ...commonArgs,
    hook: {
      type: "boolean",
      description: "Claude Code and Qwen Code: install the SessionStart hook (--no-hook to skip; asked otherwise)",
    },
    yes: { type: "boolean", alias: "y", description: "Answer yes to every question" },
  },
  async run({ args }) {
    const res = await addHostsFor(projectRootOf(args.path), args._ as string[], {
      scope: args.scope,
      yes: args.yes === true,
      hook: args.hook as boolean | undefined,
    });
    process.stdout.write(
      args.json
        ? `${JSON.stringify({ changes: res.changes, hook: res.hook ?? null }, null, 2)}\n`
        : `${res.lines.join("\n")}\n`,
    );
  },
});

const remove = defineCommand({
  meta: {
    name: "remove",
    description: "Remove sqrl from hosts' configs (and the Claude Code / Qwen Code hook), leaving everything else",
  },
  args: commonArgs,
  async run({ args }) {
    const mod = await loadHosts();
    const root = projectRootOf(args.path);
    const names = mod.parseHostList(args._ as string[]);
    const scope = mod.parseScope(args.scope);
    const changes = mod.removeHosts(names, { projectRoot: root, scope });
    const hook = names.includes("claude")
      ? mod.removeSessionStartHook(mod.claudeSettingsPath(root, mod.scopeFor(mod.HOSTS.claude, scope)))
      : undefined;
    const qwenHook = names.includes("qwen")
      ? mod.removeSessionStartHook(mod.qwenSettingsPath(root, mod.scopeFor(mod.HOSTS.qwen, scope)))
      : undefined;
    const lines = [
      ...changes.map(describeChange),
      ...(hook ? [describeHook(hook.action, hook.path)] : []),
      ...(qwenHook ? [describeHook(qwenHook.action, qwenHook.path).replace(/^claude:/, "qwen:")] : []),
    ];
    process.stdout.write(
      args.json ? `${JSON.stringify({ changes, hook: hook ?? null }, null, 2)}\n` : `${lines.join("\n")}\n`,
    );
  },
});

const list = defineCommand({
  meta: { name: "list", description: "Show where sqrl is registered (all hosts unless named)" },
  args: commonArgs,
  async run({ args }) {
    const mod = await loadHosts();
    const root = projectRootOf(args.path);
    const words = args._ as string[];
    const names = words.length > 0 ? mod.parseHostList(words) : [...mod.HOST_NAMES];
    const scope = mod.parseScope(args.scope);
    const entries = mod.listHosts(names, { projectRoot: root, scope });
    const hooks = names.includes("claude")
      ? mod.HOSTS.claude.scopes
          .filter((s) => scope === undefined || s === scope)
          .map((s) => ({
            scope: s,
            path: mod.claudeSettingsPath(root, s),
            command: mod.sessionStartHookCommand(mod.claudeSettingsPath(root, s)) ?? null,
          }))
      : [];
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ entries, claude_session_start_hooks: hooks }, null, 2)}\n`);
      return;
    }
    const lines = entries.map((e) => {
      const state = e.registered
        ? e.current
          ? "registered"
          : `registered (other command: ${[e.command, ...(e.args ?? [])].join(" ")})`
        : "not registered";
      return `${e.host.padEnd(7)} ${e.scope.padEnd(8)} ${state}  ${e.path}${e.waiting ? `\n                 ${e.waiting}` : ""}`;
    });
    for (const h of hooks)
      lines.push(
        `claude  ${`hook:${h.scope}`.padEnd(8)} ${h.command ? `SessionStart: ${h.command}` : "no SessionStart hook"}  ${h.path}`,
      );
    process.stdout.write(`${lines.join("\n")}\n`);
  },
});

export default defineCommand({
  meta: {
    name: "hosts",
    description:
      "Register sqrl with MCP hosts (Claude Code, Codex CLI, Gemini CLI, Cursor, Qwen Code, OpenCode, Copilot CLI)",
  },
  subCommands: { add, remove, list },
});
