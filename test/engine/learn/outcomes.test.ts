/**
 * Outcome grading and decay (issue 15 item 3) on a real data.db: a recipe whose commands fail in two
 * later episodes is demoted and flagged (not when a success follows); a memory neither served nor
 * seen for the decay period loses a fifth of its importance, once per period, and is never deleted; a
 * pitfall whose error comes back after its fix is flagged, and gains importance when it had been served.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { commandRuns } from "../../../src/engine/events/commands.ts";
import { toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { failureKey } from "../../../src/engine/learn/extract/pitfalls.ts";
import { gradeOutcomes } from "../../../src/engine/learn/outcomes.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { getMemoryItem } from "../../../src/sql/memory-items.ts";
import { addEpisode, addItem, tempProject } from "../retrieve/helpers.ts";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
const DAY = 86_400_000;
let p: ReturnType<typeof tempProject>;
beforeEach(() => {
  p = tempProject("sqrl-outcomes-");
});
afterEach(() => p.cleanup());

const RECIPE = "Before pushing, run `npm run lint` and then `npm test`.";

function lintEpisode(id: string, daysAgo: number, exit: number): void {
  addEpisode(
    p.db,
    p.root,
    {
      id,
      days_ago: daysAgo,
      summary: "lint",
      events: [
        {
          type: "command_run",
          at: 1,
          content: {
            command: "npm run lint",
            exit_code: exit,
            is_error: exit !== 0,
            output: exit === 0 ? "ok" : "error: 3 problems",
          },
        },
      ],
    },
    NOW,
  );
}

const outcome = (id: string) =>
  p.db.query("SELECT * FROM memory_outcomes WHERE memory_id = ?").get(id) as {
    flag: string | null;
    flag_reason: string | null;
    decay_steps: number;
  } | null;

/** The recipe every recipe test grades: stored ten days ago, importance 0.6. */
const pushRecipe = () =>
  addItem(p.db, p.root, { type: "recipe", key: "recipe:push", content: RECIPE, importance: 0.6, age_days: 10 }, NOW);

describe("recipes graded by what happened next", () => {
  test("commands failing in two later episodes without a success since: demoted and flagged", () => {
    const r = pushRecipe();
    lintEpisode("ep_a", 5, 1);
    expect(gradeOutcomes(p.db, p.root, NOW).flagged).toEqual([]);
    lintEpisode("ep_b", 3, 1);
    expect(gradeOutcomes(p.db, p.root, NOW).flagged).toEqual([r.id]);
    expect(getMemoryItem(p.db, r.id)!.importance).toBe(0.3);
    expect(outcome(r.id)).toMatchObject({ flag: "recipe_failing" });
    expect(outcome(r.id)!.flag_reason).toContain("failed in 2 later episodes");
    // Graded once: a later pass does not halve it again.
    gradeOutcomes(p.db, p.root, NOW);
    expect(getMemoryItem(p.db, r.id)!.importance).toBe(0.3);
  });

  test("a success after the failures keeps the recipe", () => {
    const r = pushRecipe();
    lintEpisode("ep_a", 6, 1);
    lintEpisode("ep_b", 5, 1);
    lintEpisode("ep_c", 2, 0);
    expect(gradeOutcomes(p.db, p.root, NOW).flagged).toEqual([]);
    expect(getMemoryItem(p.db, r.id)!.importance).toBe(0.6);
  });
});

describe("the engine's pass reads only the episodes it just extracted", () => {
  test("a recipe failing in two later batches is flagged from what each pass recorded", () => {
    const r = pushRecipe();
    lintEpisode("ep_a", 5, 1);
    expect(gradeOutcomes(p.db, p.root, NOW, 90, ["ep_a"]).flagged).toEqual([]);
    lintEpisode("ep_b", 3, 1);
    // Only ep_b is read now; ep_a's failure comes from the first pass's observation.
    expect(gradeOutcomes(p.db, p.root, NOW, 90, ["ep_b"]).flagged).toEqual([r.id]);
    expect(getMemoryItem(p.db, r.id)!.importance).toBe(0.3);
  });

  test("episodes outside the pass are not read", () => {
    pushRecipe();
    lintEpisode("ep_a", 5, 1);
    lintEpisode("ep_b", 3, 1);
    // Both failing episodes exist, but this pass was handed one: one failure is not enough.
    expect(gradeOutcomes(p.db, p.root, NOW, 90, ["ep_b"]).flagged).toEqual([]);
    // The full pass reads them all.
    expect(gradeOutcomes(p.db, p.root, NOW).flagged).toHaveLength(1);
  });
});

describe("decay of unused memories", () => {
  test("neither served nor seen for 90 days: importance × 0.8 once per period, never deleted; a served one keeps its importance", () => {
    const old = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "old",
        content: "The queue worker lives in worker/.",
        importance: 0.5,
        age_days: 120,
      },
      NOW,
    );
    const served = addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "served", content: "The API lives in api/.", importance: 0.5, age_days: 120 },
      NOW,
    );
    const fresh = addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "fresh", content: "Docs live in docs/.", importance: 0.5, age_days: 10 },
      NOW,
    );
    p.db
      .query(
        "INSERT INTO tool_calls (ts, tool, args_json, memory_ids, latency_ms) VALUES (?, 'get_task_context', '{}', ?, 1)",
      )
      .run(nowIso(NOW - 20 * DAY), JSON.stringify([served.id]));
    expect(gradeOutcomes(p.db, p.root, NOW).decayed).toEqual([old.id]);
    expect(getMemoryItem(p.db, old.id)!.importance).toBe(0.4);
    expect(getMemoryItem(p.db, old.id)!.updated_at).toBe(old.updated_at);
    expect(getMemoryItem(p.db, served.id)!.importance).toBe(0.5);
    expect(getMemoryItem(p.db, fresh.id)!.importance).toBe(0.5);
    expect(gradeOutcomes(p.db, p.root, NOW + DAY).decayed).toEqual([]);
    expect(gradeOutcomes(p.db, p.root, NOW + 91 * DAY).decayed).toContain(old.id);
    expect(outcome(old.id)!.decay_steps).toBe(2);
    expect(getMemoryItem(p.db, old.id)!.deleted).toBe(false);
  });

  test("the period is configurable", () => {
    const item = addItem(
      p.db,
      p.root,
      { type: "project_fact", key: "k", content: "Something true.", importance: 0.5, age_days: 20 },
      NOW,
    );
    expect(gradeOutcomes(p.db, p.root, NOW).decayed).toEqual([]);
    expect(gradeOutcomes(p.db, p.root, NOW, 14).decayed).toEqual([item.id]);
  });
});

