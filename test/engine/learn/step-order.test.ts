import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { stepOrder } from "../../../src/engine/learn/extract/step-order.ts";
import { ruleDecision } from "../../../src/engine/learn/apply/update.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { editLine as edit, eventRows, HAVE_PACKMIND, packmindInput, type EventLine } from "./helpers.ts";

/**
 * Rule `step-order`: what the user says must come before a recurring action (a release, a commit, a
 * deploy). Two real train sessions give the same instruction; hand-written episodes hold each filter.
 */
const tmp = tempDir("sqrl-step-order-");
afterAll(() => tmp.cleanup());
const ROOT = join(tmp.path, "repo");
mkdirSync(ROOT, { recursive: true });
const HAVE = HAVE_PACKMIND;
const real = (rel: string) => stepOrder(packmindInput(rel, ROOT));

describe.skipIf(!HAVE)("step-order on real train sessions (needs ../shared beside the repo)", () => {
  test("7e-1: 'so test the tag release/0.4.1, but update package.json and changelog.md before'", () => {
    const found = real("7e/b9199a878a/0");
    expect(found.map((c) => [c.key, c.content, c.scope])).toEqual([
      ["rule:before_release", "Before a release, update package.json and changelog.md.", "project"],
    ]);
    // The user's words and the edits that carried the step out.
    expect(found[0]!.source_event_ids.length).toBe(3);
  });

  test("17/1: the same instruction three days earlier meets it under one key", () => {
    expect(real("17/252607bde7/1").map((c) => [c.key, c.content])).toEqual([
      ["rule:before_release", "Before a release, update changelog.md."],
    ]);
  });

  test("sessions without such an instruction give nothing", () => {
    for (const rel of ["1b/0a9a02ca76/0", "ba/28f44c88f4/1", "22/c6a4f4faf5/0", "5d/74e4f052ad/0"])
      expect([rel, real(rel)]).toEqual([rel, []]);
  });
});
if (!HAVE) console.log("step-order: ../shared transcripts absent, real-session cases skipped");

const say = (text: string): EventLine => ({ type: "user_message", text });
const run = (lines: EventLine[]) => stepOrder(ruleInput("ep_syn", ROOT, eventRows(ROOT, lines)));

describe("step-order: what the instruction must be", () => {
  test("before a commit, the step named and then taken", () => {
    expect(
      run([say("Before you commit, regenerate docs/cli.md first"), edit("docs/cli.md")]).map((c) => c.content),
    ).toEqual(["Before committing, regenerate docs/cli.md."]);
    expect(
      run([say("commit this, but run the formatter and update README.md first"), edit("README.md")]).map(
        (c) => c.content,
      ),
    ).toEqual(["Before committing, update README.md."]);
  });

  test("a step the session never took is not stored", () => {
    expect(run([say("Tag release/1.2.0, but update CHANGELOG.md before"), edit("src/app.ts")])).toEqual([]);
  });

  test("questions, waiting on the user, steps without a file, and no recurring action: nothing", () => {
    expect(run([say("Should I update CHANGELOG.md before the release?"), edit("CHANGELOG.md")])).toEqual([]);
    expect(run([say("Don't push before I update notes.md"), edit("notes.md")])).toEqual([]);
    expect(run([say("Release it, but update the docs first"), edit("docs/index.md")])).toEqual([]);
    expect(run([say("Update config.ts first, then the tests"), edit("config.ts")])).toEqual([]);
  });

  test("plans are the assistant's text", () => {
    const plan = "Implement the following plan:\n\n# Release\n\nBump package.json first, then tag the release.";
    expect(run([say(plan), edit("package.json")])).toEqual([]);
  });
});

describe("consolidation: the same thing told again with more", () => {
  test("the fuller text replaces the stored one; the same text again is a near-duplicate", () => {
    const stored = [
      {
        id: "mem_1",
        content: "Before a release, update changelog.md.",
        importance: 0.8,
        confidence: 0.8,
        updated_at: "2026-02-23T10:00:00Z",
        tags: ["step-order"],
      },
    ];
    const fuller = {
      type: "user_style" as const,
      key: "rule:before_release",
      content: "Before a release, update package.json and changelog.md.",
      tags: ["step-order"],
      importance: 0.8,
      confidence: 0.8,
      scope: "project" as const,
      file_paths: [],
      source_episode_id: "ep_2",
      source_event_ids: ["evt_2"],
      rule: "step-order",
    };
    expect(ruleDecision(fuller, stored).verb).toBe("UPDATE_EXISTING");
    expect(ruleDecision({ ...fuller, content: stored[0]!.content }, stored).verb).toBe("NOOP");
    // Fewer words than stored (a shorter retelling) keeps the stored text.
    const fullerStored = [{ ...stored[0]!, content: fuller.content }];
    expect(ruleDecision({ ...fuller, content: "Before a release, update changelog.md." }, fullerStored).verb).toBe(
      "NOOP",
    );
  });
});
