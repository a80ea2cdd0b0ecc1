import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandCorrections } from "../../../src/engine/learn/extract/command-corrections.ts";
import { lintMessage } from "../../../src/engine/learn/extract/pitfalls/lint-rule.ts";
import { decisions } from "../../../src/engine/learn/extract/decisions.ts";
import { capTokens, distilText, HARD_CAP_TOKENS } from "../../../src/engine/learn/extract/distil.ts";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { explicitPreferences } from "../../../src/engine/learn/extract/style-preferences.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { ruleSubjectMatch, taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { analyzeQuery } from "../../../src/ranker/query.ts";
import { projectBriefView } from "../../../src/engine/retrieve/views/project-brief.ts";
import { TaskContextRequest, ViewQuery } from "../../../src/shared/api.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { estimateTokens } from "../../../src/shared/tokens.ts";
import { currentItems } from "../../../src/sql/memory-items.ts";
import {
  eventRows,
  request,
  sandbox,
  transcriptEvents,
  TRANSCRIPTS,
  USER,
  type EventLine,
  type Sandbox,
} from "./helpers.ts";

/**
 * What is worth keeping (issue 14), rule by rule, each with what must be stored and what must not,
 * in the words of real sessions: the user messages quoted are from the shared fixture transcripts
 * (context-evaluator, entireio-cli) and from the Go CLI sessions quoted in the issue.
 */

type Ev = EventLine;
function events(root: string, list: readonly Ev[], baseIso = "2026-03-02T09:00:00Z"): EventDTO[] {
  return eventRows(root, list, { baseMs: Date.parse(baseIso) });
}
const ROOT = "/work/repo";
const said = (...texts: string[]) =>
  ruleInput(
    "ep_q",
    ROOT,
    events(
      ROOT,
      texts.map((text) => ({ type: "user_message", text })),
    ),
  );

/** A fresh store where the user said `text` once (an episode of two events), and a read context on it. */
async function storeWhereUserSaid(text: string): Promise<{ sb: Sandbox; ctx: ReturnType<typeof retrievalContext> }> {
  const sb = sandbox();
  const evs = events(sb.root, [
    { type: "user_message", text },
    { type: "assistant_response", text: "Noted." },
  ]);
  await processEvents(request(sb.root, evs), sb.deps());
  const ctx = retrievalContext(sb.db, sb.root, {
    nowMs: Date.parse("2026-06-01T00:00:00Z"),
    userId: USER,
    userDb: sb.userDb(),
  });
  return { sb, ctx };
}

