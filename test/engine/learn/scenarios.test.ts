import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestFileOnce } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { StateDbLedger } from "../../../src/engine/llm/usage.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../../../src/shared/api.ts";
import { loadConfig } from "../../../src/shared/config.ts";
import type { ConfigValues } from "../../../src/shared/config-keys.ts";
import { isoToMs, nowIso } from "../../../src/shared/time.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { markProcessed, unprocessedEvents } from "../../../src/sql/events.ts";
import { currentItems, type MemoryItem } from "../../../src/sql/memory-items.ts";
import { openDatabase, openProjectDb } from "../../../src/sql/open.ts";
import { listUserStyle } from "../../../src/sql/user-style.ts";
import { tempDir } from "../../helpers/sqrl.ts";

/**
 * The scenario transcripts (test/fixtures/scenarios, Claude Code format) through the real capture
 * (one-shot ingest, as backfill reads them) and the engine (batches of 200 oldest-first, as the
 * daemon sends them, clock an hour after the last event so every episode closes), offline.
 * What a developer wants remembered must be there; the traps must not be.
 */
const SCENARIOS = join(import.meta.dir, "..", "..", "fixtures", "scenarios");
const SCENARIO_CWD = "/workspace/inventory-api";
const USER = "dev@example.com";

const t = tempDir("sqrl-scenarios-");
const root = join(t.path, "inventory-api");
const home = join(t.path, "home");
let items: MemoryItem[] = [];
let globalStyle: string[] = [];
let clockMs = 0;

beforeAll(async () => {
  cpSync(join(SCENARIOS, "repo"), root, { recursive: true });
  mkdirSync(home, { recursive: true });
  const transcripts = join(t.path, "transcripts");
  mkdirSync(transcripts, { recursive: true });
  const pool = new ProjectDbPool();
  try {
    for (const f of readdirSync(SCENARIOS)
      .filter((n) => n.endsWith(".jsonl"))
      .sort()) {
      const copy = join(transcripts, f);
      writeFileSync(copy, readFileSync(join(SCENARIOS, f), "utf8").split(SCENARIO_CWD).join(root));
      await ingestFileOnce(copy, "claude", false, { projects: [root], userId: USER, pool });
    }
  } finally {
    pool.close();
  }
  const config = { ...loadConfig(join(home, "absent.toml")), user_id: USER } as ConfigValues;
  const db = openProjectDb(root);
  try {
    clockMs = isoToMs((db.query(`SELECT MAX(timestamp) AS ts FROM events`).get() as { ts: string }).ts) + 3_600_000;
    const deps = {
      config,
      llm: null,
      now: () => clockMs,
      openUserDb: () => openDatabase(join(home, "user.db"), "user"),
      ledger: new StateDbLedger(
        config["llm.daily_token_cap"],
        () => clockMs,
        () => openDatabase(join(home, "state.db"), "state"),
      ),
    };
    for (;;) {
      const batch = unprocessedEvents(db, root, config["daemon.batch_max_events"]);
      if (batch.length === 0) break;
      await processEvents({ project_id: root, user_id: USER, events: batch }, deps);
      markProcessed(
        db,
        batch.map((e) => e.id),
        nowIso(clockMs),
      );
    }
    expect(listEpisodes(db, root).every((e) => e.status === "closed" && e.extracted_at !== null)).toBe(true);
    items = currentItems(db, root);
  } finally {
    db.close();
  }
  const userDb = openDatabase(join(home, "user.db"), "user");
  try {
    globalStyle = listUserStyle(userDb, USER).map((s) => s.content);
  } finally {
    userDb.close();
  }
});

afterAll(() => t.cleanup());

function one(pred: (i: MemoryItem) => boolean, what: string): MemoryItem {
  const hits = items.filter(pred);
  if (hits.length === 0) throw new Error(`no ${what}; items: ${items.map((i) => `${i.type} ${i.key}`).join(", ")}`);
  return hits[0]!;
}

