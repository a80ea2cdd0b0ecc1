/**
 * Nothing fails in silence (issue 29 item 4), through the binary: sessions whose working directory no
 * registered project contains, a file that holds no transcript, a git history that cannot be read, a
 * service manager that does not load the unit, and `sqrl init` outside a git repository each say what
 * happened and exit non-zero.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CAPTURE_FIXTURES, rewriteFixture } from "../daemon/capture/helpers.ts";
import { isolatedEnv, runSqrl, tempDir } from "../helpers/sqrl.ts";

const SESSION = "11111111-2222-3333-4444-555555555555";
let dir: { path: string; cleanup: () => void };
let env: Record<string, string>;
let repo: string;

function git(root: string, ...args: string[]) {
  return Bun.spawnSync(
    ["git", "-C", root, "-c", "user.name=A", "-c", "user.email=a@example.com", "-c", "commit.gpgsign=false", ...args],
    { stdout: "pipe", stderr: "pipe" },
  );
}

beforeEach(() => {
  dir = tempDir("sqrl-zeros-");
  env = isolatedEnv(dir.path);
  mkdirSync(env.HOME!, { recursive: true });
  repo = join(dir.path, "repo");
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q");
});
afterEach(() => dir.cleanup());

function transcriptFor(cwd: string): string {
  const path = join(dir.path, `${SESSION}.jsonl`);
  writeFileSync(
    path,
    rewriteFixture(readFileSync(join(CAPTURE_FIXTURES, "claude", "-REPO", `${SESSION}.jsonl`), "utf8"), cwd),
  );
  return path;
}

test("a transcript whose cwd no registered project contains: ingest names the folder and the count, says how to register, exits 1", () => {
  expect(runSqrl(["init", repo, "--yes", "--no-backfill"], { env }).code).toBe(0);
  const elsewhere = join(dir.path, "other-project");
  const r = runSqrl(["ingest", transcriptFor(elsewhere)], { env });
  expect(r.code).toBe(1);
  expect(r.stdout).toContain("Events added: 0");
  expect(r.stderr).toMatch(new RegExp(`${elsewhere} \\(\\d+ events\\)`));
  expect(r.stderr).toContain("sqrl init <folder>");
  const json = runSqrl(["ingest", transcriptFor(elsewhere), "--json"], { env });
  expect(json.code).toBe(1);
  expect(Object.keys(JSON.parse(json.stdout).unmatched)).toEqual([elsewhere]);
  // the same file for the registered project imports, exit 0
  expect(runSqrl(["ingest", transcriptFor(repo)], { env }).code).toBe(0);
});

test("a file that is no transcript (plain text, JSON of another shape) is said and exits 1", () => {
  expect(runSqrl(["init", repo, "--yes", "--no-backfill"], { env }).code).toBe(0);
  const txt = join(dir.path, "a.txt");
  writeFileSync(txt, "just some notes\nnothing to see\n");
  const r = runSqrl(["ingest", txt], { env });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${txt} holds no agent transcript record`);
  const json = join(dir.path, "x.json");
  writeFileSync(json, JSON.stringify({ hello: "world", items: [1, 2, 3] }));
  const j = runSqrl(["ingest", json], { env });
  expect(j.code).toBe(1);
  expect(j.stderr).toContain(`${json} holds no`);
});

test("git log failing: init and ingest say the history could not be read and exit 1, never a silent 0 commits", () => {
  writeFileSync(join(repo, "a.txt"), "one\n");
  git(repo, "add", "a.txt");
  git(repo, "commit", "-q", "-m", "first");
  writeFileSync(join(repo, "a.txt"), "two\n");
  git(repo, "commit", "-q", "-am", "second");
  // Remove the first commit's tree: HEAD still resolves, `git log --numstat` cannot diff.
  const tree = git(repo, "rev-parse", "HEAD~1^{tree}").stdout.toString().trim();
  rmSync(join(repo, ".git", "objects", tree.slice(0, 2), tree.slice(2)));
  expect(git(repo, "rev-parse", "--verify", "-q", "HEAD").exitCode).toBe(0);
  const init = runSqrl(["init", repo, "--yes"], { env });
  expect(init.code).toBe(1);
  expect(init.stderr).toContain(`the git history of ${repo} could not be read (git log failed`);
  const ingest = runSqrl(["ingest", "--backfill", "--source", "git"], { env });
  expect(ingest.code).toBe(1);
  expect(ingest.stderr).toContain(`The git history of ${repo} could not be read`);
  expect(JSON.parse(runSqrl(["ingest", "--backfill", "--source", "git", "--json"], { env }).stdout).git_errors).toEqual(
    [{ project_id: repo, error: expect.stringContaining("git log failed") }],
  );
});

test("an empty repository (no commits yet) is no error", () => {
  const r = runSqrl(["init", repo, "--yes", "--json"], { env });
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout).backfill).toMatchObject({ commits: 0, git_errors: [] });
});

test("daemon install whose service-manager steps fail exits 1 and says the unit is not loaded", () => {
  const xdg = join(dir.path, "xdg");
  // No user bus reachable: systemctl --user (or its absence) fails for real, and nothing is installed anywhere else.
  const r = runSqrl(["daemon", "install", "--platform", "linux"], {
    env: {
      ...env,
      XDG_CONFIG_HOME: xdg,
      XDG_RUNTIME_DIR: join(dir.path, "run"),
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir.path, "no-bus")}`,
    },
  });
  expect(r.code).toBe(1);
  expect(r.stdout).toContain("FAILED: systemctl --user");
  expect(r.stderr).toContain("did not load it");
  expect(existsSync(join(xdg, "systemd", "user", "sqrl.service"))).toBe(true);
  const noActivate = runSqrl(["daemon", "install", "--platform", "linux", "--no-activate"], {
    env: { ...env, XDG_CONFIG_HOME: xdg },
  });
  expect(noActivate.code).toBe(0);
});

test("init on a folder outside any git repository refuses with what to do; --no-git sets it up", () => {
  const plain = join(dir.path, "plain");
  mkdirSync(plain);
  const r = runSqrl(["init", plain, "--yes"], { env });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("is not in a git repository");
  expect(r.stderr).toContain("git init");
  expect(r.stderr).toContain("--no-git");
  expect(existsSync(join(plain, ".ctx"))).toBe(false);
  expect(readdirSync(plain)).toEqual([]);
  const ok = runSqrl(["init", plain, "--yes", "--no-git", "--no-backfill"], { env });
  expect(ok.code).toBe(0);
  const db = new Database(join(plain, ".ctx", "data.db"), { readonly: true });
  db.close();
  // a subfolder of a repository is in git
  const sub = join(repo, "pkg");
  mkdirSync(sub);
  expect(runSqrl(["init", sub, "--yes", "--no-backfill"], { env }).code).toBe(0);
});
