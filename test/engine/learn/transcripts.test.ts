import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { recall } from "../../../src/engine/retrieve/recall.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { timeline } from "../../../src/engine/retrieve/timeline.ts";
import { RecallQuery, TimelineQuery } from "../../../src/shared/api.ts";
import { estimateTokens, loadTokenCounter } from "../../../src/shared/tokens.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { currentItems, type MemoryItem } from "../../../src/sql/memory-items.ts";
import { listUserStyle } from "../../../src/sql/user-style.ts";
import { request, sandbox, transcriptEvents, TRANSCRIPTS, USER, type Sandbox } from "./helpers.ts";

/**
 * The engine on real Claude Code / Codex transcripts (../shared/fixtures, cwd rewritten to a temp
 * repo, parsed by the real capture normalizers). Every asserted content was checked by reading the
 * transcript: e.g. b1 is a lint failure (`exhaustive` linter, summarize.go:116) fixed by listing the
 * AgentType cases explicitly after the user refused an `//exhaustive:ignore` directive.
 */
const HAVE = existsSync(TRANSCRIPTS);
const B1 = "claude-code/entireio-cli/b1/5d3b4e29e9/0/full.jsonl";
const E8 = "claude-code/entireio-cli/8e/0a64736bc7/0/full.jsonl";
const A6 = "claude-code/entireio-cli/a6/e4c2a0fbd1/0/full.jsonl";
const SHORT = "claude-code/marot-spotter/short.jsonl";
const CODEX = "codex/vibecodingtracker/test_conversation_oai.jsonl";

let sb: Sandbox | null = null;
afterEach(() => {
  sb?.cleanup();
  sb = null;
});

async function run(rel: string, kind: "claude" | "codex" = "claude") {
  sb = sandbox();
  const events = transcriptEvents(rel, kind, sb.root);
  const res = await processEvents(request(sb.root, events), sb.deps());
  return { sb, events, res, items: currentItems(sb.db, sb.root), episodes: listEpisodes(sb.db, sb.root) };
}

function byKey(items: readonly MemoryItem[], key: string): MemoryItem {
  const it = items.find((i) => i.key === key);
  if (!it) throw new Error(`no item ${key}; have ${items.map((i) => i.key).join(", ")}`);
  return it;
}

