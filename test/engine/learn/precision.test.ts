import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandCorrections } from "../../../src/engine/learn/extract/command-corrections.ts";
import { decisions } from "../../../src/engine/learn/extract/decisions.ts";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { pitfalls } from "../../../src/engine/learn/extract/pitfalls.ts";
import { namesThrowawayPath } from "../../../src/engine/learn/extract/pitfalls/failure-text.ts";
import { recipes } from "../../../src/engine/learn/extract/recipes.ts";
import { explicitPreferences } from "../../../src/engine/learn/extract/style-preferences.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { editLine as edit, eventRows, HAVE_PACKMIND, packmindInput, type EventLine } from "./helpers.ts";

/**
 * Offline, precision first (issue 26): the rules store only what their evidence makes certain. Each
 * cut with the evidence that asked for it — real sessions of the shared fixtures where they hold it,
 * else the issue's own examples from projects no rule was tuned on.
 */
const tmp = tempDir("sqrl-precision-");
afterAll(() => tmp.cleanup());
const ROOT = join(tmp.path, "repo");
mkdirSync(ROOT, { recursive: true });
const input = (lines: EventLine[], root = ROOT) => ruleInput("ep_p", root, eventRows(root, lines));

describe("a failure's cause must be the session's, and about that failure", () => {
  test.skipIf(!HAVE_PACKMIND)(
    "real (context-evaluator 59/a1a92063ab): a Biome remark next to a failing test run is not the test's cause",
    () => {
      const got = pitfalls(packmindInput("59/a1a92063ab/0", ROOT));
      // The old rule stored "`bun run test` failed. Cause: Biome wants `allActions` as the dependency …".
      expect(got.filter((c) => /^`bun run (?:test|typecheck)` failed/.test(c.content))).toEqual([]);
      // The lint failure the remark was about keeps its lesson, with the linter's rule as its cause.
      expect(got.some((c) => c.content.startsWith("Lint rule `lint/correctness/useExhaustiveDependencies`"))).toBe(
        true,
      );
    },
  );

  test.skipIf(!HAVE_PACKMIND)(
    "real (context-evaluator d7/791c619932): a commit unblocked by deleting one generated-name clone is that instance's cleanup",
    () => {
      // Stored once as "`git commit` was blocked … Cause: The `tmp/clones/agents-eval-DtKspd/` is a
      // leftover evaluation clone … Fix: ran `rm -rf tmp/clones/agents-eval-DtKspd/`": two fresh
      // reviewers rejected it as an incident log naming a directory that is gone next month.
      const got = pitfalls(packmindInput("d7/791c619932/0", ROOT));
      expect(got.filter((c) => c.content.includes("DtKspd"))).toEqual([]);
    },
  );

  test("a generated random suffix is a throwaway path; words, versions and ticket ids are not", () => {
    for (const t of ["rm -rf tmp/clones/agents-eval-DtKspd/", "cd /tmp/tmp.aB3dE5fG7h", "sqrl-engine-Xk2p9q"])
      expect(namesThrowawayPath(t)).toBe(true);
    for (const t of [
      "frontend/src/components/RemediateTab.tsx",
      "feature/add-LoginForm",
      "release/0.4.1",
      "ENT-98",
      "tmp/clones/agents-eval-abcdef/",
      "my-README.md",
    ])
      expect(namesThrowawayPath(t)).toBe(false);
  });

  test("the issue's `go vet` warning with 'Restart your … session' nearby: no lesson", () => {
    const vet: EventLine = {
      type: "command_run",
      command: "go vet ./...",
      exit_code: 1,
      output: "# entire/cli/hooks\ncmd/entire/cli/hooks/install.go:88:2: unreachable code",
    };
    const restart: EventLine = {
      type: "assistant_response",
      text: "The hooks only load at startup, so this requires a restart: restart your Claude Code session after this change.",
    };
    const ok: EventLine = { type: "command_run", command: "go vet ./...", exit_code: 0, output: "" };
    expect(pitfalls(input([vet, restart, edit("cmd/entire/cli/hooks/install.go"), ok]))).toEqual([]);
    // The same failure with its cause stated is a lesson, the cause kept.
    const stated: EventLine = {
      type: "assistant_response",
      text: "install.go returns early because of a leftover debug `return nil`, so the loop after it is unreachable code.",
    };
    const [p] = pitfalls(input([vet, stated, edit("cmd/entire/cli/hooks/install.go"), ok]));
    expect(p?.content).toContain("Cause: install.go returns early because of a leftover debug `return nil`");
  });
});

