import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  citedPaths,
  currentText,
  oneEditApart,
  renamedByEdit,
  stillNamesOld,
} from "../../../src/engine/learn/apply/follow-renames.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { reprocessProject } from "../../../src/engine/learn/reprocess.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { currentItems, predecessors } from "../../../src/sql/memory-items.ts";
import { eventRows, request, sandbox, transcriptEvents, TRANSCRIPTS, type EventLine, type Sandbox } from "./helpers.ts";

/**
 * A memory checked against later sessions: a rule citing `.agent/skills` follows the project when
 * every later session uses `.agents/skills` (the case a reviewer rejected in the context-evaluator
 * sessions), and stays as it is while its own name is still in use or only one episode differs.
 */

type Ev = EventLine;
/** One session's events, an hour apart from the next session (a new episode each). */
function session(root: string, name: string, hour: number, list: readonly Ev[]): EventDTO[] {
  return eventRows(root, list, { baseMs: Date.parse("2026-02-17T09:00:00Z") + hour * 3_600_000, session: name });
}

const RULE = 'Mention also that for AGENTS.md target, the skills should be in ".agent/skills" directory';
const said = (text: string): Ev[] => [
  { type: "user_message", text },
  { type: "assistant_response", text: "Added the note." },
  { type: "assistant_response", text: "Done." },
];
const uses = (path: string): Ev[] => [
  { type: "user_message", text: "add the copilot target" },
  {
    type: "assistant_response",
    text: `Skill placement: AGENTS.md → \`${path}/<name>/\`, Claude Code → \`.claude/skills/\`.`,
  },
  { type: "assistant_response", text: "Done." },
];
/** The edit that renamed it: both names in one event. */
const renames: Ev[] = [
  { type: "user_message", text: "fix the skills folder name" },
  {
    type: "code_change",
    input: {
      file_path: "prompts/remediation.md",
      old_string: "skills go in `.agent/skills/`",
      new_string: "skills go in `.agents/skills/`",
    },
    paths: ["prompts/remediation.md"],
  },
  { type: "assistant_response", text: "Renamed." },
];

let sb: Sandbox | null = null;
afterEach(() => {
  sb?.cleanup();
  sb = null;
});

async function run(...sessions: Ev[][]): Promise<Sandbox> {
  sb = sandbox();
  const root = sb.root;
  const evs = sessions.flatMap((s, i) => session(root, `s${i}`, i, s));
  // Each session processed as it ends, the last one a day later (all closed).
  for (let i = 0; i < sessions.length; i++) {
    const mine = evs.filter((e) => e.session_id === `s${i}`);
    await processEvents(request(root, mine), sb.deps({ now: () => Date.parse(mine.at(-1)!.timestamp) + 86_400_000 }));
  }
  return sb;
}

function rule(s: Sandbox) {
  return currentItems(s.db, s.root, ["user_style"]).find((i) => i.content.includes("skills should be in"));
}

