import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PitfallsView, SearchResponse, TaskContext, Timeline } from "../../../src/shared/api.ts";
import { openProjectDb } from "../../../src/sql/open.ts";
import { isolatedEnv, runSqrl, SQRL_BIN, tempDir } from "../../helpers/sqrl.ts";
import { addEpisode, addItem } from "./helpers.ts";

/** The compiled binary end to end: `sqrl engine`, and the read commands through an auto-started daemon. */
const hasBin = existsSync(SQRL_BIN);
let tmp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let repo: string;

beforeAll(() => {
  if (!hasBin) return;
  tmp = tempDir("sqrl-cli-retrieval-");
  env = isolatedEnv(tmp.path);
  repo = join(tmp.path, "repo");
  mkdirSync(repo, { recursive: true });
  expect(runSqrl(["init", repo, "--yes", "--no-git"], { env, cwd: repo }).code).toBe(0);
  const db = openProjectDb(repo);
  const now = Date.now();
  addItem(
    db,
    repo,
    {
      type: "pitfall",
      key: "exp",
      content: "JWT exp is in seconds, not milliseconds.",
      importance: 0.8,
      file_paths: ["src/auth/jwt.ts"],
    },
    now,
  );
  addItem(db, repo, { type: "user_style", key: "pm", content: "Uses pnpm, never npm.", importance: 0.9 }, now);
  // Enough long memories that `sqrl search --top-k 100` writes far more than a pipe buffer.
  for (let i = 0; i < 60; i++)
    addItem(
      db,
      repo,
      {
        type: "recipe",
        key: `pipe${i}`,
        content: `Pipe check ${i}: ${"run the lint step before the pipe test and read its output carefully. ".repeat(40)}`,
        importance: 0.3,
      },
      now,
    );
  addEpisode(
    db,
    repo,
    {
      id: "ep_cli",
      days_ago: 1,
      summary: "Fixed the JWT exp unit.",
      outcome: "tests green",
      events: [{ type: "user_message", content: { text: "fix jwt exp" }, at: 0 }],
    },
    now,
  );
  db.close();
});

afterAll(() => {
  if (!hasBin) return;
  runSqrl(["daemon", "stop"], { env, cwd: repo });
  tmp.cleanup();
});

