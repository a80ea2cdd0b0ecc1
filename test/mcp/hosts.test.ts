import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { claudeHost } from "../../src/mcp/hosts/claude.ts";
import {
  claudeSettingsPath,
  installSessionStartHook,
  removeSessionStartHook,
  sessionStartHookCommand,
} from "../../src/mcp/hosts/claude-hook.ts";
import { codexHost } from "../../src/mcp/hosts/codex.ts";
import { cursorHost } from "../../src/mcp/hosts/cursor.ts";
import { geminiHost } from "../../src/mcp/hosts/gemini.ts";
import type { HostAdapter, HostScope } from "../../src/mcp/hosts/host-types.ts";
import { parseHostList } from "../../src/mcp/hosts/index.ts";
import { tempDir } from "../helpers/sqrl.ts";

const ENV_KEYS = ["HOME", "SQRL_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_HOME", "SQRL_CLAUDE_BIN"] as const;
let saved: Record<string, string | undefined> = {};
let tmp: ReturnType<typeof tempDir>;
let root: string;

beforeEach(() => {
  saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  tmp = tempDir("sqrl-hosts-");
  root = join(tmp.path, "repo");
  mkdirSync(root, { recursive: true });
  process.env.HOME = join(tmp.path, "home"); // the real claude CLI below must not touch the real home
  mkdirSync(process.env.HOME, { recursive: true });
  process.env.CLAUDE_CONFIG_DIR = join(tmp.path, "claude");
  process.env.CODEX_HOME = join(tmp.path, "codex");
  process.env.GEMINI_HOME = join(tmp.path, "gemini");
  delete process.env.SQRL_HOME; // the default home: Codex entries carry SQRL_HOME only when it is set
  process.env.SQRL_CLAUDE_BIN = ""; // edit files directly (the CLI path is tested when `claude` exists)
});

afterEach(() => {
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  tmp.cleanup();
});

const server = { command: "/opt/sqrl/bin/sqrl", args: ["mcp"] };
const ctx = (scope: HostScope, command = server.command) => ({
  projectRoot: root,
  scope,
  server: { command, args: server.args },
});

const jsonHosts: Array<[string, HostAdapter, HostScope]> = [
  ["claude project (.mcp.json)", claudeHost, "project"],
  ["claude user (.claude.json)", claudeHost, "user"],
  ["gemini project", geminiHost, "project"],
  ["gemini user", geminiHost, "user"],
  ["cursor project", cursorHost, "project"],
];

describe("JSON host configs", () => {
  for (const [label, host, scope] of jsonHosts) {
    test(`${label}: other entries preserved, idempotent, updated, removable`, () => {
      const path = host.status(ctx(scope)).path;
      const original = {
        theme: "dark",
        mcpServers: { other: { command: "other-server", args: ["--x"] } },
        nested: { keep: [1, 2] },
      };
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, JSON.stringify(original, null, 2));

      expect(host.add(ctx(scope)).action).toBe("added");
      const after = JSON.parse(readFileSync(path, "utf8"));
      expect(after.theme).toBe("dark");
      expect(after.nested).toEqual({ keep: [1, 2] });
      expect(after.mcpServers.other).toEqual(original.mcpServers.other);
      expect(after.mcpServers.sqrl.command).toBe(server.command);
      expect(after.mcpServers.sqrl.args.slice(0, 1)).toEqual(["mcp"]);
      expect(host.status(ctx(scope))).toMatchObject({ registered: true, current: true });

      const bytes = readFileSync(path, "utf8");
      expect(host.add(ctx(scope)).action).toBe("unchanged");
      expect(readFileSync(path, "utf8")).toBe(bytes);

      expect(host.add(ctx(scope, "/new/place/sqrl")).action).toBe("updated");
      expect(JSON.parse(readFileSync(path, "utf8")).mcpServers.sqrl.command).toBe("/new/place/sqrl");
      expect(host.status(ctx(scope))).toMatchObject({ registered: true, current: false });

      expect(host.remove(ctx(scope)).action).toBe("removed");
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(original);
      expect(host.remove(ctx(scope)).action).toBe("absent");
      expect(host.status(ctx(scope)).registered).toBe(false);
    });
  }

  test("a config sqrl created is deleted again on remove", () => {
    const path = geminiHost.add(ctx("project")).path;
    expect(path).toBe(join(root, ".gemini", "settings.json"));
    expect(existsSync(path)).toBe(true);
    geminiHost.remove(ctx("project"));
    expect(existsSync(path)).toBe(false);
  });

  test("cursor's project entry names the project through Cursor's own ${workspaceFolder}, not this machine's path", () => {
    const path = cursorHost.add(ctx("project")).path;
    expect(JSON.parse(readFileSync(path, "utf8")).mcpServers.sqrl.args).toEqual([
      "mcp",
      "--project",
      "${workspaceFolder}",
    ]);
  });

  test("extra fields the user added to sqrl's entry survive an update", () => {
    const path = join(root, ".mcp.json");
    writeFileSync(
      path,
      JSON.stringify({
        mcpServers: { sqrl: { type: "stdio", command: "/old/sqrl", args: ["mcp"], env: { SQRL_LOG_LEVEL: "4" } } },
      }),
    );
    expect(claudeHost.add(ctx("project")).action).toBe("updated");
    expect(JSON.parse(readFileSync(path, "utf8")).mcpServers.sqrl).toEqual({
      type: "stdio",
      command: server.command,
      args: ["mcp"],
      env: { SQRL_LOG_LEVEL: "4" },
    });
  });

  test("invalid JSON is never overwritten", () => {
    const path = join(root, ".mcp.json");
    writeFileSync(path, "{ not json");
    expect(() => claudeHost.add(ctx("project"))).toThrow(/not valid JSON/);
    expect(readFileSync(path, "utf8")).toBe("{ not json");
  });
});