describe("scenario transcripts through capture and the offline engine", () => {
  test("session 1: the JWT `exp` pitfall in src/auth/jwt.ts, with its cause and fix, from the test that failed and then passed", () => {
    const p = one(
      (i) => i.type === "pitfall" && i.file_paths.includes("src/auth/jwt.ts"),
      "pitfall on src/auth/jwt.ts",
    );
    expect(p.content).toContain("`pnpm vitest run test/auth.test.ts` failed");
    expect(p.content).toContain("TypeError: Cannot read properties of undefined (reading 'exp')");
    expect(p.content).toMatch(
      /Cause: The payload can be undefined when the token has no claims, and `exp` is optional\./,
    );
    expect(p.content).toContain("now treats a missing payload or missing `exp` as not expired");
    // The refused default-export edit is not the fix.
    expect(p.content).not.toContain("export default");
  });

  test("session 3: the recipe generate → migrate, and the migration pitfall fixed by generating first", () => {
    const r = one((i) => i.type === "recipe" && i.key === "recipe:migrate", "recipe:migrate");
    expect(r.content).toMatch(/`pnpm db:generate` → `pnpm db:migrate`/);
    const p = one((i) => i.type === "pitfall" && i.key.startsWith("pitfall:migrate:"), "migration pitfall");
    expect(p.content).toContain("Fix: ran `pnpm db:generate`.");
  });

  test("style: pnpm (never npm), `pnpm vitest run` before done, named exports, zod", () => {
    const style = items.filter((i) => i.type === "user_style");
    const pm = one((i) => i.type === "user_style" && i.key === "package_manager", "package_manager style");
    expect(pm.content).toBe("We use pnpm in this repo, never npm.");
    expect(one((i) => i.type === "user_style" && i.key === "test_command", "test_command style").content).toBe(
      "Always run the tests with `pnpm vitest run` before you tell me something is done.",
    );
    const named = one((i) => i.type === "user_style" && /named exports/.test(i.content), "named exports style");
    expect(named.content).toBe("Don't use default exports, we use named exports everywhere.");
    expect(named.file_paths).toEqual(["src/auth/jwt.ts"]); // said right after the refused edit of that file
    const zod = [...style.map((i) => i.content), ...globalStyle].find((c) => /zod/i.test(c));
    expect(zod).toBe("Use zod for validation instead of hand-written checks.");
  });

  test("negatives: no dead-end hypothesis, no pitfall for the unresolved TS2322 build error, no secret anywhere", () => {
    const all = [...items.map((i) => `${i.content}\n${i.key}\n${i.tags.join(" ")}`), ...globalStyle];
    for (const text of all) {
      expect(text).not.toMatch(/postgres(ql)? (is )?not running|not running locally/i);
      expect(text).not.toMatch(/sk-ant-api03/);
    }
    for (const p of items.filter((i) => i.type === "pitfall"))
      expect(`${p.content} ${p.key}`).not.toMatch(/TS2322|reports\/export|csv/i);
    expect(items.some((i) => i.type === "recipe" && /pnpm build/.test(i.content))).toBe(false);
  });

  test("task context with the default budget finds them for the tasks they matter to", async () => {
    const db = openProjectDb(root, { readonly: true });
    try {
      const ctx = retrievalContext(db, root, { nowMs: clockMs, userId: USER });
      const ask = async (task: string, files: string[] = []) =>
        (
          await taskContext(
            ctx,
            TaskContextRequest.parse({ project_id: root, task_description: task, active_file_paths: files }),
          )
        ).selected_memories.map((m) => `${m.type} ${m.content}`);
      expect(
        (await ask("Fix the token expiry check in the JWT login code", ["src/auth/jwt.ts"])).some(
          (m) => m.startsWith("pitfall") && m.includes("exp"),
        ),
      ).toBe(true);
      expect(
        (await ask("Add a new column to the orders table and migrate the database", ["src/db/schema.ts"])).some((m) =>
          /^recipe .*db:generate.*db:migrate/.test(m),
        ),
      ).toBe(true);
      expect(
        (await ask("Add the dayjs dependency to the project", ["package.json"])).some(
          (m) => m.startsWith("user_style") && m.includes("pnpm"),
        ),
      ).toBe(true);
      expect(await ask("Write a haiku about autumn leaves")).toEqual([]);
    } finally {
      db.close();
    }
  });
});