describe.skipIf(!hasBin)("sqrl read commands (compiled binary; build it first)", () => {
  test("sqrl context prints the markdown with reasons, and --json the exact endpoint JSON", () => {
    const pretty = runSqrl(["context", "JWT exp unit bug", "--files", "src/auth/jwt.ts"], { env, cwd: repo });
    expect(pretty.code).toBe(0);
    expect(pretty.stdout).toContain("## Relevant memory for this task");
    expect(pretty.stdout).toContain("JWT exp is in seconds");
    expect(pretty.stdout).toContain("Why:");
    const json = runSqrl(["context", "JWT exp unit bug", "--json", "--budget", "200"], { env, cwd: join(repo) });
    const r = TaskContext.parse(JSON.parse(json.stdout));
    expect(r.selected_memories.map((m) => m.key)).toEqual(["exp"]);
    expect(r.token_estimate).toBeLessThanOrEqual(200);
  });

  test("sqrl search, view, timeline, recall", () => {
    const s = SearchResponse.parse(JSON.parse(runSqrl(["search", "pnpm", "--json"], { env, cwd: repo }).stdout));
    expect(s.results.map((x) => x.key)).toEqual(["pm"]);
    const v = PitfallsView.parse(
      JSON.parse(runSqrl(["view", "pitfalls", "--paths", "src/auth", "--json"], { env, cwd: repo }).stdout),
    );
    expect(v.items.map((i) => i.key)).toEqual(["exp"]);
    expect(runSqrl(["view", "user_style", "--mode", "full"], { env, cwd: repo }).stdout).toContain(
      "Uses pnpm, never npm.",
    );
    const t = Timeline.parse(JSON.parse(runSqrl(["timeline", "--json"], { env, cwd: repo }).stdout));
    expect(t.episodes.map((e) => e.episode_id)).toEqual(["ep_cli"]);
    const rc = runSqrl(["recall", "ep_cli"], { env, cwd: repo });
    expect(rc.stdout).toContain("User: fix jwt exp");
  });

  test("bad usage exits 2 and says what to do; an unknown episode exits 1", () => {
    const bad = runSqrl(["view", "bogus"], { env, cwd: repo });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("user_style, project_brief, pitfalls");
    expect(runSqrl(["context", "x", "--budget", "0"], { env, cwd: repo }).code).toBe(2);
    const missing = runSqrl(["recall", "ep_nope"], { env, cwd: repo });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ep_nope");
    const outside = runSqrl(["context", "x"], { env, cwd: tmp.path });
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain("sqrl init");
  });

  test("sqrl timeline --since takes what people write and refuses what it cannot read", () => {
    const t = Timeline.parse(
      JSON.parse(runSqrl(["timeline", "--since", "yesterday", "--json"], { env, cwd: repo }).stdout),
    );
    expect(t.episodes.map((e) => e.episode_id)).toEqual(["ep_cli"]);
    expect(runSqrl(["timeline", "--since", "2 days ago"], { env, cwd: repo }).stdout).toContain("ep_cli");
    const bad = runSqrl(["timeline", "--since", "soon"], { env, cwd: repo });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("yesterday");
  });

  test("a reader that closes the pipe early (`| head -1`) ends the command quietly: exit 0, no stack", () => {
    for (const cmd of [
      `"${SQRL_BIN}" search "pipe check lint" --top-k 100 --budget 100000 | head -1`,
      `"${SQRL_BIN}" search "pipe check" --json --top-k 100 --budget 100000 | head -c 10`,
    ]) {
      const r = Bun.spawnSync(["bash", "-o", "pipefail", "-c", cmd], {
        env,
        cwd: repo,
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(r.stderr.toString()).toBe("");
      expect(r.exitCode).toBe(0);
    }
  });

  test("unknown flags are usage errors that name the closest real flag; --top-k limits results", () => {
    const typo = runSqrl(["context", "x", "--bduget", "5"], { env, cwd: repo });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--bduget");
    expect(typo.stderr).toContain("Did you mean --budget?");
    expect(typo.stdout).toBe("");
    const bogus = runSqrl(["status", "--bogus"], { env, cwd: repo });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("sqrl status --help");
    const one = SearchResponse.parse(
      JSON.parse(
        runSqrl(["search", "pipe check", "--top-k", "1", "--budget", "100000", "--json"], { env, cwd: repo }).stdout,
      ),
    );
    expect(one.results.length).toBe(1);
    const alias = SearchResponse.parse(
      JSON.parse(
        runSqrl(["search", "pipe check", "--top=2", "--budget", "100000", "--json"], { env, cwd: repo }).stdout,
      ),
    );
    expect(alias.results.length).toBe(2);
  });

  test("sqrl engine stops when the process that started it dies (no orphaned engine after a killed daemon)", async () => {
    const home = tempDir("sqrl-engine-orphan-");
    try {
      const e = isolatedEnv(home.path);
      const parent = Bun.spawn(["sh", "-c", `"${SQRL_BIN}" engine; true`], {
        env: e,
        stdout: "ignore",
        stderr: "ignore",
      });
      const file = join(e.SQRL_HOME!, "memory-service.json");
      for (let i = 0; i < 400 && !existsSync(file); i++) await Bun.sleep(50);
      const { pid } = JSON.parse(readFileSync(file, "utf8")) as { pid: number };
      parent.kill("SIGKILL");
      let alive = true;
      for (let i = 0; i < 100 && alive; i++) {
        await Bun.sleep(50);
        try {
          process.kill(pid, 0);
        } catch {
          alive = false;
        }
      }
      expect(alive).toBe(false);
      expect(existsSync(file)).toBe(false);
    } finally {
      home.cleanup();
    }
  }, 30_000);

  test("sqrl engine writes memory-service.json (0600) and removes it on SIGTERM", async () => {
    const home = tempDir("sqrl-engine-bin-");
    try {
      const e = isolatedEnv(home.path);
      const child = Bun.spawn([SQRL_BIN, "engine"], { env: e, stdout: "ignore", stderr: "pipe" });
      const file = join(e.SQRL_HOME!, "memory-service.json");
      for (let i = 0; i < 100 && !existsSync(file); i++) await Bun.sleep(50);
      const info = JSON.parse(readFileSync(file, "utf8"));
      expect(info).toMatchObject({ pid: child.pid, host: "127.0.0.1" });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const health = await fetch(`http://127.0.0.1:${info.port}/health`, {
        headers: { authorization: `Bearer ${info.token}` },
      });
      expect(health.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${info.port}/health`)).status).toBe(401);
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      expect(existsSync(file)).toBe(false);
    } finally {
      home.cleanup();
    }
  });
});
