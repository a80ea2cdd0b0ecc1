/**
 * Memory marks (data.db v4) and the update step that honours them: a memory marked wrong is not made
 * again from the same evidence (other evidence may make it again); a pinned memory keeps its words
 * and its importance when the extractor sees it again.
 */
import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Candidate } from "../../../src/engine/learn/extract/candidate.ts";
import { applyProjectDecision, projectAnchorItems, ruleDecision } from "../../../src/engine/learn/apply/update.ts";
import { forgetMemory } from "../../../src/engine/learn/forget.ts";
import { getMemoryItem } from "../../../src/sql/memory-items.ts";
import { isPinned, marksOf, pinnedIds, putMark, wrongMarkFor } from "../../../src/sql/memory-marks.ts";
import { openDatabase } from "../../../src/sql/open.ts";
import { tempDir } from "../../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
let db: Database;
const PROJECT = "/repo";

function candidate(over: Partial<Candidate> = {}): Candidate {
  return {
    type: "project_fact",
    key: "framework",
    content: "The API server is built with Express 4.",
    tags: ["framework"],
    importance: 0.6,
    confidence: 0.7,
    scope: "project",
    file_paths: ["src/server.ts"],
    source_episode_id: "ep_1",
    source_event_ids: ["evt_1", "evt_2"],
    rule: "test",
    ...over,
  };
}

function apply(c: Candidate, nowMs = Date.parse("2026-01-01T00:00:00Z")): string {
  const d = ruleDecision(c, projectAnchorItems(db, PROJECT, c));
  return db
    .transaction(() => applyProjectDecision(db, c, d, { projectId: PROJECT, extractor: "offline", nowMs }))
    .immediate();
}

beforeEach(() => {
  dir = tempDir();
  db = openDatabase(join(dir.path, "data.db"), "data");
});
afterEach(() => {
  db.close();
  dir.cleanup();
});

describe("mark wrong holds the extractor back", () => {
  test("the same evidence does not make the memory again; other evidence does", () => {
    const id = apply(candidate());
    const item = getMemoryItem(db, id)!;
    db.transaction(() => {
      forgetMemory(db, null, id, "2026-01-02T00:00:00Z");
      putMark(db, item, "wrong", "2026-01-02T00:00:00Z", { reason: "we moved to Hono" });
    })();
    expect(marksOf(db, id)).toEqual([
      expect.objectContaining({ kind: "forget", type: "project_fact", key: "framework" }),
      expect.objectContaining({
        kind: "wrong",
        reason: "we moved to Hono",
        evidence_episode_ids: ["ep_1"],
        evidence_event_ids: ["evt_1", "evt_2"],
      }),
    ]);

    // Re-extracting the same episode (sqrl reprocess, a replay) answers with the marked item, adds nothing.
    expect(apply(candidate())).toBe(id);
    expect(apply(candidate({ source_episode_id: "ep_other", source_event_ids: ["evt_2"] }))).toBe(id);
    expect(projectAnchorItems(db, PROJECT, candidate())).toEqual([]);

    // A later episode that says it again (in other words at most) does not bring it back either:
    // the person's mark is final (issue 29). Something else on the same key is still learned.
    expect(apply(candidate({ source_episode_id: "ep_2", source_event_ids: ["evt_9"] }))).toBe(id);
    expect(
      apply(
        candidate({
          content: "The API server is built with Express 4 (from package.json).",
          source_episode_id: "ep_3",
        }),
      ),
    ).toBe(id);
    expect(projectAnchorItems(db, PROJECT, candidate())).toEqual([]);
    const fresh = apply(
      candidate({
        content: "The API server is built with Hono.",
        value: "hono",
        source_episode_id: "ep_4",
        source_event_ids: ["evt_10"],
      }),
    );
    expect(fresh).not.toBe(id);
    expect(getMemoryItem(db, fresh)!.deleted).toBe(false);
    expect(wrongMarkFor(db, candidate({ key: "database" }))).toBeUndefined();
  });
});

describe("pin", () => {
  test("the extractor keeps a pinned item's content and importance, adding only evidence", () => {
    const id = apply(candidate());
    db.transaction(() => {
      db.query(`UPDATE memory_items SET importance = 1 WHERE id = ?`).run(id);
      putMark(db, getMemoryItem(db, id)!, "pin", "2026-01-02T00:00:00Z", { importance: 1 });
    })();
    expect(isPinned(db, id)).toBe(true);
    expect([...pinnedIds(db)]).toEqual([id]);
    // Near-duplicate (NOOP) and a contradiction (would be DELETE_AND_ADD) both leave it as it is.
    expect(apply(candidate({ source_episode_id: "ep_2", source_event_ids: ["evt_3"] }))).toBe(id);
    expect(
      apply(
        candidate({
          content: "The API server is built with Fastify and pino logging.",
          value: "fastify",
          source_episode_id: "ep_3",
          source_event_ids: ["evt_4"],
        }),
      ),
    ).toBe(id);
    const after = getMemoryItem(db, id)!;
    expect(after.deleted).toBe(false);
    expect(after.content).toBe("The API server is built with Express 4.");
    expect(after.importance).toBe(1);
    // The near-duplicate's episode is evidence; the contradiction's is not.
    expect(after.evidence_episode_ids).toEqual(["ep_1", "ep_2"]);
  });
});

