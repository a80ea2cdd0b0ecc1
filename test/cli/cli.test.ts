import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, runSqrl, tempDir } from "../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let repo: string;

beforeEach(() => {
  dir = tempDir();
  env = isolatedEnv(dir.path);
  repo = join(dir.path, "repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
});
afterEach(() => dir.cleanup());

describe("sqrl binary basics", () => {
  test("--version prints the package version", () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dir, "../../package.json"), "utf8")) as { version: string };
    const r = runSqrl(["--version"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test("--help lists the commands; <cmd> --help shows that command", () => {
    const r = runSqrl(["--help"], { env });
    expect(r.code).toBe(0);
    for (const c of ["init", "config", "status"]) expect(r.stdout).toContain(c);
    const sub = runSqrl(["config", "--help"], { env });
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("set");
  });

  test("--help piped is plain text (no ANSI colour, even without NO_COLOR/CI) and names the full command", () => {
    const { NO_COLOR: _n, CI: _c, ...plainEnv } = env;
    for (const args of [["--help"], ["config", "set", "--help"], ["daemon", "logs", "-h"]]) {
      const r = runSqrl(args, { env: plainEnv });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain("\u001b[");
    }
    expect(runSqrl(["config", "set", "--help"], { env: plainEnv }).stdout).toContain("USAGE sqrl config set ");
    expect(runSqrl(["status", "--help"], { env: plainEnv }).stdout).toContain("USAGE sqrl status ");
  });

  test("unknown command: exit 2, one line that says what to do, no stack", () => {
    const r = runSqrl(["frobnicate"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown command frobnicate");
    expect(r.stderr).toContain("sqrl --help");
    expect(r.stderr).not.toContain("    at ");
  });
});

describe("sqrl init", () => {
  test("creates .ctx, bootstraps ~/.sqrl with private files, registers the absolute path", () => {
    const r = runSqrl(["init", repo, "--yes"], { env });
    expect(r.code).toBe(0);
    expect(existsSync(join(repo, ".ctx", "data.db"))).toBe(true);
    expect(existsSync(join(repo, ".ctx", "views"))).toBe(true);
    const home = env.SQRL_HOME!;
    for (const f of ["config.toml", "user.db", "projects.json"]) {
      expect(existsSync(join(home, f))).toBe(true);
      expect(statSync(join(home, f)).mode & 0o777).toBe(0o600);
    }
    expect(JSON.parse(readFileSync(join(home, "projects.json"), "utf8"))).toEqual({ projects: [repo] });
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toContain(".ctx/");
    // A CLI that is missing is said to be missing, without a billing note meant for a signed-in account.
    expect(r.stdout).toMatch(/^LLM: none turned on/m);
    expect(r.stdout).not.toMatch(/not installed \(llm\.billing/);
  });

  test("is idempotent: a second run changes nothing and registers once", () => {
    runSqrl(["init", repo, "--yes"], { env });
    const gitignore = readFileSync(join(repo, ".gitignore"), "utf8");
    const r = runSqrl(["init", repo, "--yes"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("already registered");
    expect(JSON.parse(readFileSync(join(env.SQRL_HOME!, "projects.json"), "utf8")).projects).toEqual([repo]);
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toBe(gitignore);
  });

  test("without --yes and without a terminal it never prompts and leaves .gitignore alone", () => {
    const r = runSqrl(["init", repo], { env, input: "" });
    expect(r.code).toBe(0);
    expect(existsSync(join(repo, ".gitignore"))).toBe(false);
    expect(r.stdout).toContain("--yes");
  });

  test("defaults to the current directory", () => {
    const r = runSqrl(["init", "--yes"], { env, cwd: repo });
    expect(r.code).toBe(0);
    expect(existsSync(join(repo, ".ctx", "data.db"))).toBe(true);
  });

  test("refuses a file path with a clear message (exit 2)", () => {
    const file = join(dir.path, "notes.txt");
    writeFileSync(file, "x");
    const r = runSqrl(["init", file, "--yes"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is a file, not a directory");
    expect(existsSync(join(dir.path, ".ctx"))).toBe(false);
  });

  test("refuses a missing path (exit 2)", () => {
    const r = runSqrl(["init", join(dir.path, "nope"), "--yes"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("does not exist");
  });

  test("a corrupt projects.json gives a clear error and is kept as it was", () => {
    mkdirSync(env.SQRL_HOME!, { recursive: true });
    const path = join(env.SQRL_HOME!, "projects.json");
    writeFileSync(path, "{ not json");
    const r = runSqrl(["init", repo, "--yes"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("projects.json is not valid JSON");
    expect(r.stderr).toContain("left untouched");
    expect(readFileSync(path, "utf8")).toBe("{ not json");
  });
});

describe("sqrl config", () => {
  test("set, get, list and unset a key", () => {
    expect(runSqrl(["config", "set", "llm.daily_token_cap", "5000"], { env }).code).toBe(0);
    expect(runSqrl(["config", "get", "llm.daily_token_cap"], { env }).stdout.trim()).toBe("5000");
    expect(readFileSync(join(env.SQRL_HOME!, "config.toml"), "utf8")).toContain("daily_token_cap = 5000");
    const list = JSON.parse(runSqrl(["config", "list", "--json"], { env }).stdout) as Array<{
      key: string;
      source: string;
    }>;
    expect(list.find((e) => e.key === "llm.daily_token_cap")?.source).toBe("file");
    expect(list.find((e) => e.key === "llm.provider")?.source).toBe("default");
    expect(runSqrl(["config", "unset", "llm.daily_token_cap"], { env }).code).toBe(0);
    expect(runSqrl(["config", "get", "llm.daily_token_cap"], { env }).stdout.trim()).toBe("200000");
  });

  test("user_id defaults to something non-empty", () => {
    const r = runSqrl(["config", "get", "user_id"], { env: { ...env, USER: "alice" } });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().length).toBeGreaterThan(0);
  });

  test("unknown key: exit 2 and the list of valid keys", () => {
    const r = runSqrl(["config", "set", "llm.nope", "1"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown config key "llm.nope"');
    expect(r.stderr).toContain("llm.provider");
  });

  test("bad value: exit 2 and the valid values", () => {
    const r = runSqrl(["config", "set", "llm.provider", "gpt"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("none, anthropic, openai_compatible");
    const n = runSqrl(["config", "set", "budgets.view", "lots"], { env });
    expect(n.code).toBe(2);
    expect(n.stderr).toContain("expected a number");
  });

  test("an unknown key inside config.toml is reported with the file's path", () => {
    mkdirSync(env.SQRL_HOME!, { recursive: true });
    writeFileSync(join(env.SQRL_HOME!, "config.toml"), "[llm]\nprovdier = 'anthropic'\n");
    const r = runSqrl(["config", "get", "llm.provider"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Unknown key llm.provdier");
  });

  test("config path prints the file under SQRL_HOME", () => {
    expect(runSqrl(["config", "path"], { env }).stdout.trim()).toBe(join(env.SQRL_HOME!, "config.toml"));
  });
});

describe("sqrl status", () => {
  test("reports an empty project as JSON without a daemon", () => {
    runSqrl(["init", repo, "--yes"], { env });
    const r = runSqrl(["status", repo, "--json"], { env });
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as {
      project_id: string;
      events: { total: number };
      memory_items: { total: number };
    };
    expect(s.project_id).toBe(repo);
    expect(s.events.total).toBe(0);
    expect(s.memory_items.total).toBe(0);
  });

  test("works from a subfolder of a registered project", () => {
    runSqrl(["init", repo, "--yes"], { env });
    mkdirSync(join(repo, "src"));
    const r = runSqrl(["status"], { env, cwd: join(repo, "src") });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Project   ${repo}`);
  });

  test("an unregistered folder says to run sqrl init", () => {
    const r = runSqrl(["status", dir.path], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("sqrl init");
  });
});

describe("the first minutes after sqrl init", () => {
  const SESSION = "11111111-2222-3333-4444-555555555555";
  test("init distils its backfill before returning; status says when the engine runs next; a command that starts the daemon says so", async () => {
    const { CAPTURE_FIXTURES, rewriteFixture } = await import("../daemon/capture/helpers.ts");
    const where = join(env.CLAUDE_CONFIG_DIR!, "projects", "-repo");
    mkdirSync(where, { recursive: true });
    writeFileSync(
      join(where, `${SESSION}.jsonl`),
      rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"), repo),
    );
    try {
      const init = runSqrl(["init", repo, "--yes", "--json"], { env });
      expect(init.code).toBe(0);
      const out = JSON.parse(init.stdout) as {
        backfill: { added: number; processed: { events: number; episodes: number } };
      };
      expect(out.backfill.processed.events).toBe(out.backfill.added);
      expect(out.backfill.processed.episodes).toBeGreaterThan(0);
      const status = JSON.parse(runSqrl(["status", repo, "--json"], { env }).stdout) as {
        events: { unprocessed: number };
        episodes: { total: number };
        engine_next_run: { daemon_running: boolean };
      };
      expect(status.events.unprocessed).toBe(0);
      expect(status.episodes.total).toBeGreaterThan(0);
      expect(status.engine_next_run.daemon_running).toBe(false);
      expect(runSqrl(["status", repo], { env }).stdout).toContain("sqrl daemon start");

      const first = runSqrl(["context", "fix the login test"], { env, cwd: repo });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain("starting the daemon");
      const second = runSqrl(["context", "fix the login test"], { env, cwd: repo });
      expect(second.stderr).not.toContain("starting the daemon");
      expect(runSqrl(["status", repo], { env }).stdout).toMatch(/within \d+ s/);
    } finally {
      runSqrl(["daemon", "stop"], { env });
    }
  }, 60_000);
});
