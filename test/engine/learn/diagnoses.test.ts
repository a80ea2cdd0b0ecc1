import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { findDiagnoses, lessonText, rejectReason } from "../../../src/engine/learn/extract/diagnoses.ts";
import { extractOffline, ruleInput } from "../../../src/engine/learn/extract/index.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { HAVE_PACKMIND, packmindInput, USER } from "./helpers.ts";

/**
 * Rule `diagnoses`: lessons from the assistant's root-cause explanations. Real train sessions of
 * ../shared (each asserted text was checked by reading the transcript), then one small synthetic
 * episode per filter.
 */
const tmp = tempDir("sqrl-diagnoses-");
afterAll(() => tmp.cleanup());
const ROOT = join(tmp.path, "repo");
mkdirSync(ROOT, { recursive: true });

const HAVE = HAVE_PACKMIND;

function real(rel: string) {
  const input = packmindInput(rel, ROOT);
  const trace: Array<[string, string]> = [];
  const found = findDiagnoses(input, (s, v) => trace.push([s, v]));
  return { found, trace, offline: extractOffline(input) };
}

describe.skipIf(!HAVE)("diagnoses on real train sessions (needs ../shared beside the repo)", () => {
  test("be-1: a library's behaviour, the pronoun clause dropped, kept after the edit and a green run", () => {
    const { found } = real("be/0878c3d75d/0");
    expect(found.map((c) => c.content)).toEqual(["`Bun.spawn` doesn't throw on non-zero exit codes."]);
    expect(found[0]!.key).toBe("pitfall:diagnosis:bun.spawn:doesnt_throw");
    expect(found[0]!.tags).toContain("diagnosis");
    expect(found[0]!.type).toBe("pitfall");
  });

  test("8b2-1: the project's own code is not a lasting lesson (engine.ts was changed nine days later)", () => {
    const { found, trace } = real("8b/c8fff8c659/2");
    expect(found).toEqual([]);
    expect(trace.find(([s]) => s.includes("prioritizes `repositoryUrl`"))?.[1]).toBe("project code");
    // "When both are provided, `repositoryUrl` wins …" needs the heading to say what "both" is.
    expect(trace.find(([s]) => s.startsWith("When both are provided"))?.[1]).toBe("not standalone");
  });

  test("7e-4: a tool filtering output, and the command that bypassed it", () => {
    const { found } = real("7e/b9199a878a/0");
    // Which output: the command run just before the statement.
    expect(found.map((c) => c.content)).toEqual([
      "RTK filters the output of `gh api`; bypass it with `rtk proxy gh api …`.",
    ]);
  });

  test("6b-1: an invalid CLI value completed by the valid ones; the announcing lead-in dropped", () => {
    const { found } = real("6b/7fad164b2b/0");
    expect(found.map((c) => c.content)).toEqual([
      "`network-only` is not a valid `--sandbox` value for the Codex CLI. The valid values are `read-only`, `workspace-write`, `danger-full-access`.",
    ]);
    expect(found[0]!.key).toStartWith("pitfall:diagnosis:codex_cli:");
    // The error the user pasted already listed the valid values: a lesson only if it comes back
    // (reviewers of rounds 6–8 rejected it stored from one episode).
    expect(found[0]!.gate?.kind).toBe("pitfall");
  });

  test("1b0-1: what a CLI requires, from an approved plan's context, with the flag its change passed, kept once the fix passed its checks", () => {
    const { found } = real("1b/0a9a02ca76/0");
    expect(found.map((c) => c.content)).toEqual([
      "The Cursor Agent CLI requires explicit workspace trust when running non-interactively; pass `--trust`.",
    ]);
    expect(found[0]!.key).toBe("pitfall:diagnosis:cursor_agent_cli:requires_explicit_workspace");
  });

  test("ba-2: the hook's scope without its consequence ('so it catches those too') says nothing wrong: not kept", () => {
    // Stored once as "The pre-commit hook runs lint on the entire codebase.": two reviewers rejected it
    // for leaving out the point (other people's uncommitted edits can block your commit).
    const { found, trace } = real("ba/28f44c88f4/1");
    expect(found).toEqual([]);
    expect(trace.find(([s]) => s.includes("runs lint on the entire codebase"))?.[1]).toBe("not standalone");
  });

  test("5e: a plan's cause about the hook the fix then rewrote describes the code before the change", () => {
    const { found, trace } = real("5e/d6fd664d05/0");
    expect(found).toEqual([]);
    expect(trace.find(([s]) => s.startsWith("This happens because `useEvaluationApi()`"))?.[1]).toBe("project code");
  });

  test("20b: an explanation never followed by a fix (the session ends on a question) is not kept", () => {
    const { found, trace } = real("20/b41b43efc7/0");
    expect(found).toEqual([]);
    expect(trace.find(([s]) => s.startsWith("The typecheck failure is from missing generated files"))?.[1]).toBe(
      "no fix followed",
    );
  });

  test("4a: before-state explanations of a bug ('still set') are not lessons", () => {
    const { found, trace } = real("4a/ff29dfc8d7/1");
    expect(found).toEqual([]);
    expect(trace.filter(([, v]) => v === "before-state").length).toBeGreaterThan(3);
  });

  test("22c: a diagnosis the failed-commit pitfall already quotes as its cause is stored once", () => {
    const { found, offline } = real("22/c6a4f4faf5/0");
    expect(found.map((c) => c.content)).toEqual([
      "The pre-commit hook runs `bun test` which picks up test files in `tmp/clones/` from previous evaluations.",
    ]);
    expect(offline.filter((c) => c.rule === "diagnoses")).toEqual([]);
    expect(
      offline.some((c) => c.rule === "pitfalls" && c.content.includes("picks up test files in `tmp/clones/`")),
    ).toBe(true);
  });
});
if (!HAVE) console.log("diagnoses: ../shared transcripts absent, real-session cases skipped");