describe("marks through real extraction and sqrl reprocess", () => {
  test("re-extracting the same episodes keeps a pinned item and does not make a wrong one again", async () => {
    const { processEvents } = await import("../../../src/engine/learn/process-events.ts");
    const { reprocessProject } = await import("../../../src/engine/learn/reprocess.ts");
    const { currentItems } = await import("../../../src/sql/memory-items.ts");
    const { addProject } = await import("../../../src/shared/projects.ts");
    const { markWrong, pinMemory } = await import("../../../src/engine/learn/curate.ts");
    const { fixtureEvents, request, sandbox } = await import("./helpers.ts");
    const sb = sandbox();
    try {
      await processEvents(
        request(sb.root, fixtureEvents("preferences", sb.root, { baseMs: Date.parse("2026-03-02T09:00:00Z") })),
        sb.deps(),
      );
      addProject(sb.root, join(sb.home, "projects.json"));
      const extracted = currentItems(sb.db, sb.root).filter(
        (i) => i.extractor === "offline" && i.source_event_ids.length > 0,
      );
      expect(extracted.length).toBeGreaterThanOrEqual(2);
      const pinned = extracted[0]!;
      const wrong = extracted[1]!;
      pinMemory(sb.db, { project_id: sb.root, memory_id: pinned.id, pinned: true, importance: 1 });
      markWrong(sb.db, { project_id: sb.root, memory_id: wrong.id, reason: "not how we work" });

      await reprocessProject(sb.db, sb.root, sb.deps());
      const after = currentItems(sb.db, sb.root);
      expect(after.find((i) => i.id === pinned.id)).toMatchObject({ content: pinned.content, importance: 1 });
      expect(isPinned(sb.db, pinned.id)).toBe(true);
      expect(after.filter((i) => i.type === wrong.type && i.key === wrong.key)).toEqual([]);
      expect(getMemoryItem(sb.db, wrong.id)).toMatchObject({ deleted: true, superseded_by: null });
    } finally {
      sb.cleanup();
    }
  });
});

describe("a person's correction wins over every extractor (issue 29)", () => {
  test("an edit keeps its words against the old wording, a rewording and a contradiction; the old wording is not made again", async () => {
    const { editMemory } = await import("../../../src/engine/learn/curate.ts");
    const id = apply(candidate());
    const edited = editMemory(db, {
      project_id: PROJECT,
      memory_id: id,
      content: "The API server runs Express 4 behind nginx.",
    });
    // The old wording, from a later episode; a reworded update; a contradiction: the person's version stands.
    apply(candidate({ source_episode_id: "ep_2", source_event_ids: ["evt_5"] }));
    apply(candidate({ content: "The API server is built with Express 4 and helmet.", source_episode_id: "ep_3" }));
    apply(candidate({ content: "The API server is built with Koa.", value: "koa", source_episode_id: "ep_4" }));
    const now = projectAnchorItems(db, PROJECT, candidate());
    expect(now.map((i) => [i.id, i.content, i.extractor])).toEqual([
      [edited.memory_id, "The API server runs Express 4 behind nginx.", "manual"],
    ]);
    expect(now[0]!.evidence_episode_ids).toEqual(["ep_1", "ep_2", "ep_3"]);
    expect(marksOf(db, id).map((m) => m.kind)).toEqual(["edit"]);
  });

  test("`sqrl import` and a teammate's sync file do not bring back what was forgotten", async () => {
    const { importMemory, toPortable } = await import("../../../src/engine/learn/memory-transfer.ts");
    const id = apply(candidate());
    const portable = toPortable(getMemoryItem(db, id)!);
    forgetMemory(db, null, id, "2026-01-02T00:00:00Z");
    const [outcome] = importMemory(
      db,
      PROJECT,
      [{ ...portable, origin: { ...portable.origin, item_id: "mem_elsewhere" } }],
      {
        userId: "u",
      },
    );
    expect(outcome!.memory_id).toBe(id);
    expect(projectAnchorItems(db, PROJECT, candidate())).toEqual([]);
  });

  test("global style (user.db): a forgotten item is not learned again, an edited one keeps its words", async () => {
    const { applyUserDecision, userAnchorItems } = await import("../../../src/engine/learn/apply/user-style-store.ts");
    const { editMemory } = await import("../../../src/engine/learn/curate.ts");
    const { getUserStyle } = await import("../../../src/sql/user-style.ts");
    const userDb = openDatabase(join(dir.path, "user.db"), "user");
    try {
      const style = (over: Partial<Candidate> = {}) =>
        candidate({
          type: "user_style",
          key: "quotes",
          scope: "user",
          content: "Use single quotes in TypeScript.",
          ...over,
        });
      const learn = (c: Candidate) =>
        userDb
          .transaction(() =>
            applyUserDecision(userDb, "u", c, ruleDecision(c, userAnchorItems(userDb, "u", c.key)), {
              projectId: PROJECT,
              extractor: "offline",
              nowMs: Date.parse("2026-01-01T00:00:00Z"),
            }),
          )
          .immediate();
      const first = learn(style());
      forgetMemory(null, userDb, first, "2026-01-02T00:00:00Z");
      learn(style({ source_episode_id: "ep_9" }));
      expect(getUserStyle(userDb, "u", "quotes")).toBeUndefined();

      const other = learn(style({ key: "semis", content: "End statements with semicolons." }));
      const edited = editMemory(
        db,
        { project_id: PROJECT, memory_id: other, content: "No semicolons: biome adds them." },
        Date.now(),
        userDb,
      );
      learn(style({ key: "semis", content: "End statements with semicolons.", source_episode_id: "ep_7" }));
      learn(
        style({
          key: "semis",
          content: "Always end statements with semicolons, even in tests.",
          source_episode_id: "ep_8",
        }),
      );
      expect(getUserStyle(userDb, "u", "semis")).toMatchObject({
        id: edited.memory_id,
        content: "No semicolons: biome adds them.",
      });
    } finally {
      userDb.close();
    }
  });
});