describe("stated rules: anywhere in a message, standing, standing alone", () => {
  test("real standing instructions become rules in the user's words, with the right scope", () => {
    const got = (text: string) => explicitPreferences(said(text));
    const fmt = got("update CLAUDE.md that we should always run `mise run fmt` together with `mise run lint`");
    expect(fmt).toHaveLength(1);
    expect(fmt[0]!.content).toContain("always run `mise run fmt` together with `mise run lint`");
    expect(fmt[0]!.scope).toBe("project");
    const e2e = got("claude should ask or be told to run the e2e tests since they consume tokens");
    expect(e2e[0]!.content).toBe("Claude should ask or be told to run the e2e tests since they consume tokens.");
    const deletes = got(
      "I need a bulk delete for inventory items. Deletes must run inside a Postgres transaction: wrap them in withTransaction() from src/db/tx.ts.",
    );
    expect(deletes[0]!.content).toBe(
      "Deletes must run inside a Postgres transaction: wrap them in withTransaction() from src/db/tx.ts.",
    );
    expect(deletes[0]!.polarity).toBe(1);
    const skills = got(
      'Mention also that that for AGENTS.md target, the skills should be in ".agent/skills" directory',
    );
    expect(skills[0]!.content).toBe('For AGENTS.md target, the skills should be in ".agent/skills" directory.');
    const british = got("please use the british spelling");
    expect(british[0]!.content).toBe("Use the british spelling.");
    expect(british[0]!.scope).toBe("user"); // how the person writes anywhere: a general phrasing
    const pnpm = got("We use pnpm in this repo, never npm.");
    expect([pnpm[0]!.key, pnpm[0]!.scope]).toEqual(["package_manager", "project"]);
    // A ticket named beside a rule that says it stands does not make it that ticket's.
    const standing = got("Always run `mise run lint` before pushing. I am on ENT-98 today.");
    expect(standing.map((c) => c.content)).toEqual(["Always run `mise run lint` before pushing."]);
  });

  test("one-off requests, questions, pronoun fragments, hedges and pasted review text are not rules", () => {
    for (const text of [
      "Update the home page so that it mentions that it's open source. ",
      "commit and hpush",
      "Can you investiage these runtime errors when running Cursor Agent CLI ? can you maybe logs more output of the command?",
      'this should be hidden in "cloud" mode : ',
      "The Packmind product tour should display the code in @frontend/src/components/packmind/productTour.tsx ",
      'now we should highlight the "Remediate" feature in addition to existing features',
      // What a page should (not) show is a change request, however it is phrased (context-evaluator 22, 4a).
      "In cloud mode we should not display in the remediation module the possibility to choose the running cli agent as we handle that.",
      'We should not display "AGENTS.md" for GitHub Copilot instructions, but instead "Copilot instructions"',
      "Don't give it a number and it needs no date or status in the file.",
      "I think we musr also update @prompts/context-remediation/packmind-remediation-skill-creation.md to simplify it.",
      "High Severity: the error returned by repo.Worktree() must always be checked before use",
      // An instruction in a message about one ticket is that ticket's.
      "I'm working on linear ENT-98. keep our working documentation in linear.",
      "For issue #42 use the staging bucket.",
    ]) {
      expect([text, explicitPreferences(said(text)).map((c) => c.content)]).toEqual([text, []]);
    }
  });

  test("an approved plan is the assistant's text: no rule is read from it", () => {
    const plan =
      "Implement the following plan:\n\n# Plan: Tabs\n\n## Context\n\nWe should always keep tabs accessible, never use divs for buttons.\n";
    expect(explicitPreferences(said(plan))).toEqual([]);
  });
});