describe.skipIf(!HAVE)("engine on real transcripts (needs ../shared beside the repo)", () => {
  test("b1: the timeline and recall state the episode's outcome once", async () => {
    const { sb, episodes } = await run(B1);
    expect(episodes[0]!.summary).toContain("Outcome: fixed");
    const ctx = retrievalContext(sb.db, sb.root);
    const t = await timeline(ctx, TimelineQuery.parse({ project_id: sb.root }));
    const r = await recall(ctx, RecallQuery.parse({ project_id: sb.root, episode_id: episodes[0]!.id }));
    for (const md of [t.markdown, r.markdown]) expect(md.match(/Outcome:/g)?.length).toBe(1);
  });

  test("b1: recall never exceeds its budget counted by the real o200k tokenizer (the estimator undercounts this Go/shell output)", async () => {
    const { sb, episodes } = await run(B1);
    const ctx = retrievalContext(sb.db, sb.root);
    const o200k = await loadTokenCounter("o200k");
    for (const budget of [100, 200, 400, 600, 1000, 2000]) {
      const r = await recall(
        ctx,
        RecallQuery.parse({ project_id: sb.root, episode_id: episodes[0]!.id, context_budget_tokens: budget }),
      );
      expect({ budget, real: Math.min(o200k.count(r.markdown), budget) }).toEqual({
        budget,
        real: o200k.count(r.markdown),
      });
    }
  });

  test("a fact read from the repo's manifest dates from when sqrl read it, not from the old transcript", async () => {
    sb = sandbox();
    writeFileSync(join(sb.root, "go.mod"), "module github.com/example/cli\n\ngo 1.24\n");
    const events = transcriptEvents(B1, "claude", sb.root);
    await processEvents(request(sb.root, events), sb.deps());
    const lang = currentItems(sb.db, sb.root).find((i) => i.key === "language");
    expect(lang?.content).toContain("Go");
    expect(lang!.updated_at).toBe(new Date(sb.deps().now!()).toISOString());
    // The transcript's own memories keep the time the episode showed them.
    const pit = currentItems(sb.db, sb.root).find((i) => i.type === "pitfall");
    if (pit) expect(pit.updated_at < "2026-03-01").toBe(true);
  });

  test("b1: the lint failure waits for recurrence; the refused //exhaustive:ignore is a style item", async () => {
    const { items, episodes, events } = await run(B1);
    expect(episodes.length).toBe(1);
    expect(episodes[0]!.start_ts).toBe("2026-02-13T08:51:35.529Z");
    expect(episodes[0]!.event_count).toBe(events.length);
    expect(episodes[0]!.status).toBe("closed");
    expect(episodes[0]!.extracted_at).not.toBeNull();
    // The linter states the rule and its message each time it fires: a lint rule's lesson waits until
    // another episode meets the rule again, even when the user stepped in (a fresh reviewer rejected it
    // at first sight as restating the error). What the user said about it is a rule of its own.
    expect(items.filter((i) => i.type === "pitfall")).toEqual([]);
    const sup = byKey(items, "no_lint_suppression");
    expect(sup.type).toBe("user_style");
    expect(sup.content).toContain("`//exhaustive:ignore`");
    expect(sup.content).toBe("Don't add `//exhaustive:ignore` to silence the linter; fix the code instead.");
    expect(byKey(items, "lint_command").content).toBe("Lints with `mise run lint`.");
    expect(byKey(items, "test_command").content).toStartWith("Runs tests with `mise run test`");
    expect(items.some((i) => i.key.startsWith("module:"))).toBe(false); // "sessions work on x.go" is not kept
  });

  test("8e: the fmt → lint → test sequence that ended green is a recipe; 'keep our working documentation in linear', said of ticket ENT-98, is that ticket's", async () => {
    const { items, episodes } = await run(E8);
    expect(episodes.length).toBe(1); // the lone `summary` record merged into its neighbour
    const recipe = byKey(items, "recipe:verify");
    expect(recipe.content).toBe("To verify a change: `mise run fmt` → `mise run lint` → `mise run test`."); // complete: stored at once
    // "I'm working on linear ENT-98. keep our working documentation in linear.": three reviewers read the
    // stored line as a one-ticket instruction.
    expect(items.some((i) => /documentation in linear/i.test(i.content))).toBe(false);
    expect(items.some((i) => i.key.startsWith("correction:"))).toBe(false); // a quoted refusal is not a wiki line
    expect(items.some((i) => i.type === "pitfall")).toBe(false); // nothing failed in this session
  });

  test("a6: a 22-minute pause splits the session into two episodes", async () => {
    const { episodes, items } = await run(A6);
    expect(episodes.length).toBe(2);
    expect(episodes[0]!.end_ts).toBe("2026-01-07T12:12:29.387Z");
    expect(episodes[1]!.start_ts).toBe("2026-01-07T12:34:56.468Z");
    expect(episodes[0]!.session_id).toBe(episodes[1]!.session_id);
    expect(episodes.every((e) => e.status === "closed" && e.extracted_at !== null)).toBe(true);
    // test → lint alone is not a complete flow: it became a recipe because both episodes ran it green.
    const recipe = byKey(items, "recipe:verify");
    expect(recipe.content).toBe("To verify a change: `mise run test` → `mise run lint`.");
    expect(new Set(recipe.evidence_episode_ids)).toEqual(new Set(episodes.map((e) => e.id)));
  });

  test("short: an error the session never resolved (refused `mix phx.server`) stores nothing", async () => {
    const { items, episodes } = await run(SHORT);
    expect(episodes.length).toBe(1);
    expect(items).toEqual([]);
    expect(episodes[0]!.outcome).toBe("user refused a step");
  });

  test("summaries are 80–150 tokens and say what happened", async () => {
    for (const rel of [B1, E8, A6]) {
      const { episodes } = await run(rel);
      for (const ep of episodes) {
        const n = estimateTokens(ep.summary);
        expect(n).toBeGreaterThanOrEqual(80);
        expect(n).toBeLessThanOrEqual(150);
        expect(ep.summary).toStartWith("Goal: ");
      }
      sb!.cleanup();
      sb = null;
    }
    const { episodes } = await run(B1);
    expect(episodes[0]!.summary).toContain("`mise run lint` failed, then passed");
    expect(episodes[0]!.summary).toContain("Changed `cmd/entire/cli/summarize/summarize.go`");
  });

  test("codex rollout: one episode, its user request as the goal, the files it patched", async () => {
    const { episodes } = await run(CODEX, "codex");
    expect(episodes.length).toBe(1);
    expect(episodes[0]!.summary).toContain('Goal: "幫我檢查一下 go.mod');
    expect(episodes[0]!.file_paths).toContain("go.mod");
  });

  test("8e's style items are this repo's conventions: none of them goes to the global user.db", async () => {
    const { sb, items } = await run(E8);
    const u = sb.userDb();
    try {
      expect(listUserStyle(u, USER)).toEqual([]);
    } finally {
      u.close();
    }
    expect(items.filter((i) => i.type === "user_style").every((i) => i.scope === "project" && i.user_id === null)).toBe(
      true,
    );
  });
});

describe.skipIf(!HAVE)("what the repository already tells the agent (needs ../shared beside the repo)", () => {
  const BE = "claude-code/packmindhub-context-evaluator/be/0878c3d75d/0/full.jsonl";
  async function runWith(claudeMd: string | null) {
    sb = sandbox();
    if (claudeMd) writeFileSync(join(sb.root, "CLAUDE.md"), claudeMd);
    await processEvents(request(sb.root, transcriptEvents(BE, "claude", sb.root)), sb.deps());
    return currentItems(sb.db, sb.root);
  }

  test("command habits whose commands CLAUDE.md names are not stored again; lessons are", async () => {
    const without = await runWith(null);
    const habits = ["package_manager", "lint_command", "typecheck_command"];
    expect(without.map((i) => i.key)).toEqual(expect.arrayContaining(habits));
    const md =
      "# Project\n\n## Commands\n\n- `bun run test`: unit tests\n- `bun run lint`: Biome\n- `bun run typecheck`: tsc\n";
    const withMd = await runWith(md);
    const keys = withMd.map((i) => i.key);
    for (const k of habits) expect([k, keys.includes(k)]).toEqual([k, false]);
    // The lesson says what went wrong; the file does not.
    expect(withMd.some((i) => i.content.includes("`Bun.spawn` doesn't throw"))).toBe(true);
  });

  test("a file naming only some of the commands leaves what it does not name", async () => {
    const keys = (await runWith("# Project\n\nRun `bun run test` before you push.\n")).map((i) => i.key);
    // `bun run lint` and `bun run typecheck` are not in the file: what names them stays.
    expect(keys).toEqual(expect.arrayContaining(["lint_command", "typecheck_command"]));
    // The file's `bun run test` already shows bun is the package manager: that habit is not stored again.
    expect(keys).not.toContain("package_manager");
  });
});