// ---- synthetic episodes ------------------------------------------------------------------------

type Line = { t: number; type: EventDTO["event_type"]; paths?: string[] } & Record<string, unknown>;
const BASE = Date.parse("2026-03-02T09:00:00Z");

function episode(name: string, lines: readonly Line[]) {
  const events: EventDTO[] = lines.map(({ t, type, paths, ...content }, i) => ({
    id: `evt_${name}_${i}`,
    project_id: ROOT,
    user_id: USER,
    source_tool: "claude_code",
    session_id: name,
    timestamp: new Date(BASE + t * 1000).toISOString(),
    event_type: type,
    content_json: JSON.stringify(content),
    file_paths: paths ?? [],
    hash: `h_${name}_${i}`,
    processed_at: null,
  }));
  return ruleInput(`ep_${name}`, ROOT, events);
}

const say = (t: number, text: string): Line => ({ t, type: "assistant_response", text });
const edit = (t: number, file: string, oldString = "a", newString = "b"): Line => ({
  t,
  type: "code_change",
  tool: "Edit",
  tool_use_id: `e${t}`,
  input: { file_path: file, old_string: oldString, new_string: newString },
  paths: [file],
});
const green = (t: number): Line => ({
  t,
  type: "test_run",
  command: "bun test",
  exit_code: 0,
  output: " 4 pass\n 0 fail",
  passed: 4,
  failed: 0,
});

let plans = 0;
/** An approved plan, then an edit of `file` and a green test run: the lessons' texts. */
function approvedPlan(text: string, file: string): string[] {
  return findDiagnoses(
    episode(`plan-${++plans}`, [{ t: 0, type: "user_message", text }, edit(10, file), green(20)]),
  ).map((c) => c.content);
}

/** A statement, then an edit of src/cloner.ts and a green test run. */
function fixed(statement: string, name = "syn") {
  return findDiagnoses(episode(name, [say(0, statement), edit(10, "src/cloner.ts"), green(20)]));
}