describe("decisions: a choice with its reason", () => {
  test("the user's own 'let's … because …' is a decision; a bare 'let's', or one 'for now', is not", () => {
    const [c] = decisions(
      said(
        "Thanks. For orders let's keep soft deletes because finance needs the audit trail. Bump the patch version too.",
      ),
    );
    expect(c!.content).toBe("For orders let's keep soft deletes because finance needs the audit trail.");
    expect(c!.tags).toEqual(["decision"]);
    expect(decisions(said("let's see what the tests say", "Let's run the linter again."))).toEqual([]);
    // context-evaluator 4c: a choice made for the moment is not one that lasts.
    expect(
      decisions(
        said(
          'I think we musr also update the skill prompt to simplify it. Let\'s only build the main "SKILL.md" to avoid too many other references, assets and scripts for now ',
        ),
      ),
    ).toEqual([]);
  });

  test("an answer that picks one of the offered options is resolved to what the option said", () => {
    const input = ruleInput(
      "ep_q",
      ROOT,
      events(ROOT, [
        {
          type: "assistant_response",
          text: "Two ways:\n**Option A**: Throw on failure when commitSha is provided.\n**Option B**: Fall back to the branch HEAD and log a warning.",
        },
        { type: "user_message", text: "A because silent fallbacks compare against the wrong commit" },
      ]),
    );
    const [c] = decisions(input);
    expect(c!.content).toBe(
      "Throw on failure when commitSha is provided, chosen because silent fallbacks compare against the wrong commit.",
    );
  });

  test("a decision is served in the project brief, under its own heading, and in task context", async () => {
    const { sb, ctx } = await storeWhereUserSaid(
      "For orders let's keep soft deletes because finance needs the audit trail.",
    );
    try {
      const brief = await projectBriefView(ctx, ViewQuery.parse({ project_id: sb.root, mode: "core" }));
      expect(brief.markdown).toContain("### Decisions");
      expect(brief.key_facts.join("\n")).toContain("soft deletes because finance needs the audit trail");
      const tc = await taskContext(
        ctx,
        TaskContextRequest.parse({ project_id: sb.root, task_description: "delete cancelled orders" }),
      );
      expect(tc.selected_memories.map((m) => m.content).join("\n")).toContain("soft deletes");
    } finally {
      sb.cleanup();
    }
  });

  test("a stated rule about a kind of work is served for a task doing that work, though they share one word", async () => {
    const { sb, ctx } = await storeWhereUserSaid(
      "Deletes must run inside a Postgres transaction: wrap them in withTransaction() from src/db/tx.ts.",
    );
    try {
      const tc = await taskContext(
        ctx,
        TaskContextRequest.parse({ project_id: sb.root, task_description: "Add a bulk delete endpoint for items" }),
      );
      expect(tc.selected_memories.map((m) => m.content)).toEqual([
        "Deletes must run inside a Postgres transaction: wrap them in withTransaction() from src/db/tx.ts.",
      ]);
      expect(tc.selected_memories[0]!.reason).toMatch(/delete/i);
      const other = await taskContext(
        ctx,
        TaskContextRequest.parse({
          project_id: sb.root,
          task_description: "Translate the marketing landing page copy into French",
        }),
      );
      expect(other.has_relevant_memory).toBe(false);
    } finally {
      sb.cleanup();
    }
  });

  test("the rule's subject is what must meet the task: the words before its modal", () => {
    const stems = (t: string) => new Set(analyzeQuery(t).map((x) => x.stem));
    const rule = {
      type: "user_style",
      key: "rule:delete_must_run",
      content: "Deletes must run inside a Postgres transaction: wrap them in withTransaction() from src/db/tx.ts.",
    };
    expect(ruleSubjectMatch(rule, stems("Add a bulk delete endpoint for items"))).toBe("deletes");
    expect(ruleSubjectMatch(rule, stems("Wrap the report query in a transaction"))).toBeNull(); // not its subject
    expect(ruleSubjectMatch({ ...rule, key: "pref:x" }, stems("delete items"))).toBeNull(); // only stated rules
  });

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "a real approved plan (context-evaluator 1e/…/1) gives no decision: it is the assistant's text",
    () => {
      const evs = transcriptEvents(
        "claude-code/packmindhub-context-evaluator/1e/bff44644f8/1/full.jsonl",
        "claude",
        ROOT,
      );
      expect(decisions(ruleInput("ep_real", ROOT, evs))).toEqual([]);
    },
  );
});

describe("command corrections", () => {
  const rtk = (second: Ev) =>
    commandCorrections(
      ruleInput(
        "ep_q",
        ROOT,
        events(ROOT, [
          {
            type: "command_run",
            command: "rtk bun run test 2>&1 | tail -20",
            output:
              "error: unrecognized subcommand 'bun'\n\nUsage: rtk [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.",
            exit_code: 0,
          },
          second,
        ]),
      ),
    );

  test("a wrapper the tool does not have, then the command alone: the way that works", () => {
    const [c] = rtk({
      type: "command_run",
      command: "bun run test 2>&1 | tail -20",
      output: " 1329 pass\n 0 fail\nRan 1329 tests across 60 files.",
      exit_code: 0,
    });
    expect(c!.content).toBe(
      "`rtk bun run test` fails (error: unrecognized subcommand 'bun'); run `bun run test` instead.",
    );
    expect(c!.gate).toBeUndefined(); // a usage error is lasting by itself
  });

  test("another command that merely shares words, or a fix in between, is not a correction", () => {
    expect(rtk({ type: "command_run", command: "bun run lint:fix", output: "Fixed 1 file.", exit_code: 0 })).toEqual(
      [],
    );
    const fixed = commandCorrections(
      ruleInput(
        "ep_q",
        ROOT,
        events(ROOT, [
          {
            type: "command_run",
            command: "bun run lint",
            output: "× Formatter would have printed the following content:",
            exit_code: 1,
          },
          { type: "code_change", paths: [`${ROOT}/src/a.ts`] },
          {
            type: "command_run",
            command: "bun run lint --max-diagnostics 5",
            output: "Checked 1 file. No fixes applied.",
            exit_code: 0,
          },
        ]),
      ),
    );
    expect(fixed).toEqual([]);
  });
});

