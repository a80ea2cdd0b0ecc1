/**
 * The Claude Code SessionStart hook entry in `.claude/settings.json`: added, found and removed (Qwen Code
 * reads the same format from its own settings.json).
 */
import { join } from "node:path";
import { ConfigError } from "../../shared/errors.ts";
import { claudeHome } from "../../shared/paths.ts";
import { isObject, readJsonObject, writeJsonObject, type ChangeAction, type JsonObject } from "./config-files.ts";

/** The SessionStart sources the hook runs on: a new session, /clear, and after compaction. */
export const SESSION_START_MATCHER = "startup|clear|compact";
const MARKER = "hook claude-session-start";

/**
 * Where the hook lives: the user's `settings.json` in the Claude config folder (user scope: every
 * repo, this machine's binary) or the project's `.claude/settings.json` (project scope: shared
 * through git, so the command is the portable `sqrl` on PATH).
 */
export function claudeSettingsPath(projectRoot: string, scope: "user" | "project" = "project"): string {
  return scope === "user" ? join(claudeHome(), "settings.json") : join(projectRoot, ".claude", "settings.json");
}

/** Quote one argv word for the shell Claude Code runs hook commands with. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function hookCommandLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}

interface HookRef {
  group: JsonObject;
  hook: JsonObject;
}

function sessionStartGroups(path: string, doc: JsonObject): unknown[] {
  const hooks = doc.hooks ?? {};
  if (!isObject(hooks))
    throw new ConfigError(
      `${path}: "hooks" is not an object; sqrl left it untouched. Fix it by hand.`,
      "bad_host_config",
    );
  const groups = hooks.SessionStart ?? [];
  if (!Array.isArray(groups))
    throw new ConfigError(
      `${path}: "hooks.SessionStart" is not a list; sqrl left it untouched. Fix it by hand.`,
      "bad_host_config",
    );
  return groups;
}

function findOurs(groups: unknown[]): HookRef[] {
  const out: HookRef[] = [];
  for (const group of groups) {
    if (!isObject(group) || !Array.isArray(group.hooks)) continue;
    for (const hook of group.hooks)
      if (isObject(hook) && typeof hook.command === "string" && hook.command.includes(MARKER))
        out.push({ group, hook });
  }
  return out;
}

/**
 * Install (or refresh) sqrl's SessionStart hook in a Claude Code settings file (`path`), keeping
 * every other setting and hook. Idempotent.
 */
export function installSessionStartHook(
  path: string,
  commandLine: string,
  /** File mode; default: private (0600) in the Claude config folder, shared (0644) in a repo. */
  mode?: number,
): { path: string; action: ChangeAction } {
  const doc = readJsonObject(path);
  const groups = sessionStartGroups(path, doc);
  const ours = findOurs(groups);
  if (ours.length === 1 && ours[0]!.hook.command === commandLine) return { path, action: "unchanged" };
  const next = structuredClone(doc);
  const nextGroups = sessionStartGroups(path, next);
  const found = findOurs(nextGroups);
  if (found.length > 0) {
    found[0]!.hook.command = commandLine;
    for (const extra of found.slice(1))
      extra.group.hooks = (extra.group.hooks as unknown[]).filter((h) => h !== extra.hook);
  } else {
    nextGroups.push({
      matcher: SESSION_START_MATCHER,
      hooks: [{ type: "command", command: commandLine, timeout: 10 }],
    });
  }
  const hooks = (isObject(next.hooks) ? next.hooks : {}) as JsonObject;
  hooks.SessionStart = nextGroups.filter((g) => !isObject(g) || !Array.isArray(g.hooks) || g.hooks.length > 0);
  next.hooks = hooks;
  writeJsonObject(path, next, mode ?? (path.startsWith(claudeHome()) ? 0o600 : 0o644));
  return { path, action: found.length > 0 ? "updated" : "added" };
}

/** Remove sqrl's hook; emptied groups, lists and the file itself (if nothing else is left) go too. */
export function removeSessionStartHook(path: string): { path: string; action: ChangeAction } {
  const doc = readJsonObject(path);
  const groups = sessionStartGroups(path, doc);
  if (findOurs(groups).length === 0) return { path, action: "absent" };
  const next = structuredClone(doc);
  const kept = sessionStartGroups(path, next)
    .map((g) =>
      isObject(g) && Array.isArray(g.hooks)
        ? {
            ...g,
            hooks: g.hooks.filter((h) => !(isObject(h) && typeof h.command === "string" && h.command.includes(MARKER))),
          }
        : g,
    )
    .filter((g) => !isObject(g) || !Array.isArray(g.hooks) || g.hooks.length > 0);
  const hooks = { ...(next.hooks as JsonObject) };
  if (kept.length > 0) hooks.SessionStart = kept;
  else delete hooks.SessionStart;
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  writeJsonObject(path, next, 0o644);
  return { path, action: "removed" };
}

/** The hook command installed in the settings file `path`, if any. */
export function sessionStartHookCommand(path: string): string | undefined {
  const ours = findOurs(sessionStartGroups(path, readJsonObject(path)));
  return ours[0]?.hook.command as string | undefined;
}
