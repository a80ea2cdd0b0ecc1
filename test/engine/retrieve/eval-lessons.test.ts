import { afterAll, expect, test } from "bun:test";
import { lessonCounts } from "../../../src/engine/retrieve/eval/replay-eval.ts";
import { addItem, tempProject } from "./helpers.ts";

/**
 * `sqrl eval` per lesson: a lesson standing in two wordings under two keys (before a consolidation
 * pass merged them) is served when either wording is; needed wordings of one lesson count once; a
 * served item about something else serves nothing.
 */
const proj = tempProject("sqrl-eval-lessons-");
afterAll(() => proj.cleanup());
const now = Date.parse("2026-03-01T00:00:00Z");
const item = (key: string, content: string) =>
  addItem(proj.db, proj.root, { type: "pitfall", key, content, age_days: 3 }, now);

const rtkA = item(
  "pitfall:rtk:no-bun-subcommand",
  "The rtk command wrapper has no `bun` subcommand: `rtk bun run test` fails with \"unrecognized subcommand 'bun'\". Run `bun run test` directly.",
);
const rtkB = item(
  "pitfall:tooling:rtk-command-wrapping",
  "rtk has no `bun` subcommand: `rtk bun run test` fails with \"unrecognized subcommand 'bun'\"; run the bun scripts directly, without rtk.",
);
const clones = item(
  "pitfall:test:tmp-clones-picked-up",
  "Evaluation clones in tmp/clones/ hold their own tests; `bun test src/` runs them and they fail on missing modules.",
);
const hooks = item(
  "frontend-hooks-memoized-return",
  "Frontend hooks such as useEvaluationApi() must return a useMemo'd object, or effects that depend on them loop.",
);

test("another wording of the needed lesson, served, serves it", () => {
  expect(lessonCounts(proj.db, [rtkA], [rtkB, hooks])).toEqual({ needed: 1, served: 1 });
});

test("two needed wordings are one lesson; an unrelated served item serves nothing", () => {
  expect(lessonCounts(proj.db, [rtkA, rtkB, clones], [hooks])).toEqual({ needed: 2, served: 0 });
  expect(lessonCounts(proj.db, [rtkA, rtkB, clones], [clones])).toEqual({ needed: 2, served: 1 });
  expect(lessonCounts(proj.db, [], [rtkA])).toEqual({ needed: 0, served: 0 });
});
