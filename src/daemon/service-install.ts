/**
 * `sqrl daemon install|uninstall`: a systemd user unit (Linux) or launchd agent (macOS) running `sqrl daemon
 * run`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { UsageError } from "../shared/errors.ts";
import { writeFileAtomic } from "../shared/fs-atomic.ts";
import { sqrlCommand } from "../shared/daemon-launch.ts";
import { homePaths, userHome } from "../shared/paths.ts";

export type ServicePlatform = "linux" | "darwin";

export const SYSTEMD_UNIT_NAME = "sqrl.service";
export const LAUNCHD_LABEL = "dev.sqrl.daemon";

/** Environment variables that locate sqrl's and the agents' files; carried into the service when set. */
const CARRIED_ENV = [
  "SQRL_HOME",
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "GEMINI_HOME",
  "QWEN_HOME",
  "COPILOT_HOME",
  "XDG_DATA_HOME",
  "XDG_CONFIG_HOME",
  "SQRL_LOG_LEVEL",
] as const;

export interface ServiceFile {
  platform: ServicePlatform;
  path: string;
  content: string;
  /** Commands that load / unload it in the service manager. */
  activate: string[][];
  deactivate: string[][];
}

export function currentPlatform(): ServicePlatform {
  if (process.platform === "linux") return "linux";
  if (process.platform === "darwin") return "darwin";
  throw new UsageError(
    `sqrl daemon install supports Linux (systemd) and macOS (launchd), not ${process.platform}. Run \`sqrl daemon start\` instead.`,
    "unsupported_platform",
  );
}

export function parsePlatform(value: string | undefined): ServicePlatform {
  if (value === undefined || value === "") return currentPlatform();
  if (value === "linux" || value === "darwin") return value;
  throw new UsageError(`--platform must be linux or darwin, not "${value}".`);
}

function home(): string {
  return userHome();
}

/** systemd user units: `$XDG_CONFIG_HOME/systemd/user` (default ~/.config/systemd/user). */
export function systemdUnitPath(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  const base = xdg && xdg.length > 0 ? resolve(xdg) : join(home(), ".config");
  return join(base, "systemd", "user", SYSTEMD_UNIT_NAME);
}

export function launchdPlistPath(): string {
  return join(home(), "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
}

function carriedEnv(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of CARRIED_ENV) {
    const v = process.env[name];
    if (v && v.length > 0) out.push([name, name === "SQRL_LOG_LEVEL" ? v : resolve(v)]);
  }
  return out;
}

/** Quote one systemd command-line word (double quotes; `\` and `"` escaped, `%` doubled, `$` doubled). */
function systemdQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) && !word.includes("%") && !word.includes("$")) return word;
  return `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$")}"`;
}

export function systemdUnit(argv: readonly string[]): string {
  const env = carriedEnv().map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`)}`);
  return [
    "[Unit]",
    "Description=sqrl daemon: local-first memory for coding agents",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${argv.map(systemdQuote).join(" ")}`,
    "Restart=on-failure",
    "RestartSec=5",
    "KillSignal=SIGTERM",
    "TimeoutStopSec=20",
    ...env,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function launchdPlist(argv: readonly string[]): string {
  const env = carriedEnv();
  const logDir = homePaths.logs();
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`,
    `<plist version="1.0">`,
    `<dict>`,
    `  <key>Label</key>`,
    `  <string>${LAUNCHD_LABEL}</string>`,
    `  <key>ProgramArguments</key>`,
    `  <array>`,
    ...argv.map((a) => `    <string>${xmlEscape(a)}</string>`),
    `  </array>`,
    `  <key>RunAtLoad</key>`,
    `  <true/>`,
    `  <key>KeepAlive</key>`,
    `  <dict>`,
    `    <key>SuccessfulExit</key>`,
    `    <false/>`,
    `  </dict>`,
    `  <key>ThrottleInterval</key>`,
    `  <integer>5</integer>`,
    `  <key>ProcessType</key>`,
    `  <string>Background</string>`,
    `  <key>StandardOutPath</key>`,
    `  <string>${xmlEscape(join(logDir, "daemon.out"))}</string>`,
    `  <key>StandardErrorPath</key>`,
    `  <string>${xmlEscape(join(logDir, "daemon.out"))}</string>`,
  ];
  if (env.length > 0) {
    lines.push(`  <key>EnvironmentVariables</key>`, `  <dict>`);
    for (const [k, v] of env) lines.push(`    <key>${xmlEscape(k)}</key>`, `    <string>${xmlEscape(v)}</string>`);
    lines.push(`  </dict>`);
  }
  lines.push(`</dict>`, `</plist>`, ``);
  return lines.join("\n");
}

/** The service file for `platform`, running `<this binary> daemon run` with restart on failure. */
export function serviceFile(platform: ServicePlatform): ServiceFile {
  const argv = sqrlCommand(["daemon", "run"]);
  if (platform === "linux") {
    return {
      platform,
      path: systemdUnitPath(),
      content: systemdUnit(argv),
      activate: [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT_NAME],
      ],
      deactivate: [["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT_NAME]],
    };
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : 501;
  const path = launchdPlistPath();
  return {
    platform,
    path,
    content: launchdPlist(argv),
    activate: [["launchctl", "bootstrap", `gui/${uid}`, path]],
    deactivate: [["launchctl", "bootout", `gui/${uid}/${LAUNCHD_LABEL}`]],
  };
}

export interface CommandOutcome {
  command: string;
  ok: boolean;
  detail: string;
}

function runAll(commands: string[][]): CommandOutcome[] {
  return commands.map((argv) => {
    const res = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", timeout: 15_000 });
    const detail = res.error ? res.error.message : `${res.stderr ?? ""}${res.stdout ?? ""}`.trim();
    return { command: argv.join(" "), ok: !res.error && res.status === 0, detail };
  });
}

/** Write the unit/plist; with `activate`, load it in the service manager too. */
export function installService(
  platform: ServicePlatform,
  activate: boolean,
): { file: ServiceFile; outcomes: CommandOutcome[] } {
  const file = serviceFile(platform);
  writeFileAtomic(file.path, file.content, 0o644);
  return { file, outcomes: activate ? runAll(file.activate) : [] };
}

/** Unload (with `activate`) and remove the unit/plist. */
export function uninstallService(
  platform: ServicePlatform,
  activate: boolean,
): { file: ServiceFile; existed: boolean; outcomes: CommandOutcome[] } {
  const file = serviceFile(platform);
  const existed = existsSync(file.path);
  const outcomes = activate && existed ? runAll(file.deactivate) : [];
  rmSync(file.path, { force: true });
  if (activate && existed && platform === "linux") outcomes.push(...runAll([["systemctl", "--user", "daemon-reload"]]));
  return { file, existed, outcomes };
}
