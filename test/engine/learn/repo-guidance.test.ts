import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { whyRepoSays } from "../../../src/engine/learn/apply/repo-says.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import {
  guidanceCoverage,
  guidanceDigest,
  repoGuidance,
  restatesGuidance,
} from "../../../src/engine/learn/repo-guidance.ts";
import { estimateTokens } from "../../../src/shared/tokens.ts";
import { currentItems, type MemoryItem } from "../../../src/sql/memory-items.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { HAVE_PACKMIND, request, sandbox, transcriptEvents, type Sandbox } from "./helpers.ts";

/**
 * The guidance an agent loads (learn/repo-guidance.ts) and what memory leaves out because of it
 * (apply/repo-says.ts): nothing the repository's CLAUDE.md, AGENTS.md, skills or linked docs already
 * say is stored, and none of it is copied or cut into memory.
 */
const tmp = tempDir("sqrl-guidance-");
afterAll(() => tmp.cleanup());

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

function git(root: string, ...args: string[]): void {
  const r = Bun.spawnSync(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
}

/**
 * A realistic CLAUDE.md and AGENTS.md for the context-evaluator project whose real sessions are in
 * the shared fixtures (Bun, Biome, a Husky hook, `rtk` in the shell), with the two guidance
 * sentences a copy once cut ("main history must never be rewritten", "… must validate against the
 * schema in docs/evaluator-schema.json"), a linked testing guide and a skill.
 */
const CLAUDE_MD = `# CLAUDE.md

This file provides guidance to Claude Code when working with code in this repository.

## After Every Code Modification

**MANDATORY**: run the tests after each code change to catch regressions early:

\`\`\`bash
bun run test
\`\`\`

If any tests fail, you MUST fix them before completing the task. At the end of any task, also run lint and fix issues with \`bun run lint\`.

## Pre-commit Hook

This project uses Husky with a pre-commit hook that runs:
- \`bun run test\` - all tests must pass
- \`bun run lint\` - code must pass linting
- \`bun run typecheck\` - TypeScript types must be valid

Commits will be blocked if any of them fails.

## Production Build

Always use \`bun run build\` for production builds. Never use \`build:binaries\` directly: it compiles the binaries without rebuilding the frontend, so they serve stale UI code.

See [the testing guide](docs/testing.md) for where tests live.
`;
const AGENTS_MD = `# AGENTS.md

## Git

- Main history must never be rewritten: no force-push to main, no rebase of published commits.
- Every evaluator prompt must validate against the schema in docs/evaluator-schema.json before it is committed.

## Skills

Skills for the AGENTS.md target live in \`.agents/skills/<name>/SKILL.md\`; Claude Code skills live in \`.claude/skills/\`.
`;
const TESTING_MD = `# Testing

Tests live next to their source as \`*.test.ts\` and run with Bun's test runner. Use \`bun run test\`, never \`bun test\` alone, so the preload script runs.
`;
const SKILL_MD = `---
name: release
---
# Release

Before a release, bump the version in package.json and add the release notes to CHANGELOG.md.
`;

describe("what the guidance says", () => {
  const root = join(tmp.path, "files");
  write(root, {
    "CLAUDE.md": CLAUDE_MD,
    "AGENTS.md": AGENTS_MD,
    "docs/testing.md": TESTING_MD,
    "docs/unlinked.md": "# Unlinked\n\nNever deploy on Fridays.\n",
    ".agents/skills/release/SKILL.md": SKILL_MD,
    ".cursor/rules/style/naming.mdc": "# Naming\n\nComponent files are PascalCase.\n",
    ".github/copilot-instructions.md": "# Copilot\n\nPrefer named exports.\n",
    "README.md": "# Tool\n\nSee [the roadmap](docs/roadmap.md).\n",
    "docs/roadmap.md": "# Roadmap\n\nA plugin API.\n",
  });

  test("reads every file an agent loads and the docs they link to, not the README's links", () => {
    const g = repoGuidance(root);
    expect(g.files).toEqual(
      expect.arrayContaining([
        "CLAUDE.md",
        "AGENTS.md",
        ".github/copilot-instructions.md",
        "README.md",
        ".cursor/rules/style/naming.mdc",
        ".agents/skills/release/SKILL.md",
        "docs/testing.md",
      ]),
    );
    expect(g.files).not.toContain("docs/unlinked.md");
    expect(g.files).not.toContain("docs/roadmap.md");
  });

  test("a restatement is recognised; a lesson or rule the files do not give is not", () => {
    const g = repoGuidance(root);
    for (const said of [
      "Never use `build:binaries` directly: it compiles binaries without rebuilding the frontend.",
      "Main history must never be rewritten.",
      "For the AGENTS.md target, skills live in .agents/skills/<name>/SKILL.md.",
      "Before a release, bump the version in package.json and add release notes to CHANGELOG.md.",
      "Evaluator prompts must validate against docs/evaluator-schema.json.",
    ])
      expect([said, restatesGuidance(g, said)]).toEqual([said, true]);
    for (const fresh of [
      "`Bun.spawn` doesn't throw on non-zero exit codes.",
      "RTK filters the output of `gh api`; bypass it with `rtk proxy gh api …`.",
      "`git commit` was blocked by the pre-commit hook. Cause: `bun test` picks up test files in `tmp/clones/` from previous evaluations.",
      "The Cursor Agent CLI requires explicit workspace trust when running non-interactively; pass `--trust`.",
      "Deploys go out on Tuesdays only.",
    ])
      expect([fresh, restatesGuidance(g, fresh)]).toEqual([fresh, false]);
  });

  test("a recipe whose every command the files name is a repeat; one with a command they do not name is not", () => {
    const g = repoGuidance(root);
    const recipe = (content: string) => ({
      type: "recipe" as const,
      key: "recipe:verify",
      content,
      tags: [],
      importance: 0.6,
      confidence: 0.8,
      scope: "project" as const,
      file_paths: [],
      source_episode_id: "ep",
      source_event_ids: [],
      rule: "recipes",
    });
    expect(whyRepoSays(g, recipe("To verify a change: `bun run lint` → `bun run typecheck` → `bun run test`."))).toBe(
      "commands",
    );
    expect(whyRepoSays(g, recipe("To verify a change: `bun run lint` → `bunx playwright test`."))).toBeNull();
  });

  test("the LLM's digest names every file and its headings within a few hundred tokens", () => {
    const d = guidanceDigest(repoGuidance(root), 300);
    expect(d).toContain("CLAUDE.md: CLAUDE.md; After Every Code Modification; Pre-commit Hook; Production Build");
    expect(d).toContain(".agents/skills/release/SKILL.md");
    expect(estimateTokens(d)).toBeLessThanOrEqual(300);
    // A long guidance tree is cut to the budget, every file still named.
    const big = join(tmp.path, "big");
    const headings = Array.from({ length: 200 }, (_, i) => `## Section ${i} about the evaluator engine\n\nText.\n`);
    write(big, {
      "CLAUDE.md": `# Big\n\n${headings.join("\n")}`,
      "AGENTS.md": "# Agents\n\n## Git\n\nNo force-push.\n",
    });
    const bd = guidanceDigest(repoGuidance(big), 300);
    expect(estimateTokens(bd)).toBeLessThanOrEqual(300);
    expect(bd).toContain("- AGENTS.md: Agents; Git");
    expect(bd).toContain("- CLAUDE.md: Big; Section 0");
  });

  test("false drops: against another project's guidance no real item's coverage reaches the bar", () => {
    // The labelled items of the context-evaluator sessions against an unrelated Go project's guidance.
    const go = join(tmp.path, "go");
    write(go, {
      "CLAUDE.md":
        "# Entire CLI\n\n## Development\n\nRun `mise run test` for unit tests and `mise run test:ci` before every commit.\n\n## Linting\n\n`mise run fmt && mise run lint`; golangci-lint runs in CI.\n\n## Tests\n\nAlways use `t.Parallel()` in tests. Tests that touch git state must use an isolated temp repo.\n",
    });
    const g = repoGuidance(go);
    for (const item of [
      "`Bun.spawn` doesn't throw on non-zero exit codes.",
      "RTK filters the output of `gh api`; bypass it with `rtk proxy gh api …`.",
      "Before a release, update package.json and changelog.md.",
      "Lint rule `exhaustive` requires all enum cases to be explicitly handled.",
      "Don't add `//exhaustive:ignore` to silence the linter; fix the code instead.",
      "We use pnpm in this repo, never npm.",
    ])
      expect([item, guidanceCoverage(g, item).coverage < 0.7]).toEqual([item, true]);
  });
});

describe.skipIf(!HAVE_PACKMIND)("real sessions under a real CLAUDE.md and AGENTS.md (needs ../shared)", () => {
  const SESSIONS = ["be/0878c3d75d/0", "7e/b9199a878a/0", "c2/e34e196ddb/0", "c4/89fde99d33/1"];
  let withGuidance: MemoryItem[] = [];
  let without: MemoryItem[] = [];
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const b of boxes) b.cleanup();
  });

  async function run(guidance: boolean): Promise<{ sb: Sandbox; items: MemoryItem[] }> {
    const sb = sandbox();
    boxes.push(sb);
    git(sb.root, "init", "-q", "-b", "main");
    if (guidance) {
      write(sb.root, { "CLAUDE.md": CLAUDE_MD, "AGENTS.md": AGENTS_MD, "docs/testing.md": TESTING_MD });
      git(sb.root, "add", "CLAUDE.md", "AGENTS.md", "docs/testing.md");
      git(sb.root, "commit", "-q", "-m", "Add agent guidance");
    }
    for (const rel of SESSIONS)
      await processEvents(
        request(
          sb.root,
          transcriptEvents(`claude-code/packmindhub-context-evaluator/${rel}/full.jsonl`, "claude", sb.root),
        ),
        sb.deps(),
      );
    return { sb, items: currentItems(sb.db, sb.root) };
  }

  test("no stored item repeats, cites or truncates the guidance; what it does not say is kept", async () => {
    const on = await run(true);
    withGuidance = on.items;
    without = (await run(false)).items;
    const g = repoGuidance(on.sb.root);
    expect(g.files).toEqual(["CLAUDE.md", "AGENTS.md", "docs/testing.md"]);
    for (const i of withGuidance) {
      expect([
        i.content,
        whyRepoSays(g, {
          ...i,
          source_episode_id: i.source_episode_id ?? "",
          rule: i.tags.includes("tooling") ? "style-habits" : "stored",
        }),
      ]).toEqual([i.content, null]);
      expect(i.content).not.toMatch(
        /\((?:CLAUDE|AGENTS)\.md:\d+\)|\bhistory must never be rewritten\b|must validate against/i,
      );
      expect(i.file_paths.filter((p) => /(?:CLAUDE|AGENTS)\.md$|^docs\/testing\.md$/.test(p))).toEqual([]);
    }
    // No run of eight words of the guidance's prose appears in any item (a copy, whole or cut).
    const prose = `${CLAUDE_MD}\n${AGENTS_MD}\n${TESTING_MD}`
      .replace(/```[\s\S]*?```/g, " ")
      .toLowerCase()
      .match(/[a-z0-9.:/`-]+/g)!;
    const items = withGuidance.map((i) =>
      i.content
        .toLowerCase()
        .match(/[a-z0-9.:/`-]+/g)!
        .join(" "),
    );
    for (let k = 0; k + 8 <= prose.length; k++) {
      const run8 = prose.slice(k, k + 8).join(" ");
      expect([run8, items.some((t) => t.includes(run8))]).toEqual([run8, false]);
    }
    // The lessons the files do not give stay.
    const contents = withGuidance.map((i) => i.content).join("\n");
    expect(contents).toContain("`Bun.spawn` doesn't throw");
    expect(contents).toContain("rtk proxy gh api");
    expect(contents).toContain("`rtk bun run test` fails");
    expect(contents).toContain("Before a release, update package.json and changelog.md.");
  });

  test("without the files the same sessions store the repeats the files now cover", () => {
    const keys = (xs: MemoryItem[]) => xs.map((i) => i.key);
    // The habits of the commands CLAUDE.md lists (`bun run lint`, `bun run typecheck`, bun itself), and
    // the hook seen running, which its "Pre-commit Hook" section tells (as scripts, not the commands).
    const repeats = ["package_manager", "lint_command", "typecheck_command", "recipe:pre-commit"];
    expect(keys(without)).toEqual(expect.arrayContaining(repeats));
    for (const k of repeats) expect([k, keys(withGuidance).includes(k)]).toEqual([k, false]);
    expect(without.length - withGuidance.length).toBe(repeats.length);
  });
});
