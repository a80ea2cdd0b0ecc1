import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withoutWhatRepoSays } from "../../../src/engine/learn/apply/repo-says.ts";
import type { Candidate } from "../../../src/engine/learn/extract/candidate.ts";
import { tempDir } from "../../helpers/sqrl.ts";

/** What the repository's guidance files already name is not stored again from sessions (apply/repo-says.ts). */
const tmp = tempDir("sqrl-repo-says-");
afterAll(() => tmp.cleanup());

function cand(type: Candidate["type"], key: string, content: string, rule: string): Candidate {
  return {
    type,
    key,
    content,
    tags: [],
    importance: 0.7,
    confidence: 0.8,
    scope: "project",
    file_paths: [],
    source_episode_id: "ep_1",
    source_event_ids: ["evt_1"],
    rule,
  };
}

const verify = cand(
  "recipe",
  "recipe:verify",
  "To verify a change: `mise run fmt` → `mise run lint` → `mise run test`.",
  "recipes",
);
const hook = cand("recipe", "recipe:pre-commit", "The pre-commit hook runs `mise run lint`.", "recipes:hook");
const said = cand(
  "user_style",
  "rule:run_fmt",
  "Always run `mise run fmt` together with `mise run lint`.",
  "style-preferences",
);
const lesson = cand("pitfall", "pitfall:x", "`mise run test` fails without Docker running.", "diagnoses");

describe("withoutWhatRepoSays", () => {
  test("a recipe whose every command CLAUDE.md names goes; the hook recipe, what the user said and lessons stay", () => {
    const root = join(tmp.path, "full");
    mkdirSync(root, { recursive: true });
    writeFileSync(
      join(root, "CLAUDE.md"),
      "## Before Every Commit (REQUIRED)\n\n1. `mise run fmt`\n2. `mise run lint`\n3. `mise run test:ci`\n",
    );
    expect(withoutWhatRepoSays(root, [verify, hook, said, lesson]).map((c) => c.key)).toEqual([
      "recipe:pre-commit",
      "rule:run_fmt",
      "pitfall:x",
    ]);
  });

  test("the hook recipe goes where the guidance has a section on the pre-commit hook, named by its scripts", () => {
    // The packmind project's CLAUDE.md (public) lists the scripts (`bun run test`), the hook seen running
    // names their commands (`bun test src/`): a reviewer rejected it as exactly that section.
    const root = join(tmp.path, "hook");
    mkdirSync(root, { recursive: true });
    writeFileSync(
      join(root, "CLAUDE.md"),
      "## Pre-commit Hook\n\nThis project uses Husky with a pre-commit hook that runs:\n- `bun run test` - All tests must pass\n- `bun run lint` - Code must pass linting\n",
    );
    const seen = cand(
      "recipe",
      "recipe:pre-commit",
      "The pre-commit hook runs `bun test src/` → `biome check --error-on-warnings`; a commit lands only when all pass.",
      "recipes:hook",
    );
    expect(withoutWhatRepoSays(root, [seen, lesson]).map((c) => c.key)).toEqual(["pitfall:x"]);
  });

  test("a command habit goes where the guidance names a command line for the same purpose, as a script", () => {
    const root = join(tmp.path, "habit");
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, "CLAUDE.md"), "## Common Commands\n\n- `bun run test` runs the suite\n");
    const habit = cand(
      "user_style",
      "test_command",
      "Runs tests with `bun test`; single tests: `bun test a.test.ts`.",
      "style-habits",
    );
    const lint = cand("user_style", "lint_command", "Lints with `bun run lint`.", "style-habits");
    expect(withoutWhatRepoSays(root, [habit, lint]).map((c) => c.key)).toEqual(["lint_command"]);
  });

  test("a command the files do not name keeps the recipe; no guidance files keeps everything", () => {
    const part = join(tmp.path, "part");
    mkdirSync(part, { recursive: true });
    writeFileSync(join(part, "AGENTS.md"), "Run `mise run lint` before pushing.\n");
    expect(withoutWhatRepoSays(part, [verify]).map((c) => c.key)).toEqual(["recipe:verify"]);
    const none = join(tmp.path, "none");
    mkdirSync(none, { recursive: true });
    expect(withoutWhatRepoSays(none, [verify, hook])).toHaveLength(2);
  });

  test("a command is named as words of its own; one word in prose names nothing", () => {
    const root = join(tmp.path, "words");
    mkdirSync(root, { recursive: true });
    writeFileSync(
      join(root, "CONTRIBUTING.md"),
      "Make sure to run `mise run fmtx`, `mise run lint` and `mise run test`, and `make` a build.\n",
    );
    const build = cand("recipe", "recipe:build", "To build: `make`.", "recipes");
    expect(withoutWhatRepoSays(root, [verify, build]).map((c) => c.key)).toEqual(["recipe:verify", "recipe:build"]);
  });

  test("an edited file is read again", () => {
    const root = join(tmp.path, "edited");
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, "README.md"), "# Tool\n\nRun `mise run lint`.\n");
    expect(withoutWhatRepoSays(root, [verify])).toHaveLength(1);
    writeFileSync(join(root, "README.md"), "# Tool\n\nTasks: `mise run fmt`, `mise run lint`, `mise run test`.\n");
    expect(withoutWhatRepoSays(root, [verify])).toHaveLength(0);
  });
});
