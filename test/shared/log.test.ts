/**
 * The structured logger: child tags, key=value fields, levels, one format for the daemon's file and
 * the engine's lines, and `sqrl daemon logs --service` filtering on it (compiled binary).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { attachLogFile } from "../../src/daemon/log-file.ts";
import { formatRecord, log, type LogRecord, serviceOfLine, setLogSinks } from "../../src/shared/log.ts";
import { isolatedEnv, runSqrl, SQRL_BIN, tempDir } from "../helpers/sqrl.ts";

const dirs: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function capture(fn: () => void): string[] {
  const lines: string[] = [];
  const previous = setLogSinks([(_r: LogRecord, line: string) => lines.push(line)]);
  try {
    fn();
  } finally {
    setLogSinks(previous);
  }
  return lines;
}

describe("structured logs", () => {
  test("a child carries its service; fields are key=value, quoted when needed; levels filter", () => {
    const saved = log.level;
    log.level = 3;
    try {
      const capture_ = log.child({ service: "capture" });
      const lines = capture(() => {
        capture_.warn("file unreadable", { path: "/x/y z.jsonl", attempts: 2, ok: false });
        capture_.debug("not shown at info");
        capture_.child({ project: "/repo" }).info("batch sent");
      });
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}service=capture file unreadable path="\/x\/y z.jsonl" attempts=2 ok=false$/,
      );
      expect(lines[1]).toEndWith("INFO  service=capture batch sent project=/repo");
      expect(lines.map(serviceOfLine)).toEqual(["capture", "capture"]);
    } finally {
      log.level = saved;
    }
  });

  test("the daemon's file gets its records and the engine's lines in the same format", () => {
    const dir = tempDir("sqrl-logfmt-");
    dirs.push(dir);
    const path = join(dir.path, "daemon.log");
    const handle = attachLogFile({ path, stderr: false });
    const saved = log.level;
    log.level = 3;
    try {
      log.child({ service: "api" }).info("listening", { port: 1 });
      const engineLine = formatRecord({
        time: new Date(),
        level: "info",
        message: "engine listening",
        fields: { service: "engine" },
      });
      handle.raw(engineLine, "engine");
      handle.raw("a stray line from the engine", "engine");
    } finally {
      log.level = saved;
      handle.detach();
    }
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines.map(serviceOfLine)).toEqual(["api", "engine", "engine"]);
    expect(lines[2]).toMatch(/^\S+Z INFO {2}service=engine a stray line from the engine$/);
  });
});

describe.skipIf(!existsSync(SQRL_BIN))("sqrl daemon logs --service (compiled binary)", () => {
  test("keeps only the records of one service", () => {
    const dir = tempDir("sqrl-logs-cli-");
    dirs.push(dir);
    const env = isolatedEnv(dir.path);
    mkdirSync(join(env.SQRL_HOME!, "logs"), { recursive: true });
    const at = (service: string, msg: string) =>
      formatRecord({ time: new Date("2026-06-01T10:00:00Z"), level: "info", message: msg, fields: { service } });
    writeFileSync(
      join(env.SQRL_HOME!, "logs", "daemon.log"),
      `${[at("capture", "one"), at("engine", "two"), at("capture", "three"), "unformatted"].join("\n")}\n`,
    );
    const res = runSqrl(["daemon", "logs", "--service", "capture"], { env });
    expect(res.code).toBe(0);
    expect(
      res.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(" ").at(-1)),
    ).toEqual(["one", "three"]);
    const all = runSqrl(["daemon", "logs", "-n", "2"], { env });
    expect(all.stdout.trimEnd().split("\n")).toHaveLength(2);
  });
});
