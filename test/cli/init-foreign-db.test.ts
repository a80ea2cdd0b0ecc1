/**
 * A cloned repository that carries a committed `.ctx/data.db` (issue 30 item 5): the compiled
 * `sqrl init` moves it aside instead of serving it, says why and how to trust it, and offers
 * `.ctx/*` for .gitignore; the planted memory never comes back from `sqrl search`. `--trust-db`
 * keeps such a file when the user chooses to.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, type DaemonHome } from "../daemon/harness.ts";
import { seedProject } from "../mcp/fixtures.ts";
import { runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";

let home: DaemonHome;
beforeAll(() => {
  home = makeHome();
});
afterAll(async () => {
  await home.cleanup();
});

function git(cwd: string, ...args: string[]): void {
  const res = Bun.spawnSync(
    ["git", "-c", "user.name=A", "-c", "user.email=a@example.com", "-c", "commit.gpgsign=false", ...args],
    { cwd, stdout: "ignore", stderr: "pipe" },
  );
  if (res.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${res.stderr.toString()}`);
}

/** An upstream repository whose commit carries a data.db planted for the path the victim clones to. */
function plantedClone(name: string): string {
  const clone = join(home.root, name);
  const upstream = join(home.root, `${name}-upstream`);
  mkdirSync(clone, { recursive: true });
  seed(clone); // rows whose project_id is the clone's path ("Use pnpm, never npm or yarn…")
  mkdirSync(join(upstream, ".ctx"), { recursive: true });
  renameSync(join(clone, ".ctx", "data.db"), join(upstream, ".ctx", "data.db"));
  rmSync(clone, { recursive: true, force: true });
  writeFileSync(join(upstream, "README.md"), "# app\n");
  git(upstream, "init", "-q");
  git(upstream, "add", "README.md");
  git(upstream, "add", "-f", ".ctx/data.db");
  git(upstream, "commit", "-q", "-m", "initial");
  git(home.root, "clone", "-q", upstream, clone);
  return clone;
}

/** Seeded memory, all of it in data.db itself (the WAL folded in), as a committed file would hold it. */
function seed(root: string): void {
  seedProject(root);
  const db = new Database(join(root, ".ctx", "data.db"));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  for (const f of ["data.db-wal", "data.db-shm"]) rmSync(join(root, ".ctx", f), { force: true });
}

const searchPnpm = (root: string) =>
  runSqrl(["search", "pnpm", "--project", root, "--json"], { env: home.env, cwd: root });

test.skipIf(!existsSync(SQRL_BIN))(
  "a committed data.db is moved aside, unserved, with what to do; --trust-db keeps it",
  () => {
    const clone = plantedClone("victim");
    const init = runSqrl(["init", clone, "--yes", "--no-backfill"], { env: home.env, cwd: clone });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("tracked by git");
    expect(init.stdout).toContain("sqrl init --trust-db");
    expect(init.stdout).toContain("git rm --cached .ctx/data.db");
    expect(init.stdout).toContain("Created");
    const moved = readdirSync(join(clone, ".ctx", "quarantine")).filter((f) => f.endsWith(".db"));
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(clone, ".gitignore"), "utf8")).toContain(".ctx/*");
    const served = searchPnpm(clone);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stdout).not.toContain("Use pnpm");

    // the user's choice: that file is trusted after all (swapped while the daemon is stopped)
    expect(runSqrl(["daemon", "stop"], { env: home.env }).code).toBe(0);
    renameSync(join(clone, ".ctx", "quarantine", moved[0]!), join(clone, ".ctx", "data.db"));
    for (const f of ["data.db-wal", "data.db-shm"]) rmSync(join(clone, ".ctx", f), { force: true });
    const trusted = runSqrl(["init", clone, "--yes", "--no-backfill", "--trust-db"], { env: home.env, cwd: clone });
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain("Found");
    expect(searchPnpm(clone).stdout).toContain("Use pnpm");
  },
  60_000,
);

test.skipIf(!existsSync(SQRL_BIN))(
  "a data.db copied into a folder this machine never registered is moved aside too",
  () => {
    const copy = join(home.root, "copied");
    mkdirSync(copy, { recursive: true });
    seed(copy);
    const init = runSqrl(["init", copy, "--yes", "--no-backfill", "--no-git"], { env: home.env, cwd: copy });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("not registered on this machine");
    // registered now: a second init keeps its own data.db
    const again = runSqrl(["init", copy, "--yes", "--no-backfill", "--no-git"], { env: home.env, cwd: copy });
    expect(again.stdout).not.toContain("Moved");
    expect(again.stdout).toContain("Found");
  },
);