describe("diagnoses: what a statement must be", () => {
  test("a cause about a named library, followed by a fix, is kept without its lead", () => {
    const [c] = fixed("The issue is that `Bun.spawn` doesn't throw on non-zero exit codes.");
    expect(c?.content).toBe("`Bun.spawn` doesn't throw on non-zero exit codes.");
    expect(c?.source_event_ids).toEqual(["evt_syn_0", "evt_syn_1", "evt_syn_2"]);
  });

  test("markdown bold is stripped", () => {
    expect(fixed("The issue is that `Bun.spawn` **never throws** on a non-zero exit.")[0]?.content).toBe(
      "`Bun.spawn` never throws on a non-zero exit.",
    );
  });

  test.each([
    ["question", "Does `Bun.spawn` not throw on non-zero exit codes?"],
    ["hedge", "The issue might be that `Bun.spawn` doesn't throw on non-zero exit codes."],
    ["hedge", "`Bun.spawn` probably doesn't throw on non-zero exit codes."],
    ["slip", "The issue is that I forgot the `await` on `Bun.spawn`."],
    ["slip", "The problem is that my change doesn't set `proc.exited`."],
    ["before-state", "The current code only catches JS exceptions from `Bun.spawn`."],
    ["before-state", "`cloneRepository` still doesn't check the exit code."],
    ["compile", "The problem is a TS2307 error: `./prompts-assets` doesn't resolve."],
    ["narration", "Let me check why `Bun.spawn` doesn't throw."],
    ["no-marker", "`Bun.spawn` returned exit code 128 for the checkout."],
  ])("%s: %s", (why, s) => {
    expect(rejectReason(s)).toBe(why);
    expect(fixed(s)).toEqual([]);
  });

  test("a hedge anywhere in the paragraph makes each of its sentences a guess; the next paragraph stands", () => {
    const reply = [
      "**Git hooks run with a minimal environment that doesn't include the user's full `PATH`.** The filter",
      "command may not be found because:",
      "1. Git hooks don't source `.bashrc`/`.zshrc`",
      "",
      "The issue is that `Bun.spawn` doesn't throw on non-zero exit codes.",
    ].join("\n");
    expect(fixed(reply).map((c) => c.content)).toEqual(["`Bun.spawn` doesn't throw on non-zero exit codes."]);
  });

  test("a plan's 'Root Cause Hypothesis' or 'Possible Causes' section is a guess, not a cause", () => {
    const plan = (heading: string) =>
      `Implement the following plan:\n\n# Fix filter\n\n## ${heading}\n\nGit hooks don't source \`.bashrc\` files.\n\n## Solution\n\nAdd logging.`;
    const run = (heading: string) => approvedPlan(plan(heading), "src/filter.go");
    expect(run("Root Cause Hypothesis")).toEqual([]);
    expect(run("Possible Causes")).toEqual([]);
    expect(run("Root Cause")).toEqual(["Git hooks don't source `.bashrc` files."]);
  });

  test("a plan's 'requires' lesson carries the flag its change section passes, and only that section's", () => {
    const plan = (change: string) =>
      `Implement the following plan:\n\n# Fix codex\n\n## Context\n\nThe Codex CLI requires a git repository.\nIt mentions \`--ignored\` here.\n\n## Change\n\n${change}`;
    const run = (change: string) => approvedPlan(plan(change), "src/codex.ts");
    expect(run("Add `--skip-git-repo-check` to the args.")).toEqual([
      "The Codex CLI requires a git repository; pass `--skip-git-repo-check`.",
    ]);
    expect(run("Run the CLI inside a temporary git repository.")).toEqual(["The Codex CLI requires a git repository."]);
  });

  test("a statement with no named subject is not kept", () => {
    expect(fixed("The problem is that the checkout never waits for the fetch.")).toEqual([]);
  });

  test("a pronoun without its subject: the clause is dropped, or the statement when nothing stands alone", () => {
    expect(lessonText("The issue is that `Bun.spawn` doesn't throw — it just sets the exit code.")).toBe(
      "`Bun.spawn` doesn't throw.",
    );
    expect(lessonText("This happens because it never sets `verbose`.")).toBeNull();
    expect(fixed("The problem is that it never sets `verbose` on the provider.")).toEqual([]);
  });

  test("a consequence that needs the transcript is dropped, and the statement too when what is left is no lesson", () => {
    expect(lessonText("The hook runs `biome` on the whole tree, so it catches those files too.")).toBeNull();
    expect(lessonText("`fetch` doesn't retry on 503, so it fails on the first hiccup.")).toBe(
      "`fetch` doesn't retry on 503.",
    );
  });
});

