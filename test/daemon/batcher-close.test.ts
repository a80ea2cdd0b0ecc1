import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Batcher } from "../../src/daemon/batcher.ts";
import { startEngineServer } from "../../src/engine/server.ts";
import type { EventDTO } from "../../src/shared/event.ts";
import { insertEvents } from "../../src/sql/events.ts";
import { initProject } from "../../src/cli/init-project.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { batcherWorld } from "./batcher-world.ts";

const w = batcherWorld();

function event(
  root: string,
  i: number,
  ts: number,
  type: EventDTO["event_type"],
  content: Record<string, unknown>,
): EventDTO {
  const hash = createHash("sha256").update(`${i}`).digest("hex");
  return {
    id: `evt_${hash.slice(0, 20)}`,
    project_id: root,
    user_id: "u",
    source_tool: "claude_code",
    session_id: "s1",
    timestamp: new Date(ts).toISOString(),
    event_type: type,
    content_json: JSON.stringify(content),
    file_paths: [],
    hash,
    processed_at: null,
  };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

test("a finished session's episode is closed and extracted once the project is quiet, without new events", async () => {
  const root = join(w.dir.path, "repo");
  mkdirSync(root, { recursive: true });
  initProject(root);
  const db = openProjectDb(root);
  // The session's last event is just under the 20-minute gap old: open at the first batch, finished seconds later.
  const last = Date.now() - 20 * 60_000 + 3_000;
  insertEvents(db, [
    event(root, 1, last - 60_000, "user_message", { text: "Please always use pnpm in this repo, never npm." }),
    event(root, 2, last - 40_000, "assistant_response", { text: "Will do." }),
    event(root, 3, last - 20_000, "command_run", { command: "pnpm install", exit_code: 0, output: "done" }),
    event(root, 4, last, "assistant_response", { text: "Installed." }),
  ]);
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
    projects: () => [root],
    settings: () => ({ intervalMs: 200, minEvents: 1, maxEvents: 200, closeAfterMs: 5_000, userId: "u" }),
  });
  w.batcher!.start();
  const status = () =>
    db
      .query(
        "SELECT s.status AS status, s.extracted_at AS extracted FROM episodes e JOIN episode_state s ON s.episode_id = e.id",
      )
      .all() as Array<{ status: string; extracted: string | null }>;
  expect(await until(() => status().length === 1, 5_000)).toBe(true);
  expect(status()[0]!.status).toBe("open"); // the gap had not passed yet at the first batch
  expect(await until(() => status()[0]!.extracted !== null, 15_000)).toBe(true);
  expect(status()[0]!.status).toBe("closed");
  const unprocessed = db.query("SELECT COUNT(*) AS n FROM events WHERE processed_at IS NULL").get() as { n: number };
  expect(unprocessed.n).toBe(0);
  db.close();
}, 30_000);
