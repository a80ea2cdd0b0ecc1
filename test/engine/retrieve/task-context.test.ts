import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { retrievalContext, type RetrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { NO_RELEVANT_MEMORY, TaskContext, TaskContextRequest } from "../../../src/shared/api.ts";
import { addItem, loadLabelled, seedLabelled, tempProject, type LabelledSet } from "./helpers.ts";

let set: LabelledSet;
let p: ReturnType<typeof tempProject>;
let ctx: RetrievalContext;
beforeAll(() => {
  set = loadLabelled();
  p = tempProject();
  const now = Date.parse(set.now);
  seedLabelled(p.db, p.root, set, now);
  ctx = retrievalContext(p.db, p.root, { nowMs: now, userId: "alice" });
});
afterAll(() => p.cleanup());

const ask = async (task: string, files: string[] = [], extra: Record<string, unknown> = {}) =>
  TaskContext.parse(
    await taskContext(
      ctx,
      TaskContextRequest.parse({
        project_id: p.root,
        task_description: task,
        active_file_paths: files,
        context_budget_tokens: 800,
        ...extra,
      }),
    ),
  );

describe("task_context over the labelled set", () => {
  test("every related task gets a must-have memory, with a reason built from what matched", async () => {
    let mustFound = 0;
    let mustTotal = 0;
    for (const t of set.related) {
      const r = await ask(t.task, t.files);
      const keys = r.selected_memories.map((m) => m.key);
      expect(r.has_relevant_memory).toBe(true);
      if (!t.must.some((k) => keys.includes(k)))
        throw new Error(`"${t.task}": none of ${t.must.join(", ")} selected (got ${keys.join(", ")})`);
      mustFound += t.must.filter((k) => keys.includes(k)).length;
      mustTotal += t.must.length;
      for (const m of r.selected_memories) expect(m.reason.length).toBeGreaterThan(10);
      expect(r.memory_ids).toEqual(r.selected_memories.map((m) => m.memory_id));
    }
    expect(mustFound / mustTotal).toBeGreaterThanOrEqual(0.9);
  });

  test("every unrelated task abstains with the fixed sentence", async () => {
    for (const t of set.unrelated) {
      const r = await ask(t.task, t.files);
      if (r.has_relevant_memory)
        throw new Error(`"${t.task}" did not abstain: ${r.selected_memories.map((m) => m.key).join(", ")}`);
      expect(r.selected_memories).toEqual([]);
      expect(r.markdown.startsWith(NO_RELEVANT_MEMORY)).toBe(true);
      expect(r.markdown).toContain("0 of 0 items shown");
    }
  });

  test("reasons name the matched terms, the active file and the kind of memory", async () => {
    const r = await ask("Fix the flaky JWT refresh test", ["tests/auth.test.ts"]);
    const m = r.selected_memories.find((s) => s.key === "jwt_fake_timers")!;
    expect(m.reason).toContain("jwt");
    expect(m.reason).toContain("tests/auth.test.ts");
    expect(m.reason).toContain("pitfall");
  });

  test('text the model reads is grammatical: no "A your style preference", no "1 items"', async () => {
    const r = await ask("Commit these changes with a good message");
    const style = r.selected_memories.find((m) => m.type === "user_style")!;
    expect(style.reason).toMatch(/Your (high-importance )?style preference/);
    expect(style.reason).not.toContain("A your");
    expect(r.markdown).not.toMatch(/\b1 of \d+ items|of 1 items/);
  });

  test("markdown groups memories by kind under headings", async () => {
    const r = await ask("Validate the request body of POST /inventory", ["src/routes/inventory.ts"]);
    expect(r.markdown).toContain("## Relevant memory for this task");
    expect(r.markdown).toContain("### Pitfalls");
    expect(r.markdown).toContain("### Project facts");
    expect(r.markdown.indexOf("### Pitfalls")).toBeLessThan(r.markdown.indexOf("### Project facts"));
    expect(r.markdown).toMatch(/\d+ days? ago/);
  });

  test("preferred_memory_types filters candidates", async () => {
    const r = await ask("Validate the request body of POST /inventory", ["src/routes/inventory.ts"], {
      preferred_memory_types: ["pitfall"],
    });
    expect(r.selected_memories.length).toBeGreaterThan(0);
    expect(r.selected_memories.every((m) => m.type === "pitfall")).toBe(true);
  });

  test("exclude_memory_ids skips what the session already saw and counts it", async () => {
    const first = await ask("Integration tests deadlock when they run in parallel", ["tests/setup.ts"]);
    const second = await ask("Integration tests deadlock when they run in parallel", ["tests/setup.ts"], {
      exclude_memory_ids: first.memory_ids,
    });
    expect(second.omitted_seen).toBe(first.memory_ids.length);
    expect(second.memory_ids.some((id) => first.memory_ids.includes(id))).toBe(false);
    expect(second.has_relevant_memory).toBe(true);
    expect(second.markdown).toContain(`${first.memory_ids.length} omitted as already shown`);
  });

  test("another project's items are never candidates", async () => {
    const other = tempProject();
    try {
      const octx = retrievalContext(p.db, other.root, { nowMs: ctx.nowMs });
      const r = await taskContext(
        octx,
        TaskContextRequest.parse({ project_id: other.root, task_description: "Run the tests" }),
      );
      expect(r.has_relevant_memory).toBe(false);
    } finally {
      other.cleanup();
    }
  });
});

describe("identifiers no memory names", () => {
  test("an unknown function name or ticket id does not sink a memory that matches the rest of the task", async () => {
    const q = tempProject();
    try {
      const now = Date.parse("2025-11-25T10:00:00.000Z");
      // The name's parts are everyday words of this project (transcripts, bytes, builds): they must
      // not count against the lint pitfall, which matches everything else the task says.
      addItem(
        q.db,
        q.root,
        {
          type: "pitfall",
          key: "exhaustive",
          content:
            "The exhaustive lint fails on a switch over EventKind that misses a case; add the case, not a default.",
          importance: 0.6,
        },
        now,
      );
      addItem(
        q.db,
        q.root,
        {
          type: "project_fact",
          key: "transcripts",
          content: "Transcripts are read as bytes and condensed before the summary is built.",
          importance: 0.6,
        },
        now,
      );
      addItem(
        q.db,
        q.root,
        {
          type: "project_fact",
          key: "build",
          content: "The build writes bytes of each transcript to dist/.",
          importance: 0.5,
        },
        now,
      );
      addItem(
        q.db,
        q.root,
        { type: "user_style", key: "docs", content: "Keep our working documentation in Linear.", importance: 0.7 },
        now,
      );
      const qctx = retrievalContext(q.db, q.root, { nowMs: now });
      const ask2 = async (task: string) =>
        (
          await taskContext(qctx, TaskContextRequest.parse({ project_id: q.root, task_description: task }))
        ).selected_memories.map((m) => m.key);
      expect(await ask2("fix the exhaustive lint failure")).toContain("exhaustive");
      expect(await ask2("fix the exhaustive lint failure in BuildCondensedTranscriptFromBytes")).toContain(
        "exhaustive",
      );
      expect(await ask2("write the ENT-98 working notes")).toContain("docs");
      expect(await ask2("Rename the computeHaikuSyllables helper")).toEqual([]);
    } finally {
      q.cleanup();
    }
  });
});