describe("names the later sessions use instead", () => {
  test("two later episodes use a name one letter away and never the old one: the memory follows", async () => {
    const s = await run(said(RULE), renames, uses(".agents/skills"), uses(".agents/skills"));
    const item = rule(s)!;
    expect(item.content).toBe('For AGENTS.md target, the skills should be in ".agents/skills" directory.');
    expect(item.tags).toContain("renamed-later");
    // The old version is kept as history, linked to the new one.
    expect(predecessors(s.db, item.id).map((p) => p.content)).toEqual([
      'For AGENTS.md target, the skills should be in ".agent/skills" directory.',
    ]);
  });

  test("sqrl reprocess re-extracts the rule and follows the rename again", async () => {
    const s = await run(said(RULE), renames, uses(".agents/skills"), uses(".agents/skills"));
    await reprocessProject(s.db, s.root, s.deps({ now: () => Date.parse("2026-02-20T00:00:00Z") }));
    expect(rule(s)!.content).toBe('For AGENTS.md target, the skills should be in ".agents/skills" directory.');
  });

  test("one later episode is not enough; the old name still in use keeps the memory as it is", async () => {
    const once = await run(said(RULE), uses(".agents/skills"));
    expect(rule(once)!.content).toContain('".agent/skills"');
    once.cleanup();
    const both = await run(said(RULE), uses(".agents/skills"), uses(".agent/skills"), uses(".agents/skills"));
    expect(rule(both)!.content).toContain('".agent/skills"');
  });

  test("a memory that names the old spelling on purpose is not rewritten into a contradiction: it becomes history", async () => {
    const s = await run(
      said('For AGENTS.md target, the skills should be in ".agent/skills" (singular `.agent`, as I said), always'),
      renames,
      uses(".agents/skills"),
      uses(".agents/skills"),
    );
    const now = currentItems(s.db, s.root).map((i) => i.content);
    expect(now.filter((c) => c.includes("singular"))).toEqual([]);
    const all = s.db.query("SELECT content FROM memory_items WHERE content LIKE '%singular%'").all() as Array<{
      content: string;
    }>;
    expect(all.length).toBeGreaterThan(0); // kept, as history
    expect(all.every((r) => r.content.includes('".agent/skills"'))).toBe(true); // never rewritten
  });

  test("a memory that credits the user with the old name becomes history instead of crediting them with the new one", async () => {
    // The user's rule is stored from the first session; a model writes such a rule in the third person.
    const modelWords = "AGENTS.md skills belong in the .agent/skills/ directory, as the user specified.";
    sb = sandbox();
    const root = sb.root;
    const sessions = [said(RULE), renames, uses(".agents/skills"), uses(".agents/skills")];
    const evs = sessions.flatMap((list, i) => session(root, `s${i}`, i, list));
    for (let i = 0; i < sessions.length; i++) {
      const mine = evs.filter((e) => e.session_id === `s${i}`);
      await processEvents(request(root, mine), sb.deps({ now: () => Date.parse(mine.at(-1)!.timestamp) + 86_400_000 }));
      if (i === 0) sb.db.query("UPDATE memory_items SET content = ? WHERE id = ?").run(modelWords, rule(sb)!.id);
    }
    const now = currentItems(sb.db, root).map((i) => i.content);
    expect(now.filter((c) => c.includes("user specified"))).toEqual([]);
    const all = sb.db.query("SELECT content FROM memory_items WHERE content LIKE '%user specified%'").all() as Array<{
      content: string;
    }>;
    expect(all.map((r) => r.content)).toEqual([modelWords]); // kept as history, never rewritten
  });

  test("what still names the old spelling after a rewrite", () => {
    const from = ".agent/skills";
    const to = ".agents/skills";
    expect(stillNamesOld("skills go in `.agents/skills/` (singular `.agent`, as specified)", from, to)).toBe(true);
    expect(stillNamesOld("skills go in `.agents/skills/`, not in .claude/skills", from, to)).toBe(false);
    expect(stillNamesOld("call summarize(x) before saving", "summarise", "summarize")).toBe(false);
  });

  test("what counts as the same name one edit away, and what an edit replaced", () => {
    expect(oneEditApart(".agent/skills", ".agents/skills")).toBe(true);
    expect(oneEditApart("src/db/tx.ts", "src/db/tz.ts")).toBe(true);
    expect(oneEditApart(".agents/skills", "/.agents/skills")).toBe(false); // a separator, not a new name
    expect(oneEditApart(".agent/skills", ".claude/skills")).toBe(false);
    expect(citedPaths('skills in ".agent/skills", rules in `.claude/rules/`, and plain words')).toEqual([
      ".agent/skills",
      ".claude/rules",
    ]);
    // a model writes paths bare: a dot-folder path is followed too, prose with a slash is not
    expect(citedPaths("skills go in the .agent/skills/ directory; pass/fail and/or tmp/clones are prose")).toEqual([
      ".agent/skills",
    ]);
    const edit = JSON.stringify({ input: { old_string: "in `.agent/skills`", new_string: "in `.agents/skills`" } });
    expect(currentText(edit)).not.toContain(".agent/skills");
    expect(currentText(JSON.stringify({ output: "-old `.agent/skills`\n+new `.agents/skills`" }))).not.toContain(
      ".agent/skills",
    );
  });
});

