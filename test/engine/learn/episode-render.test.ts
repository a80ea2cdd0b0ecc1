import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { renderEpisode, summaryDigest } from "../../../src/engine/learn/extract/episode-render.ts";
import { estimateTokens } from "../../../src/shared/tokens.ts";
import { fixtureEvents, TRANSCRIPTS, transcriptEvents } from "./helpers.ts";

const HAVE = existsSync(TRANSCRIPTS);
const ROOT = "/tmp/sqrl-render-repo";
const CC = "claude-code";

function rendered(rel: string, maxTokens = 200_000): string {
  return renderEpisode(transcriptEvents(join(CC, rel), "claude", ROOT).map(toEngineEvent), maxTokens).text;
}

if (!HAVE) console.log("(episode rendering on the shared transcripts skipped: ../shared is not beside the repo)");

// Each case is a labelled rule, decision or lesson whose evidence never reached the model when every
// user message was cut at 700 characters, answers were not shown and a failure showed its first lines.
describe.skipIf(!HAVE)("what the model reads of a real episode", () => {
  test("the opening plan is shown far enough for its reasons (context-evaluator 3d/…/1)", () => {
    const text = rendered("packmindhub-context-evaluator/3d/da33aeff7e/1/full.jsonl");
    const opening = text.split("\n").find((l) => /^\[\d+\] user: /.test(l))!;
    expect(opening.length).toBeGreaterThan(3000);
    expect(opening).toContain("when in doubt, prefer a standard");
    expect(opening).toContain("Agent-agnostic language");
  });

  test("the user's answers to the agent's questions are shown as the user's (agentcmd 06381696)", () => {
    const text = rendered("jnarowski-agentcmd/06381696-0074-49f8-863e-6ad4fac507f9.jsonl");
    const line = text.split("\n").find((l) => l.includes("user answered:"));
    expect(line).toBeDefined();
    expect(line).toContain('"Which scrolling approach would you like to implement?"="AI Elements components"');
    expect(line).toContain("Remove anything custom we have and use the ai elements approach");
    expect(line).not.toContain("You can now continue");
  });

  test("a compaction summary shows its errors and fixes and the user's messages, not its code (entireio a6/…)", () => {
    const text = rendered("entireio-cli/a6/e4c2a0fbd1/0/full.jsonl");
    const line = text.split("\n").find((l) => l.includes("earlier context:"))!;
    expect(line).toContain("Errors and fixes:");
    expect(line).toContain("Caused by empty `BaseCommit` resulting in branch name `entire/`");
    expect(line).toContain("All user messages:");
    expect(line).not.toContain("Files and Code Sections");
    expect(line).not.toContain("Let me chronologically analyze"); // the analysis before the summary proper
  });

  test("a commit its hook stopped fails, and shows the type errors at the end of its output (context-evaluator 20/…)", () => {
    const text = rendered("packmindhub-context-evaluator/20/b41b43efc7/0/full.jsonl");
    const commit = text.split("\n").find((l) => l.includes("rtk git commit") && l.includes("FAILED: git commit"))!;
    expect(commit).toContain("→ fail");
    expect(commit).toMatch(
      /→ fail: FAILED: git commit \| .*error TS2307: Cannot find module '[./]*(?:embedded\/)?prompts-assets'/,
    );
  });

  test("a Linear ticket the session fetched is shown as the task's statement, without its links (entireio 8e/…)", () => {
    const text = rendered("entireio-cli/8e/0a64736bc7/0/full.jsonl");
    const tickets = text.split("\n").filter((l) => / ticket ENT-98 /.test(l));
    expect(tickets.length).toBeGreaterThan(0);
    expect(tickets[0]).toContain("(the task as filed): move help.go back into the main cli package:");
    expect(tickets[0]).toContain("I tried to move the commands out previously but that was too fraught");
    for (const line of tickets) expect(line).not.toMatch(/linear\.app|gitBranchName|createdBy/);
  });

  test("the whole still fits the budget: the middle goes, the opening request stays", () => {
    const events = transcriptEvents(
      join(CC, "packmindhub-context-evaluator/3d/da33aeff7e/1/full.jsonl"),
      "claude",
      ROOT,
    ).map(toEngineEvent);
    const r = renderEpisode(events, 1500);
    expect(estimateTokens(r.text)).toBeLessThanOrEqual(1500);
    expect(r.text).toMatch(/^\[\d+\] user: Implement the following plan/m);
    expect(r.refs.length).toBe(events.length);
  });
});

describe("a failed command", () => {
  test("with no recognisable error line shows the start and the end of its output", () => {
    const lines = Array.from({ length: 60 }, (_, i) => `step ${i + 1} ok`);
    const failed = toEngineEvent({
      ...fixtureEvents("habits", ROOT)[0]!,
      event_type: "command_run",
      content_json: JSON.stringify({
        command: "./deploy.sh",
        exit_code: 3,
        output: [...lines, "Refusing to deploy: the staging lock is held by another run"].join("\n"),
      }),
    });
    const text = renderEpisode([failed], 10_000).text;
    expect(text).toContain("→ fail: step 1 ok");
    expect(text).toContain("Refusing to deploy: the staging lock is held by another run");
  });
});

describe("a compaction summary's digest", () => {
  const summary = [
    "This session is being continued from a previous conversation that ran out of context.",
    "Analysis:",
    "1. Initial request: the user asked for X.",
    "2. Errors: none yet.",
    "",
    "Summary:",
    "1. Primary Request and Intent:",
    "   Make the importer idempotent.",
    "2. Key Technical Concepts:",
    "   - SQLite upserts",
    "3. Files and Code Sections:",
    "   - src/import.ts: 400 lines of code",
    "4. Errors and fixes:",
    "   - Duplicate rows: the hash left out the offset; fixed by hashing it.",
    "5. Pending Tasks:",
    "   - none",
  ].join("\n");

  test("keeps the request and the errors and fixes of the summary proper, in order", () => {
    const d = summaryDigest(summary, 2000);
    expect(d).toBe(
      "Primary Request and Intent: Make the importer idempotent. ¶ Errors and fixes: - Duplicate rows: the hash left out the offset; fixed by hashing it.",
    );
  });

  test("cuts each kept section to its share, and a summary without sections from its start", () => {
    expect(summaryDigest(summary, 200).length).toBeLessThanOrEqual(200);
    expect(summaryDigest("Fixed the flaky test by waiting for the port.", 20)).toBe("Fixed the flaky…");
  });
});