describe("diagnoses: evidence that the diagnosis held", () => {
  const s = "The issue is that `Bun.spawn` doesn't throw on non-zero exit codes.";

  test("no fix after the statement: nothing", () => {
    expect(findDiagnoses(episode("nofix", [green(0), say(10, s)]))).toEqual([]);
    expect(findDiagnoses(episode("noproof", [say(0, s), edit(10, "src/cloner.ts")]))).toEqual([]);
  });

  test("an invalid value the error itself explained waits for recurrence; one it did not explain does not", () => {
    const st = "`fast` is not a valid `--mode` value for the Codex CLI.";
    const values = "The valid values are `safe`, `full`.";
    const run = (error: string) =>
      findDiagnoses(
        episode(`vals-${error.length}`, [
          { t: 0, type: "user_message", text: `I got this: ${error}` },
          say(5, `${st} ${values}`),
          edit(10, "src/codex.ts"),
          green(20),
        ]),
      );
    const explained = run("error: invalid value 'fast' for '--mode' [possible values: safe, full]");
    expect(explained.map((c) => c.gate?.kind)).toEqual(["pitfall"]);
    const unexplained = run("error: invalid value 'fast' for '--mode'");
    expect(unexplained.map((c) => [c.content, c.gate])).toEqual([[`${st} ${values}`, undefined]]);
  });

  test("a formatter run after the edit proves nothing; a test run does", () => {
    const fmt: Line = { t: 20, type: "command_run", command: "gofmt -w .", exit_code: 0, output: "" };
    expect(findDiagnoses(episode("fmt-only", [say(0, s), edit(10, "src/cloner.ts"), fmt]))).toEqual([]);
    expect(findDiagnoses(episode("fmt-test", [say(0, s), edit(10, "src/cloner.ts"), fmt, green(30)])).length).toBe(1);
  });

  test("a later reply that dismisses the explanation: nothing", () => {
    const input = episode("dismissed", [
      say(0, s),
      edit(10, "src/cloner.ts"),
      green(20),
      say(30, "That was not the issue: the fetch failed earlier."),
    ]);
    expect(findDiagnoses(input)).toEqual([]);
  });

  test("a failed command it explained, then the same command working, is evidence", () => {
    const add = (t: number, command: string, exit: number): Line => ({
      t,
      type: "command_run",
      command,
      exit_code: exit,
      output: exit ? "The following paths are ignored by one of your .gitignore files: dist" : "",
    });
    const statement = say(10, "`dist/` is gitignored, so the stylesheet there needs a forced add.");
    const held = findDiagnoses(
      episode("forced", [add(0, "git add dist/app.css", 1), statement, add(20, "git add -f dist/app.css", 0)]),
    );
    expect(held.map((c) => [c.content, c.source_event_ids])).toEqual([
      ["`dist/` is gitignored.", ["evt_forced_1", "evt_forced_0", "evt_forced_2"]],
    ]);
    expect(findDiagnoses(episode("unforced", [add(0, "git add dist/app.css", 1), statement]))).toEqual([]);
  });

  test("the user confirming the edit is evidence", () => {
    const input = episode("confirmed", [
      say(0, s),
      edit(10, "src/cloner.ts"),
      { t: 20, type: "user_message", text: "great, that works" },
    ]);
    expect(findDiagnoses(input).map((c) => c.source_event_ids)).toEqual([["evt_confirmed_0", "evt_confirmed_2"]]);
  });

  test("a workaround announced next and a command that worked: the command is part of the lesson", () => {
    const input = episode("bypass", [
      say(0, "RTK is filtering the output. Let me bypass it."),
      { t: 10, type: "command_run", command: "rtk proxy gh run list --json status", exit_code: 0, output: "[]" },
    ]);
    expect(findDiagnoses(input).map((c) => c.content)).toEqual([
      "RTK filters the output; bypass it with `rtk proxy gh run …`.",
    ]);
  });
});

