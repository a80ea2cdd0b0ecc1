/**
 * `npm start` / `bun run start [path]`: the quickest way to see sqrl work, offline and without an API key.
 * 1. Build dist/sqrl when it is missing or older than the sources.
 * 2. `sqrl init <path> --yes` — path: the first argument, else the folder npm was run from
 *    (INIT_CWD), else the current directory.
 * 3. `sqrl daemon run` in the foreground until Ctrl-C.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

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
  const inputs = [newestMtime(join(repo, "src")), ...["package.json", "bun.lock"].map((f) => (existsSync(join(repo, f)) ? statSync(join(repo, f)).mtimeMs : 0))];
  return Math.max(...inputs) > built;
}

function run(cmd: string[], what: string): void {
  const res = Bun.spawnSync(cmd, { cwd: repo, stdio: ["inherit", "inherit", "inherit"] });
  if (res.exitCode !== 0) {
    console.error(`quickstart: ${what} failed (exit ${res.exitCode}).`);
    process.exit(res.exitCode ?? 1);
  }
}

if (needsBuild()) {
  console.error("quickstart: building dist/sqrl …");
  run([process.execPath, "run", join(repo, "scripts", "build.ts"), bin], "the build");
}

const target = resolve(process.argv[2] ?? process.env.INIT_CWD ?? process.cwd());
console.error(`quickstart: registering ${target}`);
run([bin, "init", target, "--yes"], "`sqrl init`");

console.error("quickstart: starting the daemon in the foreground (Ctrl-C stops it; no API key or network needed)");
// Its own process group: Ctrl-C reaches only this script, which forwards it once (a second signal
// would make the daemon skip its graceful shutdown).
const daemon = spawn(bin, ["daemon", "run"], { stdio: ["ignore", "inherit", "inherit"], detached: true });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill(sig === "SIGHUP" ? "SIGTERM" : sig);
  });
}
const code: number = await new Promise((done) => daemon.on("exit", (c, signal) => done(c ?? (signal ? 1 : 0))));
process.exit(code);
