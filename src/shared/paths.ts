/**
 * Where sqrl's files live: the per-machine folder (SQRL_HOME) and each project's `.ctx/`.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { sqrlEnv } from "./env.ts";

/**
 * The user's home folder: `HOME` as it is now, else the OS's answer. Read when asked (Bun's `homedir()`
 * keeps the value the process started with), so a test run that moves HOME moves every path below;
 * the rest of src/ asks here, never `os.homedir()` (test/shared/real-home.test.ts holds that).
 */
export function userHome(): string {
  const fromEnv = process.env.HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : homedir();
}

/** Root of sqrl's per-machine files: `SQRL_HOME`, else `~/.sqrl`. */
export function sqrlHome(): string {
  const fromEnv = sqrlEnv("SQRL_HOME");
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".sqrl");
}

export const homePaths = {
  config: () => join(sqrlHome(), "config.toml"),
  userDb: () => join(sqrlHome(), "user.db"),
  /** Capture state shared by all projects: per-file read offsets, LLM usage. */
  stateDb: () => join(sqrlHome(), "state.db"),
  projects: () => join(sqrlHome(), "projects.json"),
  daemon: () => join(sqrlHome(), "daemon.json"),
  engine: () => join(sqrlHome(), "memory-service.json"),
  logs: () => join(sqrlHome(), "logs"),
  /** Files for this user alone while the daemon runs (0700): `sqrl ui`'s one-time login files. */
  run: () => join(sqrlHome(), "run"),
  /** Each project's last `sqrl eval` (0700 folder, 0600 files named by a hash of the project root). */
  evals: () => join(sqrlHome(), "evals"),
};

export const projectPaths = {
  ctx: (root: string) => join(root, ".ctx"),
  db: (root: string) => join(root, ".ctx", "data.db"),
  views: (root: string) => join(root, ".ctx", "views"),
  view: (root: string, name: string) => join(root, ".ctx", "views", `${name}.json`),
  shared: (root: string) => join(root, ".ctx", "shared"),
};

/** Claude Code's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeHome(): string {
  const fromEnv = process.env.CLAUDE_CONFIG_DIR;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".claude");
}

/** Codex CLI's home: `CODEX_HOME`, else `~/.codex`. */
export function codexHome(): string {
  const fromEnv = process.env.CODEX_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".codex");
}

/** OpenCode's data folder (its `opencode.db`): `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`. */
export function opencodeDataDir(): string {
  const xdg = process.env.XDG_DATA_HOME;
  return join(xdg && xdg.length > 0 ? resolve(xdg) : join(userHome(), ".local", "share"), "opencode");
}

/** OpenCode's config folder (its `opencode.json`): `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. */
export function opencodeConfigDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg && xdg.length > 0 ? resolve(xdg) : join(userHome(), ".config"), "opencode");
}

/** GitHub Copilot CLI's home: `COPILOT_HOME` (its own variable), else `~/.copilot`. */
export function copilotHome(): string {
  const fromEnv = process.env.COPILOT_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".copilot");
}

/** Qwen Code's home: `QWEN_HOME` (Qwen Code's own variable), else `~/.qwen`. */
export function qwenHome(): string {
  const fromEnv = process.env.QWEN_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".qwen");
}

/** Gemini CLI's home: `GEMINI_HOME` (sqrl's own override, for tests), else `~/.gemini`. */
export function geminiHome(): string {
  const fromEnv = process.env.GEMINI_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(userHome(), ".gemini");
}