describe("a correction is a tool's usage error, never a way around a check", () => {
  test.skipIf(!HAVE_PACKMIND)(
    "real (context-evaluator ba/28f44c88f4/1): `git commit` failing in the hook's tests, then `--no-verify`, is no lesson",
    () => {
      const got = commandCorrections(packmindInput("ba/28f44c88f4/1", ROOT));
      expect(got.filter((c) => /no-verify/.test(c.content))).toEqual([]);
    },
  );

  test("a usage error and the form that works stays", () => {
    const got = commandCorrections(
      input([
        {
          type: "command_run",
          command: "rtk bun run test",
          exit_code: 2,
          output: "error: unrecognized subcommand 'bun'",
        },
        { type: "command_run", command: "bun run test", exit_code: 0, output: "12 pass\n0 fail" },
      ]),
    );
    expect(got.map((c) => c.content)).toEqual([
      "`rtk bun run test` fails (error: unrecognized subcommand 'bun'); run `bun run test` instead.",
    ]);
  });
});

describe("a decision carries the user's reason", () => {
  test("'X should be the default' without a reason is a request; with the user's reason it is a decision", () => {
    const said = (text: string) => decisions(input([{ type: "user_message", text }])).map((c) => c.content);
    expect(said("JSON output should be the default.")).toEqual([]);
    expect(said("JSON output should be the default since the scripts in ci/ parse it.")).toEqual([
      "JSON output should be the default since the scripts in ci/ parse it.",
    ]);
  });
});

describe("a rule is an instruction that says it stands", () => {
  test("one task's 'don't …' or 'avoid …' is not a rule; 'never …', 'from now on …' are", () => {
    const rules = (text: string) => explicitPreferences(input([{ type: "user_message", text }])).map((c) => c.content);
    expect(rules("Don't add a section about the API to the README.")).toEqual([]);
    expect(rules("Avoid the modal on the settings page.")).toEqual([]);
    expect(rules("Never add a section about the API to the README.")).toEqual([
      "Never add a section about the API to the README.",
    ]);
    expect(rules("From now on, don't add emojis to commit messages.")).toHaveLength(1);
  });
});

describe("guidance the agent injects is not the user's words", () => {
  test("a skill's SKILL.md or Codex's AGENTS.md, sent as a user message, gives no rule", () => {
    for (const text of [
      "Base directory for this skill: ~/repo/.claude/skills/release\n\n# Release\n\nNever tag a release before the changelog is updated.",
      "# AGENTS.md instructions for ~/repo\n\n<INSTRUCTIONS>\nMain history must never be rewritten.\n</INSTRUCTIONS>",
      "<user_instructions>\nAlways run `mise run fmt` before `mise run lint`.\n</user_instructions>",
    ])
      expect(explicitPreferences(input([{ type: "user_message", text }]))).toEqual([]);
    // The same sentence typed by the user is one.
    expect(
      explicitPreferences(
        input([{ type: "user_message", text: "Never tag a release before the changelog is updated." }]),
      ),
    ).toHaveLength(1);
  });
});

describe("a recipe is named by what its commands do", () => {
  const green = (cmd: string): EventLine => ({ type: "command_run", command: cmd, exit_code: 0, output: "ok" });

  test("a CLI's own `migrate` in a project with no database is no database migration", () => {
    const got = recipes(
      input([
        edit("cmd/entire/cli/settings.go"),
        green("go run ./cmd/entire migrate"),
        green("go test ./..."),
        green("golangci-lint run"),
      ]),
    );
    expect(got.map((c) => c.content).join("\n")).not.toMatch(/migrate/i);
  });

  test("a migration tool, or a project whose manifests name a database, is", () => {
    const drizzle = recipes(
      input([edit("src/db/schema.ts"), green("pnpm drizzle-kit migrate"), green("pnpm vitest run")]),
    );
    expect(drizzle.map((c) => c.content)).toContain(
      "To migrate the database: `pnpm drizzle-kit migrate` → `pnpm vitest run`.",
    );
    const withDb = join(tmp.path, "with-db");
    mkdirSync(withDb, { recursive: true });
    writeFileSync(join(withDb, "docker-compose.yml"), "services:\n  db:\n    image: postgres:16\n");
    const make = recipes(input([edit("sql/001.sql"), green("make migrate"), green("go test ./...")], withDb));
    expect(make.map((c) => c.content)).toContain("To migrate the database: `make migrate` → `go test ./...`.");
  });
});