describe("Codex config.toml", () => {
  const ORIGINAL = [
    "# my codex settings",
    'model = "o4-mini" # inline comment',
    "",
    "[mcp_servers.github]",
    'command = "gh-mcp"',
    'args = ["serve"]',
    "",
    "# profiles below",
    "[profiles.fast]",
    'model = "gpt-5-mini"',
    "",
  ].join("\n");

  test("adds [mcp_servers.sqrl] keeping comments and other entries; idempotent; removes exactly", () => {
    const path = join(process.env.CODEX_HOME!, "config.toml");
    mkdirSync(process.env.CODEX_HOME!, { recursive: true });
    writeFileSync(path, ORIGINAL);
    expect(codexHost.add(ctx("user")).action).toBe("added");
    const text = readFileSync(path, "utf8");
    expect(text.startsWith(ORIGINAL)).toBe(true);
    const doc = parse(text) as any;
    expect(doc.mcp_servers.sqrl).toEqual({ command: server.command, args: ["mcp"] });
    expect(doc.mcp_servers.github).toEqual({ command: "gh-mcp", args: ["serve"] });
    expect(doc.profiles.fast.model).toBe("gpt-5-mini");

    expect(codexHost.add(ctx("user")).action).toBe("unchanged");
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(codexHost.status(ctx("user"))).toMatchObject({ registered: true, current: true });

    expect(codexHost.remove(ctx("user")).action).toBe("removed");
    expect(readFileSync(path, "utf8")).toBe(ORIGINAL);
    expect(codexHost.remove(ctx("user")).action).toBe("absent");
  });

  test("an existing sqrl table in the middle is replaced in place, user's env kept", () => {
    const path = join(process.env.CODEX_HOME!, "config.toml");
    mkdirSync(process.env.CODEX_HOME!, { recursive: true });
    const before = [
      "[mcp_servers.sqrl]",
      'command = "/old/sqrl"',
      'args = ["mcp"]',
      "",
      "[mcp_servers.sqrl.env]",
      'SQRL_LOG_LEVEL = "4"',
      "",
      "# keep me",
      "[mcp_servers.other]",
      'command = "other"',
      "",
    ].join("\n");
    writeFileSync(path, before);
    expect(codexHost.add(ctx("user")).action).toBe("updated");
    const text = readFileSync(path, "utf8");
    const doc = parse(text) as any;
    expect(doc.mcp_servers.sqrl).toEqual({ command: server.command, args: ["mcp"], env: { SQRL_LOG_LEVEL: "4" } });
    expect(doc.mcp_servers.other).toEqual({ command: "other" });
    expect(text).toContain("# keep me\n[mcp_servers.other]");
    codexHost.remove(ctx("user"));
    expect(parse(readFileSync(path, "utf8"))).toEqual({ mcp_servers: { other: { command: "other" } } });
  });

  test("a file sqrl created is removed again; invalid TOML is left untouched", () => {
    const path = codexHost.add(ctx("user")).path;
    expect(existsSync(path)).toBe(true);
    codexHost.remove(ctx("user"));
    expect(existsSync(path)).toBe(false);
    mkdirSync(process.env.CODEX_HOME!, { recursive: true });
    writeFileSync(path, "model = [unclosed");
    expect(() => codexHost.add(ctx("user"))).toThrow(/not valid TOML/);
    expect(readFileSync(path, "utf8")).toBe("model = [unclosed");
  });
});