describe("a lint rule's example is the linter's own message", () => {
  test("golangci-lint, eslint and Biome lines give the message without location, rule tag or name list", () => {
    expect(
      lintMessage(
        "exhaustive",
        "[lint:go] cmd/entire/cli/summarize/summarize.go:116:2: missing cases in switch of type agent.AgentType: agent.AgentTypeClaudeCode, agent.AgentTypeUnknown (exhaustive)",
      ),
    ).toBe("missing cases in switch of type agent.AgentType");
    expect(
      lintMessage("errcheck", "internal/x.go:12:15: Error return value of `repo.Worktree` is not checked (errcheck)"),
    ).toBe("Error return value of `repo.Worktree` is not checked");
    expect(
      lintMessage(
        "@typescript-eslint/no-floating-promises",
        "src/routes/items.ts\n  42:5  error  Promises must be awaited, end with a call to .catch, or end with a call to .then with a rejection handler  @typescript-eslint/no-floating-promises",
      ),
    ).toBe("Promises must be awaited");
    expect(
      lintMessage(
        "lint/correctness/useExhaustiveDependencies",
        "src/Tabs.tsx:12:3 lint/correctness/useExhaustiveDependencies ━━━━\n\n  ✖ This hook specifies more dependencies than necessary: tabs",
      ),
    ).toBe("This hook specifies more dependencies than necessary");
    // No location line, no example.
    expect(lintMessage("exhaustive", "1 issues:\n* exhaustive: 1")).toBeNull();
  });
});

describe("the recurrence gate", () => {
  let sb: Sandbox | null = null;
  afterEach(() => {
    sb?.cleanup();
    sb = null;
  });

  const lintEpisode = (root: string, iso: string, session: string, file: string) =>
    events(
      root,
      [
        { type: "user_message", text: "tidy up the error handling", session },
        {
          type: "command_run",
          command: "bun run lint",
          output: `${file}:12:5 lint/suspicious/noEmptyBlockStatements ━━━━\n  × Unexpected empty block.\nFound 1 error.`,
          exit_code: 1,
          session,
        },
        { type: "assistant_response", text: "The existing pattern uses a comment inside the catch block.", session },
        { type: "code_change", paths: [`${root}/${file}`], session },
        {
          type: "command_run",
          command: "bun run lint",
          output: "Checked 272 files in 106ms. No fixes applied.",
          exit_code: 0,
          session,
        },
      ],
      iso,
    );

  test("a routine lint failure fixed at once stays in its episode; the same rule broken in another episode becomes one convention", async () => {
    sb = sandbox();
    const deps = sb.deps({ now: () => Date.parse("2026-03-10T00:00:00Z") });
    await processEvents(request(sb.root, lintEpisode(sb.root, "2026-03-02T09:00:00Z", "s1", "src/a.ts")), deps);
    expect(currentItems(sb.db, sb.root, ["pitfall"])).toEqual([]);
    expect((sb.db.query("SELECT COUNT(*) AS n FROM observations").get() as { n: number }).n).toBe(1);
    await processEvents(request(sb.root, lintEpisode(sb.root, "2026-03-05T09:00:00Z", "s2", "src/b.ts")), deps);
    const pits = currentItems(sb.db, sb.root, ["pitfall"]);
    expect(pits).toHaveLength(1);
    expect(pits[0]!.key).toBe("pitfall:lint-rule:lint_suspicious_noemptyblockstatements");
    expect(pits[0]!.content).toStartWith(
      'Lint rule `lint/suspicious/noEmptyBlockStatements` ("Unexpected empty block."):',
    );
    expect(pits[0]!.evidence_episode_ids).toHaveLength(2);
    expect(pits[0]!.tags).toContain("recurring");
  });
});

