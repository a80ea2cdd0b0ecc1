/**
 * Two homes on one machine: home A runs its daemon; home B's daemon.lock (and, for a copied home, its
 * daemon.json) names A's daemon's pid — what PID reuse or `cp -r ~/.sqrl` leaves behind. B's `daemon
 * stop` must not signal A's daemon, and B's `daemon start` must see the stale lock and start B's own
 * daemon at once rather than wait and fail (compiled binary).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonStatus, makeHome, pidAlive, readRuntime, SQRL_BIN, startDaemon, type DaemonHome } from "./harness.ts";

const homes: DaemonHome[] = [];
afterEach(async () => {
  for (const h of homes.splice(0)) await h.cleanup();
});

function twoHomes(): [DaemonHome, DaemonHome] {
  const a = makeHome();
  const b = makeHome();
  homes.push(a, b);
  return [a, b];
}

describe.skipIf(!existsSync(SQRL_BIN))("a daemon of another home holds the pid in this home's files", () => {
  for (const copied of [false, true])
    test(`${copied ? "a copied home (daemon.json and daemon.lock)" : "PID reuse (daemon.lock)"}: stop leaves the other home's daemon alone; start starts this home's own at once`, async () => {
      const [a, b] = twoHomes();
      const other = startDaemon(a);
      writeFileSync(join(b.sqrlHome, "daemon.lock"), `${other.pid}\n`);
      if (copied) copyFileSync(join(a.sqrlHome, "daemon.json"), join(b.sqrlHome, "daemon.json"));

      const stop = b.sqrl(["daemon", "stop", "--json", "--timeout", "2"]);
      expect(stop.code).toBe(0);
      expect(JSON.parse(stop.stdout)).toMatchObject({ state: "not_running", stale: true });
      await Bun.sleep(300);
      expect(pidAlive(other.pid)).toBe(true);
      expect((await daemonStatus(a)).pid).toBe(other.pid);
      expect(existsSync(join(b.sqrlHome, "daemon.lock"))).toBe(false);

      // The same state again, now for start: the stale lock is replaced and B gets its own daemon.
      writeFileSync(join(b.sqrlHome, "daemon.lock"), `${other.pid}\n`);
      if (copied) copyFileSync(join(a.sqrlHome, "daemon.json"), join(b.sqrlHome, "daemon.json"));
      const t0 = Date.now();
      const start = b.sqrl(["daemon", "start", "--json", "--timeout", "15"]);
      expect(start.stderr).toBe("");
      expect(start.code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(10_000);
      const own = readRuntime(b, "daemon")!;
      expect(own.pid).not.toBe(other.pid);
      expect(JSON.parse(start.stdout)).toMatchObject({ state: "started", pid: own.pid });
      expect(readFileSync(join(b.sqrlHome, "daemon.lock"), "utf8").trim()).toBe(String(own.pid));
      expect((await daemonStatus(b)).pid).toBe(own.pid);
      expect(pidAlive(other.pid)).toBe(true);

      // B's stop now stops B's daemon, and only it.
      const stopOwn = b.sqrl(["daemon", "stop", "--json"]);
      expect(JSON.parse(stopOwn.stdout)).toMatchObject({ state: "stopped", pid: own.pid });
      expect(pidAlive(other.pid)).toBe(true);
      expect((await daemonStatus(a)).pid).toBe(other.pid);
    }, 90_000);
});
