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

    // A later episode that shows it again is new evidence.
    const fresh = apply(candidate({ source_episode_id: "ep_2", source_event_ids: ["evt_9"] }));
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
    expect(after.evidence_episode_ids).toEqual(["ep_1", "ep_2", "ep_3"]);
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