describe("Claude Code SessionStart hook in .claude/settings.json", () => {
  test("installed beside other hooks, idempotent, updated, removed back to the original", () => {
    const path = join(root, ".claude", "settings.json");
    mkdirSync(join(root, ".claude"), { recursive: true });
    const original = {
      permissions: { allow: ["Bash(npm test)"] },
      hooks: {
        SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "echo other" }] }],
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "guard.sh" }] }],
      },
    };
    writeFileSync(path, JSON.stringify(original, null, 2));
    const line = "/opt/sqrl/bin/sqrl hook claude-session-start";
    expect(installSessionStartHook(path, line).action).toBe("added");
    const after = JSON.parse(readFileSync(path, "utf8"));
    expect(after.permissions).toEqual(original.permissions);
    expect(after.hooks.PreToolUse).toEqual(original.hooks.PreToolUse);
    expect(after.hooks.SessionStart[0]).toEqual(original.hooks.SessionStart[0]);
    expect(after.hooks.SessionStart[1].hooks[0]).toMatchObject({ type: "command", command: line });
    expect(sessionStartHookCommand(path)).toBe(line);

    expect(installSessionStartHook(path, line).action).toBe("unchanged");
    expect(installSessionStartHook(path, "/new/sqrl hook claude-session-start").action).toBe("updated");
    expect(JSON.parse(readFileSync(path, "utf8")).hooks.SessionStart).toHaveLength(2);

    expect(removeSessionStartHook(path).action).toBe("removed");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(original);
    expect(removeSessionStartHook(path).action).toBe("absent");
  });

  test("a settings file that only held the hook is deleted on remove", () => {
    const path = claudeSettingsPath(root, "project");
    installSessionStartHook(path, "sqrl hook claude-session-start");
    removeSessionStartHook(path);
    expect(existsSync(path)).toBe(false);
  });

  test("user scope: the hook goes to the Claude config folder's settings.json, private to this user", () => {
    const path = claudeSettingsPath(root, "user");
    expect(path).toBe(join(tmp.path, "claude", "settings.json"));
    expect(installSessionStartHook(path, "/opt/sqrl/bin/sqrl hook claude-session-start").action).toBe("added");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(existsSync(join(root, ".claude"))).toBe(false);
  });
});

describe("host names", () => {
  test("lists, all, and unknown names", () => {
    expect(parseHostList("claude,codex")).toEqual(["claude", "codex"]);
    expect(parseHostList(["gemini", "cursor,claude"])).toEqual(["gemini", "cursor", "claude"]);
    expect(parseHostList("all")).toEqual(["claude", "codex", "gemini", "cursor", "qwen", "opencode", "copilot"]);
    expect(() => parseHostList("claude,vim")).toThrow(/Unknown host "vim"/);
  });
});

describe("Claude Code through its own CLI", () => {
  // The CLI pinned for test/hosts (npm install --prefix test/hosts --no-save), else one on PATH.
  const pinned = join(import.meta.dir, "..", "hosts", "node_modules", ".bin", "claude");
  const cli = existsSync(pinned) ? pinned : Bun.which("claude");
  test.skipIf(!cli)(
    "claude mcp add/remove (project and user scope) via the real `claude` CLI (skipped: no claude CLI)",
    () => {
      process.env.SQRL_CLAUDE_BIN = cli!;
      for (const scope of ["user", "project"] as const) {
        const change = claudeHost.add(ctx(scope));
        expect(change.via).toBe("cli");
        expect(JSON.parse(readFileSync(change.path, "utf8")).mcpServers.sqrl).toMatchObject({
          command: server.command,
          args: ["mcp"],
        });
        expect(claudeHost.add(ctx(scope)).action).toBe("unchanged");
        expect(claudeHost.remove(ctx(scope)).action).toBe("removed");
        expect(claudeHost.status(ctx(scope)).registered).toBe(false);
      }
      expect(existsSync(join(root, ".mcp.json"))).toBe(false); // the CLI's emptied file does not stay behind
    },
  );
});
