/**
 * Issue 13 item 5: one corrupt project database must not stop memory processing for the projects
 * after it. A real engine (in-process) and real data.db files, one of them damaged in place.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Batcher } from "../../src/daemon/batcher.ts";
import { startEngineServer } from "../../src/engine/server.ts";
import type { EventDTO } from "../../src/shared/event.ts";
import { projectPaths } from "../../src/shared/paths.ts";
import { insertEvents } from "../../src/sql/events.ts";
import { initProject } from "../../src/cli/init-project.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { checkProjectDb } from "../../src/cli/doctor.ts";
import { batcherWorld } from "./batcher-world.ts";

const w = batcherWorld();

function events(root: string, n: number, pad: number): EventDTO[] {
  const base = Date.now() - 3_600_000;
  return Array.from({ length: n }, (_, i) => {
    const hash = Bun.SHA256.hash(`${root}:${i}`, "hex");
    const content = { text: `message ${i} about the build ${"x".repeat(pad)}` };
    return {
      id: `evt_${hash.slice(0, 32)}`,
      project_id: root,
      user_id: "u",
      source_tool: "claude_code",
      session_id: "s1",
      timestamp: new Date(base + i * 1000).toISOString(),
      event_type: "user_message",
      content_json: JSON.stringify(content),
      file_paths: [],
      hash,
      processed_at: null,
    } as EventDTO;
  });
}

function project(name: string, n: number, pad = 0): string {
  const root = join(w.dir.path, name);
  mkdirSync(root, { recursive: true });
  initProject(root);
  const db = openProjectDb(root);
  insertEvents(db, events(root, n, pad));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return root;
}

/** Overwrite three 64 KB stretches of the file with garbage (what the attack run did). */
function corrupt(path: string): void {
  const size = statSync(path).size;
  const fd = openSync(path, "r+");
  const junk = Buffer.alloc(64 * 1024, 0xa5);
  for (const at of [0.3, 0.55, 0.8]) writeSync(fd, junk, 0, junk.length, Math.floor(size * at));
  closeSync(fd);
}

const unprocessed = (root: string) => {
  const db = new Database(projectPaths.db(root), { readonly: true });
  try {
    return (db.query("SELECT COUNT(*) AS n FROM events WHERE processed_at IS NULL").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

test("a corrupt data.db is named and marked in status; the projects listed after it are processed", async () => {
  const broken = project("a-broken", 600, 1500);
  const fine = project("b-fine", 20);
  corrupt(projectPaths.db(broken));
  w.engine = await startEngineServer();
  const info = {
    pid: process.pid,
    host: "127.0.0.1" as const,
    port: w.engine.port,
    token: w.engine.token,
    started_at: new Date().toISOString(),
  };
  w.batcher = new Batcher({
    engine: () => info,
    projects: () => [broken, fine],
    settings: () => ({ intervalMs: 200, minEvents: 1, maxEvents: 200, closeAfterMs: 60_000, userId: "u" }),
    requestTimeoutMs: 10_000,
  });
  w.batcher!.start();
  const end = Date.now() + 15_000;
  while (Date.now() < end && unprocessed(fine) > 0) await Bun.sleep(100);
  expect(unprocessed(fine)).toBe(0);
  const status = w.batcher!.status();
  const bad = status.find((s) => s.project_id === broken)!;
  expect(bad.last_error).toContain(projectPaths.db(broken));
  expect(bad.last_error).toContain("sqrl doctor");
  expect(status.find((s) => s.project_id === fine)!.last_error).toBeNull();
  // what the hint points at: `sqrl doctor` names the damaged file and passes the healthy one
  expect(checkProjectDb(broken)).toMatchObject({ ok: false, file: projectPaths.db(broken) });
  expect(checkProjectDb(fine)).toMatchObject({ ok: true, problem: null });
}, 30_000);