describe("pitfalls graded by what happened next", () => {
  const FAILING = "FAIL src/auth/jwt.test.ts\nTypeError: Cannot read properties of undefined (reading 'exp')";
  function testEpisode(id: string, daysAgo: number): void {
    addEpisode(
      p.db,
      p.root,
      {
        id,
        days_ago: daysAgo,
        summary: "tests",
        events: [
          {
            type: "test_run",
            at: 1,
            content: {
              command: "npx vitest run",
              exit_code: 1,
              is_error: true,
              output: FAILING,
              runner: "vitest",
              failed: 1,
              passed: 0,
            },
          },
        ],
      },
      NOW,
    );
  }
  const keyOfFailure = () => {
    const row = p.db.query("SELECT * FROM events WHERE event_type = 'test_run' LIMIT 1").get() as Parameters<
      typeof toEngineEvent
    >[0];
    return failureKey(commandRuns([toEngineEvent(row)])[0]!)!;
  };

  /** The failure's key, learnt from a probe episode that is then cleared, and a pitfall stored under it. */
  function storedPitfall(content: string) {
    testEpisode("ep_probe", 30);
    const key = keyOfFailure();
    p.db.query("DELETE FROM episode_events").run();
    p.db.query("DELETE FROM events").run();
    p.db.query("DELETE FROM episodes").run();
    return addItem(p.db, p.root, { type: "pitfall", key, content, importance: 0.7, age_days: 10 }, NOW);
  }

  test("the error back after the fix: the fix is marked not sufficient; served before it came back: importance raised once", () => {
    const pit = storedPitfall("`npx vitest run` failed: TypeError reading 'exp'. Fix: guard a missing exp.");
    expect(pit.key).toStartWith("pitfall:test:");
    p.db
      .query(
        "INSERT INTO tool_calls (ts, tool, args_json, memory_ids, latency_ms) VALUES (?, 'get_task_context', '{}', ?, 1)",
      )
      .run(nowIso(NOW - 6 * DAY), JSON.stringify([pit.id]));
    testEpisode("ep_again", 4);
    const res = gradeOutcomes(p.db, p.root, NOW);
    expect(res.flagged).toEqual([pit.id]);
    expect(res.promoted).toEqual([pit.id]);
    expect(outcome(pit.id)).toMatchObject({ flag: "fix_insufficient" });
    expect(outcome(pit.id)!.flag_reason).toContain("the fix was not sufficient");
    expect(getMemoryItem(p.db, pit.id)!.importance).toBe(0.8);
    expect(gradeOutcomes(p.db, p.root, NOW + 1000).promoted).toEqual([]);
    expect(getMemoryItem(p.db, pit.id)!.importance).toBe(0.8);
  });

  test("the engine's pass: the failure in the batch it just extracted flags the pitfall", () => {
    const pit = storedPitfall("`npx vitest run` failed: TypeError reading 'exp'.");
    testEpisode("ep_again", 4);
    expect(gradeOutcomes(p.db, p.root, NOW, 90, []).flagged).toEqual([]); // handed nothing, reads nothing
    expect(gradeOutcomes(p.db, p.root, NOW, 90, ["ep_again"]).flagged).toEqual([pit.id]);
    expect(outcome(pit.id)).toMatchObject({ flag: "fix_insufficient" });
  });
});

describe("decay counts from when sqrl learned a memory (issue 29 item 3)", () => {
  test("history imported today is not decayed, though its evidence is older than the period; 90 days later it is, and `sqrl show` and the page say it alike", async () => {
    const { insertMemoryItem } = await import("../../../src/sql/memory-items.ts");
    const { memoryDetail } = await import("../../../src/engine/retrieve/browse.ts");
    const { renderShow, showMemory } = await import("../../../src/cli/show.ts");
    const base = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "seen",
        content: "The queue worker lives in worker/.",
        importance: 0.5,
        age_days: 200,
      },
      NOW,
    );
    // The same, but learned today from a 200-day-old episode (a backfill).
    const imported = insertMemoryItem(p.db, {
      ...base,
      id: "mem_imported",
      key: "imported",
      content: "Docs live in docs/.",
      learned_at: nowIso(NOW),
    });
    expect(imported.learned_at).toBe(nowIso(NOW));
    expect(gradeOutcomes(p.db, p.root, NOW).decayed).toEqual([base.id]);
    expect(memoryDetail(p.db, p.root, imported.id).notes).toEqual([]);
    expect(gradeOutcomes(p.db, p.root, NOW + 91 * DAY).decayed).toContain(imported.id);
    const notes = memoryDetail(p.db, p.root, imported.id).notes;
    expect(notes).toEqual([expect.stringContaining("importance decayed 1× for disuse")]);
    expect(notes[0]).toContain("since sqrl learned it");
    const shown = renderShow(await showMemory(p.root, imported.id));
    expect(shown).toContain(`  ${notes[0]}\n`);
  });
});