describe("knowledge the repository already keeps", () => {
  let sb: Sandbox | null = null;
  afterEach(() => {
    sb?.cleanup();
    sb = null;
  });

  test("the guidance files are never copied into memory; the pre-commit hook's own file is a recipe", async () => {
    sb = sandbox();
    writeFileSync(
      join(sb.root, "CLAUDE.md"),
      [
        "# Project",
        "",
        "This repo contains the CLI.",
        "",
        "## Conventions",
        "",
        "- Always run `mise run fmt` together with `mise run lint`.",
        "- Never commit directly to main.",
        "- Claude should ask or be told to run the e2e tests since they consume tokens.",
      ].join("\n"),
    );
    mkdirSync(join(sb.root, ".husky"), { recursive: true });
    writeFileSync(join(sb.root, ".husky", "pre-commit"), "bun run test && bun run lint && bun run typecheck\n");
    writeFileSync(join(sb.root, "README.md"), "# Tool\n\n## Development\n\nWe use bun, never npm.\n");
    await processEvents(
      request(
        sb.root,
        events(sb.root, [
          { type: "user_message", text: "Rename the flag to --dry-run." },
          { type: "assistant_response", text: "Renamed." },
        ]),
      ),
      sb.deps(),
    );
    const items = currentItems(sb.db, sb.root);
    // The agent reads CLAUDE.md and the README itself: no item restates or cites them.
    expect(items.filter((i) => /CLAUDE\.md|README\.md|commit directly|e2e tests|never npm/i.test(i.content))).toEqual(
      [],
    );
    expect(items.find((i) => i.key === "recipe:pre-commit")?.content).toBe(
      "The pre-commit hook runs `bun run test` → `bun run lint` → `bun run typecheck`; a commit lands only when all pass (.husky/pre-commit).",
    );
  });

  test("a rule the file states and a session repeats is not stored again", async () => {
    const said: Ev[] = [
      { type: "user_message", text: "In this repo, never commit directly to main." },
      { type: "assistant_response", text: "Understood." },
    ];
    sb = sandbox();
    writeFileSync(join(sb.root, "AGENTS.md"), "# Agents\n\n- Never commit directly to main.\n");
    await processEvents(request(sb.root, events(sb.root, said)), sb.deps());
    expect(currentItems(sb.db, sb.root).filter((i) => /commit directly to main/i.test(i.content))).toEqual([]);
    // Without the file, the user's rule is the memory.
    const bare = sandbox();
    try {
      await processEvents(request(bare.root, events(bare.root, said)), bare.deps());
      expect(currentItems(bare.db, bare.root).filter((i) => /commit directly to main/i.test(i.content))).toHaveLength(
        1,
      );
    } finally {
      bare.cleanup();
    }
  });
});

describe("times", () => {
  test("an older episode processed late (a backfill out of order) never moves last-seen back or before creation", async () => {
    const sb = sandbox();
    try {
      const say = (iso: string) =>
        events(
          sb.root,
          [
            { type: "user_message", text: "We use pnpm in this repo, never npm.", session: iso },
            { type: "assistant_response", text: "Noted.", session: iso },
          ],
          iso,
        );
      await processEvents(request(sb.root, say("2026-03-10T09:00:00Z")), sb.deps());
      await processEvents(request(sb.root, say("2026-03-01T09:00:00Z")), sb.deps());
      const [item] = currentItems(sb.db, sb.root).filter((i) => i.key === "package_manager");
      expect(item!.evidence_episode_ids).toHaveLength(2);
      expect(item!.updated_at >= item!.created_at).toBe(true);
      expect(item!.updated_at.startsWith("2026-03-10")).toBe(true);
    } finally {
      sb.cleanup();
    }
  });
});

describe("distilled text", () => {
  test("paths of the machine that wrote the transcript become repo-relative or ~; narration goes; length is capped", () => {
    const root = "/Users/cedric/Code/agents-md-evaluator";
    expect(
      distilText(
        `Let me check the config. The hook reads ${root}/.husky/pre-commit and /Users/cedric/.config/rtk/config.toml.`,
        [root],
      ),
    ).toBe("The hook reads .husky/pre-commit and ~/.config/rtk/config.toml.");
    expect(distilText("Logs live in /home/dana/app/logs.", ["/srv/app"])).toBe("Logs live in ~/app/logs.");
    const long = `${"The remediation pipeline runs four phases and resets the working directory afterwards. ".repeat(12)}`;
    expect(estimateTokens(distilText(long, []))).toBeLessThanOrEqual(HARD_CAP_TOKENS);
    expect(estimateTokens(capTokens(long, 60))).toBeLessThanOrEqual(60);
  });
});
