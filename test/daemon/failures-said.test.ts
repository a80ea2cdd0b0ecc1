/**
 * Failures that must say what happened (issue 30, item 7), against the compiled binary:
 * - `sqrl daemon start` reports at once, with the daemon's own reason, when the daemon stops as it
 *   starts (bad configs, a folder where daemon.lock goes, a full disk), and `sqrl daemon logs` shows
 *   that output (logs/daemon.out);
 * - capture names each transcript it will not read (a FIFO, a looping symlink, a link to
 *   /etc/shadow) and each file with unreadable lines (binary bytes, 100,000-deep nesting) in the
 *   log, once, under service=capture;
 * - the page's two bad requests that were a silent 500 are a 400;
 * - a SQRL_HOME the user cannot write names the file and says what to do (no "unexpected", no
 *   "unable to open database file").
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { claudeLine, fillDisk, mountTmpfs } from "../helpers/faults.ts";
import { postLogin } from "../ui/harness.ts";
import {
  initProject,
  makeHome,
  projectEvents,
  readRuntime,
  runSqrl,
  SQRL_BIN,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
} from "./harness.ts";

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

const BAD_CONFIGS: Array<[string, string]> = [
  ["log.level = 7\n", "log.level"],
  ['llm.provider = "bogus"\n', "llm.provider"],
  ["budgets.task_context = -5\n", "budgets.task_context"],
  ["[watch\n", "config.toml"],
  ["nonsense_key = 1\n", "nonsense_key"],
  ['daemon.batch_interval_seconds = "often"\n', "daemon.batch_interval_seconds"],
];

function logLines(h: DaemonHome): string[] {
  const path = join(h.sqrlHome, "logs", "daemon.log");
  return existsSync(path) ? readFileSync(path, "utf8").split("\n") : [];
}

describe.skipIf(!existsSync(SQRL_BIN))("failures say what happened (compiled binary)", () => {
  test("daemon start: a daemon that stops as it starts is reported at once, with its reason; `daemon logs` shows it", () => {
    for (const [config, names] of BAD_CONFIGS) {
      const h = makeHome(config);
      try {
        const t0 = Date.now();
        const res = h.sqrl(["daemon", "start", "--timeout", "15"]);
        const took = Date.now() - t0;
        expect(res.code).toBe(1);
        expect(res.stderr).toContain("stopped as it started");
        expect(res.stderr).toContain(names);
        expect(res.stderr).not.toContain("not reachable");
        expect(took).toBeLessThan(8_000);
        const logs = h.sqrl(["daemon", "logs"]);
        expect(logs.code).toBe(0);
        expect(logs.stdout).toContain("daemon.out");
        expect(logs.stdout).toContain(names);
        // The failed daemon left no lock behind.
        expect(existsSync(join(h.sqrlHome, "daemon.lock"))).toBe(false);
      } finally {
        runSqrl(["daemon", "stop"], { env: h.env });
      }
    }
    home = makeHome();
    mkdirSync(join(home.sqrlHome, "daemon.lock"));
    const lockDir = home.sqrl(["daemon", "start", "--timeout", "15"]);
    expect(lockDir.code).toBe(1);
    expect(lockDir.stderr).toContain("daemon.lock is a folder");
    expect(lockDir.stderr).toContain("move it away");
    expect(lockDir.stderr).not.toContain("unexpected");
  }, 120_000);

  test("daemon start on a full disk says so at once", () => {
    home = makeHome();
    const mounted = mountTmpfs(join(home.root, "full"), "2m");
    if (!mounted) {
      console.log("skipped: cannot mount a tmpfs here");
      return;
    }
    try {
      const env = { ...home.env, SQRL_HOME: join(mounted.path, "sqrl") };
      mkdirSync(env.SQRL_HOME, { recursive: true });
      fillDisk(mounted.path);
      const t0 = Date.now();
      const res = runSqrl(["daemon", "start", "--timeout", "15"], { env });
      expect(res.code).toBe(1);
      expect(Date.now() - t0).toBeLessThan(8_000);
      expect(res.stderr).toMatch(/No space left|disk is full/i);
      expect(res.stderr).toContain(mounted.path);
      expect(res.stderr).not.toContain("unexpected");
      expect(res.stderr).not.toContain("not reachable");
      runSqrl(["daemon", "stop"], { env });
    } finally {
      mounted.unmount();
    }
  }, 60_000);

  test("capture names each file it will not read, and each file with unreadable lines, once", async () => {
    home = makeHome("[watch]\ngit = false\n", { SQRL_LOG_LEVEL: "3" });
    const repo = initProject(home, "alpha");
    const dir = join(home.claudeDir, "projects", repo.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(dir, { recursive: true });
    const fifo = join(dir, "fifo.jsonl");
    const hasFifo = Bun.spawnSync(["mkfifo", fifo]).exitCode === 0;
    symlinkSync(join(dir, "loop-b.jsonl"), join(dir, "loop-a.jsonl"));
    symlinkSync(join(dir, "loop-a.jsonl"), join(dir, "loop-b.jsonl"));
    symlinkSync("/etc/shadow", join(dir, "shadow.jsonl"));
    const good = transcriptPath(home, repo, "aaaaaaaa-1111-2222-3333-444444444444");
    const garbage = transcriptPath(home, repo, "bbbbbbbb-1111-2222-3333-444444444444");
    const deep = transcriptPath(home, repo, "cccccccc-1111-2222-3333-444444444444");
    for (let i = 0; i < 5; i++) appendFileSync(good, claudeLine(repo, "aaaaaaaa-1111-2222-3333-444444444444", i));
    writeFileSync(garbage, Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0x80, 0x81]), Buffer.from("\n")]));
    appendFileSync(garbage, claudeLine(repo, "bbbbbbbb-1111-2222-3333-444444444444", 1));
    writeFileSync(deep, `{"type":"user","x":${"[".repeat(100_000)}${"]".repeat(100_000)}}\n`);
    appendFileSync(deep, claudeLine(repo, "cccccccc-1111-2222-3333-444444444444", 1));

    startDaemon(home);
    await waitFor("the good lines captured", () => projectEvents(repo).total >= 7, 30_000);
    // More garbage later, and several sweeps: still one line per file.
    appendFileSync(garbage, Buffer.from([0x00, 0x01, 0xc3, 0x28, 0x0a]));
    await Bun.sleep(5_000);
    const lines = logLines(home).filter((l) => l.includes("service=capture"));
    const about = (name: string) => lines.filter((l) => l.includes(name));
    if (hasFifo) {
      expect(about("fifo.jsonl")).toHaveLength(1);
      expect(about("fifo.jsonl")[0]).toContain("not a regular file");
    }
    expect(about("loop-a.jsonl")).toHaveLength(1);
    expect(about("loop-a.jsonl")[0]).toContain("loops");
    expect(about("shadow.jsonl")).toHaveLength(1);
    expect(about("shadow.jsonl")[0]).toContain("outside the agent's folder");
    expect(about("bbbbbbbb-")).toHaveLength(1);
    expect(about("bbbbbbbb-")[0]).toContain("unreadable line");
    expect(about("cccccccc-")).toHaveLength(1);
    expect(about("cccccccc-")[0]).toContain("nested too deep");
    expect(about("aaaaaaaa-")).toEqual([]);
  }, 90_000);

  test("the page: a Host with a space and a broken %-escape are 400, not a silent 500", async () => {
    home = makeHome();
    const info = startDaemon(home);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(info.port, "127.0.0.1", () => socket.end(request));
        let data = "";
        socket.on("data", (d) => (data += d.toString()));
        socket.on("end", () => resolve(data));
        socket.on("error", reject);
      });
    const badHost = await raw("GET /ui/api/projects HTTP/1.1\r\nHost: 127.0.0.1 evil\r\nConnection: close\r\n\r\n");
    expect(badHost).toMatch(/^HTTP\/1\.1 400/);
    // Logged in (cookie and page key), so the request reaches the page's API.
    const file = home.sqrl(["ui", "--no-open"]).stdout.trim().split("\n").pop() ?? "";
    const { cookie, pageKey } = await postLogin(file);
    const badEscape = await raw(
      `GET /ui/api/memories/%E0%A4%A?project=x HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\nCookie: ${cookie}\r\nX-Sqrl-Page: ${pageKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(badEscape).toMatch(/^HTTP\/1\.1 400/);
    expect(badEscape).toContain("bad_request");
    await waitFor("the refusal logged", () => logLines(home!).some((l) => l.includes("malformed Host or path")));
  }, 60_000);

  test("a SQRL_HOME the user cannot write: the file is named with what to do, never 'unexpected' or a bare 'unable to open database file'", () => {
    home = makeHome();
    const project = initProject(home, "alpha");
    const asUser = process.getuid?.() === 0 ? ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] : [];
    if (asUser.length > 0) {
      // Root writes anywhere: the user here is nobody, whose home sqrl's folder is but cannot write.
      for (const p of [home.root, join(home.root, "projects")]) chmodSync(p, 0o755);
      Bun.spawnSync(["chown", "-R", "65534:65534", project]);
      chownSync(home.sqrlHome, 65534, 65534);
      for (const f of ["config.toml", "projects.json", "state.db", "user.db"])
        if (existsSync(join(home.sqrlHome, f))) chownSync(join(home.sqrlHome, f), 65534, 65534);
    }
    chmodSync(home.sqrlHome, 0o555);
    const run = (args: string[]) => {
      const res = Bun.spawnSync([...asUser, SQRL_BIN, ...args], {
        env: home!.env,
        cwd: project,
        stdout: "pipe",
        stderr: "pipe",
      });
      return { code: res.exitCode, stderr: res.stderr.toString() };
    };
    for (const args of [
      ["daemon", "start", "--timeout", "10"],
      ["ingest", "--backfill"],
      ["config", "set", "log.level", "debug"],
      ["export", "-o", "-"],
    ]) {
      const res = run(args);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(home.sqrlHome);
      expect(res.stderr).not.toContain("unexpected");
      expect(res.stderr).not.toMatch(/^sqrl: unable to open database file/m);
      expect(res.stderr).toMatch(/writable by you|SQRL_HOME/);
      expect(res.stderr).not.toContain(".tmp");
    }
    chmodSync(home.sqrlHome, 0o755);
    expect(readRuntime(home, "daemon")).toBeUndefined();
  }, 60_000);
});