describe("diagnoses: lasting, not this episode's code", () => {
  test("a statement about the project's own code is not kept, whether or not the fix changed it", () => {
    const s = "In a job request `repositoryUrl` wins over `localPath` in `engine.ts`.";
    expect(findDiagnoses(episode("kept", [say(0, s), edit(10, "src/api/remediation.ts"), green(20)]))).toEqual([]);
    expect(findDiagnoses(episode("changed", [say(0, s), edit(10, "src/engine.ts"), green(20)]))).toEqual([]);
    // The same shape about a tool is kept.
    const tool = "The issue is that `Bun.spawn` doesn't throw on non-zero exit codes.";
    expect(findDiagnoses(episode("tool", [say(0, tool), edit(10, "src/git.ts"), green(20)])).map((c) => c.key)).toEqual(
      ["pitfall:diagnosis:bun.spawn:doesnt_throw"],
    );
  });

  test("what this project's code requires is not kept; what a tool requires is", () => {
    const own = "The `saveDraft` handler requires a session token.";
    expect(findDiagnoses(episode("own-req", [say(0, own), edit(10, "src/api.ts"), green(20)]))).toEqual([]);
    const tool = "The Codex CLI now requires a git repository unless `--skip-git-repo-check` is passed.";
    expect(
      findDiagnoses(episode("tool-req", [say(0, tool), edit(10, "src/codex.ts"), green(20)])).map((c) => c.content),
    ).toEqual(["The Codex CLI requires a git repository unless `--skip-git-repo-check` is passed."]);
  });

  test("a library API used in this code ('the `useEffect`', 'Line 46') is not the library's behaviour", () => {
    const instance = episode("instance", [
      say(0, "The `useEffect` only depends on `activeTab`."),
      edit(10, "src/Tabs.tsx", "useEffect(() => measure(), [activeTab]);", "useResizeObserver(measure);"),
      green(20),
    ]);
    expect(findDiagnoses(instance)).toEqual([]);
    expect(rejectReason("Line 46 — `useEffect` only depends on `activeTab`.")).toBe("before-state");
    expect(fixed("`useEffect` only runs after the browser has painted.").map((c) => c.key)).toEqual([
      "pitfall:diagnosis:useeffect:only_runs",
    ]);
  });

  test("a name this episode wrote itself is its own new code, not a lesson", () => {
    const input = episode("own", [
      edit(0, "src/sync.ts", "", "export function syncAll() {}"),
      say(10, "The problem is that `syncAll` never awaits the writes."),
      edit(20, "src/other.ts"),
      green(30),
    ]);
    expect(findDiagnoses(input)).toEqual([]);
  });

  test("a plan: only its root-cause section is read", () => {
    const plan = [
      "Implement the following plan:",
      "",
      "# Fix clones",
      "",
      "## Root Cause",
      "",
      "`Bun.spawn` doesn't throw on non-zero exit codes.",
      "",
      "## Changes",
      "",
      "`Bun.file` never throws when the file is missing.",
    ].join("\n");
    const input = episode("plan", [{ t: 0, type: "user_message", text: plan }, edit(10, "src/api/jobs.ts"), green(20)]);
    expect(findDiagnoses(input).map((c) => c.content)).toEqual(["`Bun.spawn` doesn't throw on non-zero exit codes."]);
  });

  test("the same lesson told twice has one key", () => {
    const a = fixed("The issue is that `Bun.spawn` doesn't throw on non-zero exit codes.", "a");
    const b = fixed("`Bun.spawn` doesn't throw when the process fails.", "b");
    expect(a[0]!.key).toBe(b[0]!.key);
  });
});
