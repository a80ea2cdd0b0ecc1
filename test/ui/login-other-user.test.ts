/**
 * `sqrl ui`'s login code against a second local user: the real `sqrl ui` opens the page through the
 * real xdg-open and Chromium ($BROWSER, headless) while a process running as `nobody` reads every
 * /proc/<pid>/cmdline it can, as fast as it can, and tries to read sqrl's run folder. The code must
 * not appear in any command line (nor `code=` at all), the login file and its folder must be closed
 * to `nobody`, and the browser must still log in (the file is gone once its code is used).
 * Needs root (to run a process as another user), setpriv, xdg-open and Chromium.
 *
 * The codes checked are the real ones (the test, as root, reads each login file while it exists), so a
 * token-like string in an unrelated process of the machine (a CI runner's own command line) is no failure;
 * the shape checks (`code=`, any 32-character token) look only at the command lines of sqrl's launch.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../daemon/harness.ts";
import { SQRL_BIN, tempDir } from "../helpers/sqrl.ts";
import { chromiumPath, readLoginFile, startUiStore, type UiStore } from "./harness.ts";

const missing = [
  process.getuid?.() !== 0 && "root (to run a process as nobody)",
  !existsSync("/usr/bin/setpriv") && "setpriv",
  !existsSync("/usr/bin/xdg-open") && "xdg-open (apt-get install -y xdg-utils)",
  !chromiumPath() && "chromium",
  !existsSync(SQRL_BIN) && SQRL_BIN,
].filter(Boolean);
if (missing.length > 0) console.log(`skipping the sqrl ui two-user test: needs ${missing.join(", ")}`);

/** A 32-character base64url token, as sqrl's login codes are (24 random bytes). */
const TOKEN = /(?<![\w-])[A-Za-z0-9_-]{32}(?![\w-])/g;

/** Runs as nobody: every readable command line, over and over, then a try at sqrl's run folder and login file. */
const SCANNER = `
out="$1"; run="$2"; file="$3"; stop="$4"
while [ ! -e "$stop" ]; do
  for f in /proc/[0-9]*/cmdline; do
    line=$(tr '\\0' ' ' < "$f" 2>/dev/null) && [ -n "$line" ] && printf '%s\\n' "$line" >> "$out"
  done
done
ls "$run" >> "$out.run" 2>&1 && echo LISTED >> "$out.run"
cat "$file" >> "$out.run" 2>&1 && echo READ >> "$out.run"
echo DONE >> "$out.run"
`;

let store: UiStore;
let scratch: { path: string; cleanup: () => void };

describe.skipIf(missing.length > 0)("sqrl ui login code vs another local user", () => {
  beforeAll(async () => {
    store = await startUiStore();
    scratch = tempDir("sqrl-ui-users-");
    chmodSync(scratch.path, 0o777);
    // Let nobody walk to SQRL_HOME, as it could to a usual ~/.sqrl: only sqrl's own modes protect the login.
    for (const dir of [store.home.root, store.home.sqrlHome]) chmodSync(dir, 0o755);
  }, 90_000);
  afterAll(async () => {
    await store?.cleanup();
    scratch?.cleanup();
  });

  test("nobody, reading every /proc/*/cmdline while sqrl ui opens the page, never sees the code; it cannot read the login file either", async () => {
    // A login file that stays unused while nobody tries to read it.
    const spare = store.loginFile();
    const out = join(scratch.path, "cmdlines");
    const stop = join(scratch.path, "stop");
    writeFileSync(out, "");
    chmodSync(out, 0o666);
    const scanner = Bun.spawn(
      [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "sh",
        "-c",
        SCANNER,
        "scan",
        out,
        join(store.home.sqrlHome, "run"),
        spare,
        stop,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    // As root, read every login file while it exists: the codes the command lines must not hold.
    const runDir = join(store.home.sqrlHome, "run");
    const codes = new Set([readLoginFile(spare).code]);
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const name of readdirSync(runDir)) {
          try {
            codes.add(readLoginFile(join(runDir, name)).code);
          } catch {
            // written but not yet whole, or already used and deleted: the next pass sees it or it is gone
          }
        }
        await Bun.sleep(5);
      }
    })();
    try {
      await waitFor("the scanner's first pass", async () => readFileSync(out, "utf8").includes("sqrl"), 10_000);
      const profile = join(scratch.path, "chromium-profile");
      const ui = Bun.spawn([SQRL_BIN, "ui", store.project], {
        env: {
          ...store.home.env,
          // The generic xdg-open path: no desktop, so it runs $BROWSER with the file (real xdg-open, real Chromium).
          DISPLAY: ":99",
          XDG_DATA_HOME: scratch.path,
          XDG_DATA_DIRS: scratch.path,
          XDG_CONFIG_HOME: scratch.path,
          BROWSER: `chromium --headless --no-sandbox --disable-gpu --user-data-dir=${profile} --virtual-time-budget=5000 --dump-dom %s`,
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, code] = await Promise.all([new Response(ui.stdout).text(), ui.exited]);
      expect(code).toBe(0);
      expect(stdout).toContain("Opened the sqrl page");
      // The browser logged in: the daemon deletes a login file once its code is used.
      await waitFor(
        "the opened login file used and deleted",
        async () => readdirSync(runDir).every((n) => join(runDir, n) === spare),
        15_000,
      );
      await Bun.sleep(300);
    } finally {
      watching = false;
      await watcher;
      writeFileSync(stop, "");
      await Promise.race([scanner.exited, Bun.sleep(10_000)]);
      if (scanner.exitCode === null) scanner.kill("SIGKILL");
    }
    const seen = readFileSync(out, "utf8").split("\n");
    // The scan did see the launch: xdg-open's and Chromium's own command lines, holding the login file's path.
    const launches = seen.filter((l) => l.includes("/run/ui-login-"));
    expect(launches.some((l) => l.includes("xdg-open") || l.includes("chromium"))).toBe(true);
    // The opened file's code was read (the spare's and at least one more).
    expect(codes.size).toBeGreaterThanOrEqual(2);
    // … and no login code in any command line of any process.
    expect(seen.filter((l) => [...codes].some((c) => l.includes(c)))).toEqual([]);
    // Nor anything shaped like one in the launch's own command lines (sqrl, xdg-open, the browser).
    const ours = seen.filter((l) => /sqrl|xdg-|chrom|\/run\/ui-login-/.test(l));
    expect(ours.filter((l) => l.includes("code="))).toEqual([]);
    const tokens = ours
      .flatMap((l) => l.match(TOKEN) ?? [])
      .filter((t) => /\d/.test(t) && /[a-z]/.test(t) && /[A-Z]/.test(t));
    expect(tokens).toEqual([]);
    // nobody can neither list the run folder nor read a login file in it.
    const tried = readFileSync(`${out}.run`, "utf8");
    expect(tried).toContain("DONE");
    expect(tried).not.toContain("LISTED");
    expect(tried).not.toContain("READ");
    expect(tried).not.toContain('name="code"');
    expect(tried).toContain("Permission denied");
  }, 90_000);
});
