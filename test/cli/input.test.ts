/**
 * Input and help through the binary (issue 29 item 5): empty tasks, unknown tool and service names,
 * help that lists only flags that work, an export to a folder that does not exist, and a host
 * removal that leaves no empty folder behind.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MCP_TOOL_NAMES } from "../../src/mcp/tool-names.ts";
import { createServer } from "../../src/mcp/server.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { DaemonBridge } from "../../src/mcp/daemon-bridge.ts";
import { SessionDedup } from "../../src/mcp/session-dedup.ts";
import { isolatedEnv, runSqrl, tempDir } from "../helpers/sqrl.ts";

const dir = tempDir("sqrl-input-");
const env = isolatedEnv(dir.path);
const repo = join(dir.path, "repo");
beforeAll(() => {
  mkdirSync(repo);
  Bun.spawnSync(["git", "init", "-q", repo]);
  expect(runSqrl(["init", repo, "--yes", "--no-backfill"], { env }).code).toBe(0);
});
afterAll(() => {
  // A read command starts the daemon on demand; stop it, or it outlives the test with its home deleted.
  runSqrl(["daemon", "stop"], { env });
  dir.cleanup();
});
const sqrl = (args: string[]) => runSqrl(args, { env, cwd: repo });

test.each([[""], ["   "]])("context %p is bad usage that names no internal field", (task) => {
  const r = sqrl(["context", task]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("The task is empty");
  expect(r.stderr).not.toContain("task_description");
});

test("log --tool with an unknown name exits 2 listing the seven tools", () => {
  const r = sqrl(["log", "--tool", "bogus"]);
  expect(r.code).toBe(2);
  for (const t of MCP_TOOL_NAMES) expect(r.stderr).toContain(t);
  expect(sqrl(["log", "--tool", "get_task_context"]).code).toBe(0);
});

test("the tool names the CLI checks are the tools the MCP server registers", async () => {
  const bridge = new DaemonBridge({ kind: "engine", target: () => undefined, start: false, timeoutMs: 1000 });
  const server = createServer({ bridge, dedup: new SessionDedup(), cwd: repo, projects: () => [repo] });
  const client = new Client({ name: "t", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a);
  const listed = (await client.listTools()).tools.map((t) => t.name).sort();
  await client.close();
  expect(listed).toEqual([...MCP_TOOL_NAMES].sort());
});

test("daemon logs --service with an unknown name exits 2 listing the services", () => {
  const r = sqrl(["daemon", "logs", "--service", "bogus"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("daemon, api, capture");
  expect(sqrl(["daemon", "logs", "--service", "engine"]).code).toBe(0);
});

test("search --help lists only flags the command accepts (plain and coloured help alike)", () => {
  const { NO_COLOR: _n, CI: _c, ...plainEnv } = env;
  const coloured = runSqrl(["search", "--help"], { env: plainEnv, cwd: repo }).stdout;
  const esc = String.fromCharCode(27); // a colour code may stand before the flag
  expect(coloured).not.toMatch(new RegExp(`(^|[\\s,]|${esc}\\[[0-9;]*m)-top\\b`, "m"));
  const help = sqrl(["search", "--help"]).stdout;
  const flags = [...help.matchAll(/(?:^|\s|,)(--?[a-z][\w-]*)/gm)].map((m) => m[1]!);
  expect(flags).toContain("--top-k");
  expect(flags).not.toContain("-top");
  expect(flags).toContain("--top"); // the word-long alias, as it is typed
  for (const f of flags.filter((x) => x !== "--help" && !x.startsWith("--json"))) {
    const r = sqrl(["search", "x", f === "--json" ? f : `${f}=1`]);
    expect({ f, unknown: r.stderr.includes("Unknown flag") || r.stderr.includes("unknown flag") }).toEqual({
      f,
      unknown: false,
    });
  }
});

test("export -o into a folder that does not exist says so in one line, no raw ENOENT", () => {
  const r = sqrl(["export", "-o", "/nonexistent/dir/x.jsonl"]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("/nonexistent/dir does not exist");
  expect(r.stderr).not.toContain("ENOENT");
  expect(r.stderr).not.toContain("unexpected");
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
});

test("hosts remove gemini --scope project leaves no empty .gemini/ behind; a folder with other files stays", () => {
  expect(sqrl(["hosts", "add", "gemini", "--scope", "project", "--yes"]).code).toBe(0);
  expect(existsSync(join(repo, ".gemini", "settings.json"))).toBe(true);
  expect(sqrl(["hosts", "remove", "gemini", "--scope", "project"]).code).toBe(0);
  expect(existsSync(join(repo, ".gemini"))).toBe(false);

  expect(sqrl(["hosts", "add", "gemini", "--scope", "project", "--yes"]).code).toBe(0);
  writeFileSync(join(repo, ".gemini", "GEMINI.md"), "# notes\n");
  expect(sqrl(["hosts", "remove", "gemini", "--scope", "project"]).code).toBe(0);
  expect(existsSync(join(repo, ".gemini", "GEMINI.md"))).toBe(true);
});