describe("identifiers a later session renamed", () => {
  const RULE_FN = "Always call `summarise` before writing the checkpoint metadata.";
  const renameEdit = (from: string, to: string): Ev[] => [
    { type: "user_message", text: "use the US spelling" },
    {
      type: "code_change",
      tool: "Edit",
      input: {
        file_path: "cmd/cli/summary.go",
        old_string: `func ${from}(cp Checkpoint) string {`,
        new_string: `func ${to}(cp Checkpoint) string {`,
      },
      paths: ["cmd/cli/summary.go"],
    },
    { type: "assistant_response", text: `Renamed \`${from}\` to \`${to}\`.` },
  ];
  const callSite: Ev[] = [
    { type: "user_message", text: "use the new summary" },
    {
      type: "code_change",
      tool: "Edit",
      input: {
        file_path: "cmd/cli/write.go",
        old_string: "meta := summarise(cp)",
        new_string: "meta := describe(cp)",
      },
      paths: ["cmd/cli/write.go"],
    },
    { type: "assistant_response", text: "Done." },
  ];
  const fnRule = (s: Sandbox) =>
    currentItems(s.db, s.root, ["user_style"]).find((i) => i.content.includes("before writing the checkpoint"));

  test("the declaration renamed by a later edit: the memory follows the new name, the old one kept", async () => {
    const s = await run(said(RULE_FN), renameEdit("summarise", "summarize"));
    const item = fnRule(s)!;
    expect(item.content).toContain("`summarize`");
    expect(item.content).not.toContain("summarise");
    expect(predecessors(s.db, item.id).map((p) => p.content)).toEqual([expect.stringContaining("`summarise`")]);
  });

  test("a call site changed to call something else is no rename; the old name still used after the edit keeps it", async () => {
    const s = await run(said(RULE_FN), callSite);
    expect(fnRule(s)!.content).toContain("`summarise`");
    s.cleanup();
    // The same session still calls the old name after its edit (another declaration kept it): no rename.
    const later = await run(said(RULE_FN), [
      ...renameEdit("summarise", "summarize"),
      { type: "assistant_response", text: "cmd/cli/write.go still calls `summarise(cp)` from the old package." },
    ]);
    expect(fnRule(later)!.content).toContain("`summarise`");
  });

  test("what counts as a rename of a declaration", () => {
    expect(
      renamedByEdit("summarise", "func summarise(cp Checkpoint) string {", "func summarize(cp Checkpoint) string {"),
    ).toBe("summarize");
    expect(renamedByEdit("summarise", "meta := summarise(cp)", "meta := describe(cp)")).toBeNull();
    expect(renamedByEdit("summarise", "x := summarise(cp)", "x := summarize(cp)")).toBe("summarize"); // one letter apart
    expect(renamedByEdit("summarise", "func summarise() {}", "func summarise() { return }")).toBeNull();
  });
});

const HAVE = existsSync(TRANSCRIPTS);
if (!HAVE) console.log("(follow-renames on the shared transcripts skipped: ../shared is not beside the repo)");
describe.skipIf(!HAVE)("on the real sessions (needs ../shared beside the repo)", () => {
  test("3d/da33aeff7e's '.agent/skills' rule follows the '.agents/skills' the later sessions use", async () => {
    const dir = join("claude-code", "packmindhub-context-evaluator");
    sb = sandbox();
    const root = sb.root;
    // The rule (11:15), the afternoon that renamed the folder (4c), and the later sessions that name it.
    const files = [
      "3d/da33aeff7e/0",
      "4c/be888ae82f/0",
      "5d/74e4f052ad/0",
      "8d/35bc01203b/0",
      "4a/ff29dfc8d7/2",
      "17/252607bde7/2",
    ];
    for (const f of files) {
      const evs = transcriptEvents(join(dir, f, "full.jsonl"), "claude", root);
      await processEvents(request(root, evs), sb.deps({ now: () => Date.parse(evs.at(-1)!.timestamp) + 86_400_000 }));
    }
    expect(rule(sb)?.content).toBe('For AGENTS.md target, the skills should be in ".agents/skills" directory.');
    // Nothing else was renamed.
    const renamed = currentItems(sb.db, root).filter((i) => i.tags.includes("renamed-later"));
    expect(renamed.map((i) => i.key)).toEqual([rule(sb)!.key]);
  });
});
