/**
 * `sqrl doctor` and `sqrl status` on a damaged data.db (issue 13 item 5): the file is named, with
 * what to do, and the exit status says it failed; a healthy project passes.
 */
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, runSqrl, tempDir } from "../helpers/sqrl.ts";

const dir = tempDir("sqrl-doctor-");
afterAll(() => dir.cleanup());
const env = isolatedEnv(dir.path, { SQRL_LOG_LEVEL: "1" });

function project(name: string): string {
  const p = join(dir.path, name);
  mkdirSync(p, { recursive: true });
  const res = runSqrl(["init", p, "--yes", "--no-backfill"], { env });
  if (res.code !== 0) throw new Error(res.stderr);
  return p;
}

test("doctor names a damaged data.db with what to do and exits 1; status says the same; a healthy project passes", () => {
  const fine = project("fine");
  const broken = project("broken");
  const file = join(broken, ".ctx", "data.db");
  const size = statSync(file).size;
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.alloc(Math.max(0, size - 4096), 0xa5), 0, Math.max(0, size - 4096), 4096); // every page after the first
  closeSync(fd);
  const doctor = runSqrl(["doctor"], { env });
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toContain(`ok       ${fine}`);
  expect(doctor.stdout).toContain(`DAMAGED  ${broken}`);
  expect(doctor.stdout).toContain("sqrl ingest --backfill");
  expect(runSqrl(["doctor", fine], { env }).code).toBe(0);
  const status = runSqrl(["status", broken], { env });
  expect(status.code).toBe(1);
  expect(status.stderr).toContain("sqrl doctor");
  expect(status.stderr).toContain(file);
});
