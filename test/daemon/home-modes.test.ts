/**
 * SQRL_HOME's logs name projects, files and errors: the folder is its owner's alone (issue 30 item
 * 8), made so by the compiled daemon even when an older install left it 0755.
 */
import { afterEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeHome, SQRL_BIN, startDaemon, type DaemonHome } from "./harness.ts";

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

test.skipIf(!existsSync(SQRL_BIN))("`sqrl daemon start` leaves SQRL_HOME/logs at 0700 and its files at 0600", () => {
  home = makeHome();
  const logs = join(home.sqrlHome, "logs");
  mkdirSync(logs, { recursive: true });
  chmodSync(logs, 0o755); // what an older sqrl made
  startDaemon(home);
  expect(statSync(logs).mode & 0o777).toBe(0o700);
  for (const f of ["daemon.log", "daemon.out"])
    if (existsSync(join(logs, f))) expect(statSync(join(logs, f)).mode & 0o777).toBe(0o600);
  expect(existsSync(join(logs, "daemon.log"))).toBe(true);
});
