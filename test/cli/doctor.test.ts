/**
 * `sqrl doctor` and `sqrl status` on a damaged data.db (issue 13 item 5): the file is named, with
 * what to do, and the exit status says it failed; a healthy project passes.
 */
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isolatedEnv, runSqrl, tempDir } from "../helpers/sqrl.ts";

const dir = tempDir("sqrl-doctor-");
afterAll(() => dir.cleanup());
const env = isolatedEnv(dir.path, { SQRL_LOG_LEVEL: "1" });

function project(name: string): string {
  const p = join(dir.path, name);
  mkdirSync(p, { recursive: true });
  const res = runSqrl(["init", p, "--yes", "--no-backfill", "--no-git"], { env });
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

test("a registered folder that is gone: doctor says missing with the command that unregisters it (no DAMAGED, no mv), forget-project removes it", () => {
  const kept = project("kept");
  const gone = project("gone");
  rmSync(gone, { recursive: true, force: true });
  const doctor = runSqrl(["doctor"], { env });
  expect(doctor.stdout).toContain(`MISSING  ${gone}`);
  expect(doctor.stdout).toContain(`sqrl forget-project ${gone}`);
  expect(doctor.stdout).not.toContain(`DAMAGED  ${gone}`);
  expect(doctor.stdout).not.toContain(`mv "${gone}`);
  expect(doctor.stdout).toContain(`ok       ${kept}`);
  const one = runSqrl(["doctor", gone], { env });
  expect(one.stdout).toContain(`MISSING  ${gone}`);
  expect(JSON.parse(runSqrl(["doctor", gone, "--json"], { env }).stdout)[0]).toMatchObject({
    missing: true,
    ok: false,
  });

  const forget = runSqrl(["forget-project", gone], { env });
  expect(forget.code).toBe(0);
  expect(forget.stdout).toContain(`Unregistered ${gone}`);
  expect(runSqrl(["doctor"], { env }).stdout).not.toContain(gone);
  const again = runSqrl(["forget-project", gone], { env });
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("is not a registered project");
  expect(again.stderr).toContain(kept);
});

test("forget-project on a folder that still exists unregisters it and keeps its memory for a later sqrl init", () => {
  const p = project("kept-ctx");
  const res = runSqrl(["forget-project", p, "--json"], { env });
  expect(res.code).toBe(0);
  expect(JSON.parse(res.stdout)).toEqual({ project_id: p, unregistered: true, ctx_kept: true });
  expect(statSync(join(p, ".ctx", "data.db")).isFile()).toBe(true);
  expect(runSqrl(["status", p], { env }).code).toBe(0); // its .ctx still answers; sqrl init registers it again
});
