import { describe, expect, test } from "bun:test";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { pitfalls } from "../../../src/engine/learn/extract/pitfalls.ts";
import { editLine as edit, eventRows, type EventLine } from "./helpers.ts";

/**
 * The pitfall gate's order: a test brought in line with the code is routine even when the user spoke
 * in between (in an unseen entireio session the user said "fix the test, the code is right", and the
 * updated expectation was stored as a user-remarked lesson; a fresh reviewer rejected it).
 */
const ROOT = "/work/repo";
const failing: EventLine = {
  type: "test_run",
  command: "go test ./...",
  exit_code: 1,
  output: '--- FAIL: TestResetCmd_NotGitRepo\n    reset_test.go:41: expected "not a git repository"\nFAIL',
  failed: 1,
};
const passing: EventLine = {
  type: "test_run",
  command: "go test ./...",
  exit_code: 0,
  output: "ok  cli 0.4s",
  passed: 3,
};
const run = (lines: EventLine[]) => pitfalls(ruleInput("ep_gate", ROOT, eventRows(ROOT, lines)));

describe("pitfall gate: what the user says does not make a test update a lesson", () => {
  test("only the test file changed after the user's words: nothing", () => {
    const user: EventLine = { type: "user_message", text: "fix the test, the code is right" };
    expect(run([failing, user, edit("cmd/cli/reset_test.go"), passing])).toEqual([]);
  });

  test("the source changed after the user stepped in and stated the cause: a lesson the user remarked on", () => {
    const user: EventLine = {
      type: "user_message",
      text: "It fails because the reset command prints the not a git repository error to stdout; it goes to stderr.",
    };
    const [p] = run([failing, user, edit("cmd/cli/reset.go"), passing]);
    expect(p?.tags).toContain("user-remarked");
    expect(p?.gate).toBeUndefined();
  });

  test("no cause stated, or one about something else: no lesson (precision first)", () => {
    const steer: EventLine = { type: "user_message", text: "the command must print to stderr, not stdout" };
    expect(run([failing, steer, edit("cmd/cli/reset.go"), passing])).toEqual([]);
    // A causal sentence near the failure that names nothing it shows is not its cause.
    const unrelated: EventLine = {
      type: "assistant_response",
      text: "The hooks are registered because you ran the installer earlier, so restart your Claude session.",
    };
    expect(run([failing, unrelated, edit("cmd/cli/reset.go"), passing])).toEqual([]);
  });
});
