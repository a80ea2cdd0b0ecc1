import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RotatingLog } from "../../src/daemon/log-file.ts";
import { tempDir } from "../helpers/sqrl.ts";

const dirs: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

test("the daemon log rotates by size and keeps only `keep` old files", () => {
  const dir = tempDir("sqrl-log-");
  dirs.push(dir);
  const path = join(dir.path, "logs", "daemon.log");
  const log = new RotatingLog(path, { maxBytes: 1000, keep: 2 });
  for (let i = 0; i < 100; i++) log.write(`line ${String(i).padStart(3, "0")} ${"x".repeat(80)}`);
  log.close();
  expect(readdirSync(join(dir.path, "logs")).sort()).toEqual(["daemon.log", "daemon.log.1", "daemon.log.2"]);
  for (const f of ["daemon.log", "daemon.log.1", "daemon.log.2"])
    expect(statSync(join(dir.path, "logs", f)).size).toBeLessThanOrEqual(1000);
  const live = readFileSync(path, "utf8").trimEnd().split("\n");
  expect(live.at(-1)).toStartWith("line 099 ");
  const older = readFileSync(`${path}.1`, "utf8").trimEnd().split("\n");
  expect(Number(older.at(-1)!.slice(5, 8)) + 1).toBe(Number(live[0]!.slice(5, 8)));
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(existsSync(`${path}.3`)).toBe(false);
});

test("reopening appends to the existing log and counts its size", () => {
  const dir = tempDir("sqrl-log-");
  dirs.push(dir);
  const path = join(dir.path, "daemon.log");
  const a = new RotatingLog(path, { maxBytes: 100, keep: 1 });
  a.write("a".repeat(60));
  a.close();
  const b = new RotatingLog(path, { maxBytes: 100, keep: 1 });
  b.write("b".repeat(60));
  b.close();
  expect(readFileSync(path, "utf8")).toBe(`${"b".repeat(60)}\n`);
  expect(readFileSync(`${path}.1`, "utf8")).toBe(`${"a".repeat(60)}\n`);
});
