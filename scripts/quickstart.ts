/**
 * `npm start` / `bun run start [path]`: the quickest way to see sqrl work, offline and without an API key.
 * 1. Build dist/sqrl when it is missing or older than the sources.
 * 2. `sqrl init <project> --yes`: the path given as the first argument, else a small demo repository
 *    created under the sqrl home (<SQRL_HOME or ~/.sqrl>/demo). The sqrl clone itself is never
 *    registered unless asked for by path.
 * 3. `sqrl daemon run` in the foreground until Ctrl-C, SIGTERM or SIGHUP (also when npm, the parent,
 *    goes away): the daemon and its engine stop with it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sqrlHome } from "../src/shared/paths.ts";

const repo = resolve(import.meta.dir, "..");
const bin = join(repo, "dist", "sqrl");

/** Newest modification time under `dir` (recursive), in ms. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function needsBuild(): boolean {
  if (!existsSync(bin)) return true;
  const built = statSync(bin).mtimeMs;
  const inputs = [
    newestMtime(join(repo, "src")),
    ...["package.json", "bun.lock"].map((f) => (existsSync(join(repo, f)) ? statSync(join(repo, f)).mtimeMs : 0)),
  ];
  return Math.max(...inputs) > built;
}

function run(cmd: string[], what: string, cwd = repo): void {
  const res = Bun.spawnSync(cmd, { cwd, stdio: ["inherit", "inherit", "inherit"] });
  if (res.exitCode !== 0) {
    console.error(`quickstart: ${what} failed (exit ${res.exitCode}).`);
    process.exit(res.exitCode ?? 1);
  }
}

/** A tiny git repository under the sqrl home to watch, so a first run registers nothing of the user's. */
function demoRepo(): string {
  const dir = join(sqrlHome(), "demo");
  if (existsSync(join(dir, "README.md"))) return dir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(dir, "README.md"),
    "# sqrl demo\n\nA scratch repository `npm start` registered with sqrl. Work in it with a coding agent (or commit to it)\nand watch `sqrl status` fill up. Remove it with `rm -rf` and drop it from projects.json when done.\n",
  );
  const git = Bun.which("git");
  if (git) {
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: "sqrl demo",
      GIT_AUTHOR_EMAIL: "demo@sqrl.invalid",
      GIT_COMMITTER_NAME: "sqrl demo",
      GIT_COMMITTER_EMAIL: "demo@sqrl.invalid",
    };
    for (const args of [
      ["init", "-q"],
      ["add", "README.md"],
      ["commit", "-q", "-m", "Start the sqrl demo repository"],
    ]) {
      Bun.spawnSync([git, ...args], { cwd: dir, env, stdio: ["ignore", "ignore", "inherit"] });
    }
  }
  return dir;
}

if (needsBuild()) {
  console.error("quickstart: building dist/sqrl …");
  run([process.execPath, "run", join(repo, "scripts", "build.ts"), bin], "the build");
}

const target = process.argv[2] ? resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2]) : demoRepo();
console.error(
  `quickstart: registering ${target}${process.argv[2] ? "" : " (a demo repository; `npm start -- /path/to/your/repo` registers yours)"}`,
);
// the demo repository is a git repository wherever git is installed; without git it is a plain folder
run([bin, "init", target, "--yes", ...(process.argv[2] || Bun.which("git") ? [] : ["--no-git"])], "`sqrl init`");

console.error("quickstart: starting the daemon in the foreground (Ctrl-C stops it; no API key or network needed)");
// Its own process group: Ctrl-C reaches only this script, which forwards it once (a second signal
// would make the daemon skip its graceful shutdown; it stops its engine itself).
const daemon = spawn(bin, ["daemon", "run"], { stdio: ["ignore", "inherit", "inherit"], detached: true });
let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGTERM");
}
// SIGHUP (terminal closed) and SIGTERM (`kill`) stop everything like Ctrl-C. The daemon reads SIGHUP
// as "reload projects.json", so it always gets SIGTERM.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, stop);
// `npm start` runs this script under `sh -c`; a SIGTERM to npm ends that shell without reaching us.
// Losing the parent means the same as being told to stop.
const parent = process.ppid;
const watchParent = setInterval(() => {
  if (process.ppid !== parent) stop();
}, 250);
const code: number = await new Promise((done) => daemon.on("exit", (c, signal) => done(c ?? (signal ? 1 : 0))));
clearInterval(watchParent);
process.exit(code);
