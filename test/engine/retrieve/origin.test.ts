/**
 * Who said it (issue 29 item 6): a rule read from CLAUDE.md (stores made before issue 26 stopped
 * copying it still hold such items) is served as the project's, under its own heading, with its file
 * and line; a rule the user stated reads as theirs; a habit as learned from sessions; an edit as the
 * person's words — in task context, search, the user_style view and the page's rows alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { listMemories } from "../../../src/engine/retrieve/browse.ts";
import { retrievalContext, type RetrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { userStyleView } from "../../../src/engine/retrieve/views/user-style.ts";
import { MemoryListQuery, SearchQuery, TaskContextRequest, ViewQuery } from "../../../src/shared/api.ts";
import { addItem, tempProject } from "./helpers.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
let p: ReturnType<typeof tempProject>;
let ctx: RetrievalContext;
beforeAll(() => {
  p = tempProject("sqrl-origin-");
  const item = (key: string, content: string, tags: string[], extractor: string, file_paths: string[] = []) =>
    addItem(p.db, p.root, { type: "user_style", key, content, tags, extractor, file_paths, importance: 0.8 }, NOW);
  item(
    "pref:run_evaluation_before_merg_scor",
    "Always run the evaluation with `bun run eval` before merging a scoring change (CLAUDE.md:5).",
    ["convention", "repo-file", "do"],
    "offline",
    ["CLAUDE.md"],
  );
  item(
    "pref:squash_merge_scoring",
    "Squash-merge scoring changes after the evaluation passes.",
    ["preference", "do"],
    "offline",
  );
  item("eval_command", "Runs the evaluation with `bun run eval --fast`.", ["tooling", "eval"], "offline");
  item("pref:evaluation_report", "Attach the evaluation report to every scoring merge request.", ["do"], "manual");
  ctx = retrievalContext(p.db, p.root, { nowMs: NOW, userId: "alice", verify: false });
});
afterAll(() => p.cleanup());

test("task context and search: the CLAUDE.md rule is the project's, under its own heading; the others say whose they are", async () => {
  const res = await taskContext(
    ctx,
    TaskContextRequest.parse({
      project_id: p.root,
      task_description: "merge a scoring change after running the evaluation",
      context_budget_tokens: 800,
    }),
  );
  const reason = (key: string) => res.selected_memories.find((m) => m.key === key)?.reason ?? "";
  expect(reason("pref:run_evaluation_before_merg_scor")).toContain("A high-importance project rule from CLAUDE.md:5");
  expect(reason("pref:run_evaluation_before_merg_scor")).not.toMatch(/you stated|your style|as you said/i);
  expect(reason("pref:squash_merge_scoring")).toContain("as you said it");
  expect(reason("eval_command")).toContain("learned from your sessions");
  expect(reason("pref:evaluation_report")).toContain("in your words");
  const [style, files] = res.markdown.split("### From the project's files");
  expect(files).toContain("(CLAUDE.md:5)");
  expect(style).toContain("### Your style");
  expect(style).not.toContain("CLAUDE.md");

  const found = await searchMemory(
    ctx,
    SearchQuery.parse({ project_id: p.root, query: "evaluation before merging scoring", context_budget_tokens: 800 }),
  );
  expect(found.markdown).toContain("### From the project's files\n- Always run the evaluation");
});

test("the user_style view lists it under the project's files, not as your style; the page names each origin", async () => {
  const view = await userStyleView(
    ctx,
    ViewQuery.parse({ project_id: p.root, mode: "full", context_budget_tokens: 800 }),
  );
  const [yours, files] = view.markdown.split("### From the project's files");
  expect(files).toContain("(CLAUDE.md:5)");
  expect(yours).not.toContain("CLAUDE.md");

  const list = await listMemories(ctx, MemoryListQuery.parse({ project_id: p.root }));
  expect(Object.fromEntries(list.items.map((i) => [i.key, i.origin]))).toEqual({
    "pref:run_evaluation_before_merg_scor": "From CLAUDE.md:5",
    "pref:squash_merge_scoring": "You said it",
    eval_command: "Learned from your sessions",
    "pref:evaluation_report": "Your edit",
  });
});
