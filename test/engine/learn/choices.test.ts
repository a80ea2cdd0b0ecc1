import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ClaudeCodeNormalizer } from "../../../src/daemon/normalize/claude-code.ts";
import { toEventRow } from "../../../src/daemon/ingest.ts";
import { toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { decisions, statedDesignChoice } from "../../../src/engine/learn/extract/decisions.ts";
import { extractOffline, ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { optionList, planChoice } from "../../../src/engine/learn/extract/offered-options.ts";
import {
  answerDecision,
  isLastingQuestion,
  parseAnswers,
  questionTopic,
  userAnswers,
  type AskedQuestion,
} from "../../../src/engine/learn/extract/user-answers.ts";
import type { NormalizedEvent } from "../../../src/shared/event.ts";
import { transcriptEvents, TRANSCRIPTS, USER } from "./helpers.ts";

/**
 * Decisions the user made (issue 14): their answers to AskUserQuestion, a behaviour they state with
 * its condition or reason, and the option an approved plan went with. Real cases are quoted from the
 * context-evaluator TRAIN sessions under ../shared; AskUserQuestion records are built in Claude Code's
 * own format and go through the capture normalizer, as the daemon would store them.
 */

const ROOT = "/work/repo";
const CC = "claude-code/packmindhub-context-evaluator";

let seq = 0;
/** Claude Code records → stored events, through the real normalizer and ingest row builder. */
function claudeEvents(records: Array<Record<string, unknown>>): ReturnType<typeof toEventRow>[] {
  const norm = new ClaudeCodeNormalizer({ filePath: "/tmp/s.jsonl" });
  const out: NormalizedEvent[] = [];
  records.forEach((r, i) => {
    out.push(
      ...norm.push(
        { cwd: ROOT, sessionId: "s1", timestamp: new Date(Date.UTC(2026, 2, 2, 9, 0, i)).toISOString(), ...r },
        i,
      ),
    );
  });
  out.push(...norm.flush());
  return out.map((e) => toEventRow(e, ROOT, USER));
}

function ask(questions: AskedQuestion[], answers: Record<string, string> | null): Array<Record<string, unknown>> {
  const id = `toolu_${++seq}`;
  const recs: Array<Record<string, unknown>> = [
    { type: "user", uuid: `u${seq}a`, message: { role: "user", content: "Improve the chat view." } },
    {
      type: "assistant",
      uuid: `a${seq}`,
      message: {
        id: `msg_${seq}`,
        role: "assistant",
        content: [{ type: "tool_use", id, name: "AskUserQuestion", input: { questions } }],
      },
    },
  ];
  if (answers) {
    const said = Object.entries(answers)
      .map(([q, a]) => `"${q}"="${a}"`)
      .join(", ");
    recs.push({
      type: "user",
      uuid: `u${seq}b`,
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: id,
            content: `User has answered your questions: ${said}. You can now continue with the user's answers in mind.`,
          },
        ],
      },
      toolUseResult: { questions, answers },
    });
  }
  return recs;
}

const SCROLLING: AskedQuestion = {
  question: "Which scrolling approach should the chat view use?",
  header: "Approach",
  multiSelect: false,
  options: [
    {
      label: "Virtual list (recommended)",
      description: "Render only visible rows with react-virtuoso. Scales to long chats.",
    },
    { label: "Plain overflow", description: "A scrolling div with scrollIntoView on new messages." },
  ],
};
const NEW_MESSAGES: AskedQuestion = {
  question: "What scroll behavior do you prefer when a new message arrives?",
  header: "Auto-scroll",
  multiSelect: false,
  options: [
    { label: "Follow if near bottom", description: "Only scroll when the reader is within 200px of the end." },
    { label: "Always follow", description: "Always jump to the newest message." },
  ],
};
const PLACEMENT: AskedQuestion = {
  question: "Where exactly should the send button be positioned?",
  header: "Button",
  multiSelect: false,
  options: [
    { label: "Left of the input", description: "Before the text field" },
    { label: "Right of the input", description: "After the text field" },
  ],
};
const SCOPE: AskedQuestion = {
  question: "Should we also update the other message components?",
  header: "Scope",
  multiSelect: true,
  options: [
    { label: "Just scrolling", description: "Only the scroll behavior" },
    { label: "Message components too", description: "Replace the message rendering as well" },
  ],
};

describe("AskUserQuestion answers", () => {
  test("a picked option about an approach is a decision that stands alone, with what it was chosen over", () => {
    const evs = claudeEvents(ask([SCROLLING], { [SCROLLING.question]: "Virtual list (recommended)" }));
    const got = decisions(ruleInput("ep1", ROOT, evs));
    expect(got.map((c) => c.content)).toEqual([
      "Scrolling approach: Virtual list (render only visible rows with react-virtuoso), chosen over Plain overflow.",
    ]);
    expect(got[0]!.tags).toEqual(["decision"]);
    expect(got[0]!.source_event_ids).toHaveLength(2); // the question and its answer
  });

  test("a free-text answer keeps the user's words; placement and scope questions give nothing", () => {
    const own = "Drop the custom scroll code and use the library's sticky-bottom behaviour";
    const evs = claudeEvents(
      ask([SCROLLING, NEW_MESSAGES, PLACEMENT, SCOPE], {
        [SCROLLING.question]: "Plain overflow",
        [NEW_MESSAGES.question]: own,
        [PLACEMENT.question]: "Right of the input",
        [SCOPE.question]: "Just scrolling",
      }),
    );
    const got = decisions(ruleInput("ep2", ROOT, evs)).map((c) => c.content);
    expect(got).toEqual([
      "Scrolling approach: Plain overflow (a scrolling div with scrollIntoView on new messages), chosen over Virtual list.",
      `Scroll behavior when a new message arrives: ${own}.`,
    ]);
  });

  test("an unanswered or refused question, and a yes/no permission, give nothing", () => {
    expect(decisions(ruleInput("ep3", ROOT, claudeEvents(ask([SCROLLING], null))))).toEqual([]);
    const permission: AskedQuestion = {
      question: "The hook fails on missing generated files. Which approach should I take for this commit?",
      header: "Commit hook",
      multiSelect: false,
      options: [
        { label: "Yes, use --no-verify", description: "Skip the hook" },
        { label: "No, don't commit", description: "Leave it uncommitted" },
      ],
    };
    expect(isLastingQuestion(permission)).toBe(false);
    const evs = claudeEvents(ask([permission], { [permission.question]: "Yes, use --no-verify" }));
    expect(decisions(ruleInput("ep4", ROOT, evs))).toEqual([]);
    const handedBack = claudeEvents(
      ask([NEW_MESSAGES], { [NEW_MESSAGES.question]: "You decide, whatever is simplest" }),
    );
    expect(decisions(ruleInput("ep5", ROOT, handedBack))).toEqual([]);
  });

  test("answers are found by their question, so a quote or comma inside an answer does not cut it", () => {
    const q2: AskedQuestion = { ...NEW_MESSAGES, question: 'Which "follow" behavior should we use?' };
    const out = `User has answered your questions: "${SCROLLING.question}"="Plain overflow, "really" simple", "${q2.question}"="Always follow". You can now continue with the user's answers in mind.`;
    const got = parseAnswers(out, [SCROLLING, q2]);
    expect(got.get(SCROLLING)).toBe('Plain overflow, "really" simple');
    expect(got.get(q2)).toBe("Always follow");
    // an answer the capture cut in the middle is not kept
    const cut = `User has answered your questions: "${SCROLLING.question}"="Plain overflow …[truncated 812 chars]… end". You can now continue with the user's answers in mind.`;
    expect(parseAnswers(cut, [SCROLLING]).size).toBe(0);
  });

  test("a multi-select answer resolves to every option it names", () => {
    const conventions: AskedQuestion = {
      question: "Which naming conventions should new components follow?",
      header: "Naming",
      multiSelect: true,
      options: [
        { label: "PascalCase files", description: "ChatView.tsx, not chat-view.tsx" },
        { label: "Named exports", description: "No default exports" },
        { label: "Index barrels", description: "Re-export from index.ts" },
      ],
    };
    const evs = claudeEvents(ask([conventions], { [conventions.question]: "PascalCase files, Named exports" }));
    const [a] = userAnswers(ruleInput("ep6", ROOT, evs).events);
    expect(a!.picked.map((o) => o.label)).toEqual(["PascalCase files", "Named exports"]);
    expect(answerDecision(a!)!.content).toBe(
      "Naming conventions: PascalCase files (ChatView.tsx, not chat-view.tsx); Named exports (no default exports).",
    );
  });

  test("the topic of a question heads the stored line", () => {
    expect(questionTopic(SCROLLING)).toBe("Scrolling approach");
    expect(questionTopic(NEW_MESSAGES)).toBe("Scroll behavior when a new message arrives");
    expect(questionTopic({ ...SCROLLING, question: "How should errors reach the UI?", header: "Error display" })).toBe(
      "Error display",
    );
  });

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "real (context-evaluator 20/…): the assistant's --no-verify question, never answered, is no decision",
    () => {
      const evs = transcriptEvents(`${CC}/20/b41b43efc7/0/full.jsonl`, "claude", ROOT);
      expect(evs.some((e) => toEngineEvent(e).tool === "AskUserQuestion")).toBe(true);
      expect(decisions(ruleInput("ep_20b", ROOT, evs))).toEqual([]);
    },
  );
});

describe("a behaviour stated with its condition or reason", () => {
  test("real (context-evaluator 22c): a mode condition and a reason make a cloud-mode decision", () => {
    const s =
      "In cloud mode we should not display in the remediation module the possibility to choose the running cli agent as we handle that.";
    expect(statedDesignChoice(s)).toBe(s);
  });

  test("synthetic: a condition or a reason, each alone, is enough", () => {
    expect(statedDesignChoice("When running in CI, we must never prompt for input.")).not.toBeNull();
    expect(
      statedDesignChoice("The export endpoint should stream rows because reports can exceed the memory limit."),
    ).not.toBeNull();
  });

  test("real requests, questions, pasted text and 'for now' choices stay out", () => {
    for (const s of [
      // context-evaluator 1a: "this" points at pasted material
      'this should be hidden in "cloud" mode :',
      // 4a/2: a label change for the task, no condition or reason
      'We should not display "AGENTS.md" for GitHub Copilot instructions, but instead "Copilot instructions"',
      // 83: a task request
      'now we should highlight the "Remediate" feature in addition to existing features',
      // 4c: a choice for the moment
      "Let's only build the main SKILL.md to avoid too many other references, assets and scripts for now",
      // 4c: "also update" is a task
      "I think we must also update the skill creation prompt to simplify it because it is long.",
      // synthetic
      "Should we hide the selector in cloud mode because the service picks it?",
      "In production we should fix this today because it breaks checkout.",
      "You should run the tests because the hook is slow.",
    ])
      expect(statedDesignChoice(s)).toBeNull();
  });

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "real (context-evaluator 22c): stored once, through the whole extractor",
    () => {
      const evs = transcriptEvents(`${CC}/22/c6a4f4faf5/0/full.jsonl`, "claude", ROOT);
      const got = extractOffline(ruleInput("ep_22c", ROOT, evs)).filter((c) => c.tags.includes("decision"));
      expect(got.map((c) => c.content)).toEqual([
        "In cloud mode we should not display in the remediation module the possibility to choose the running cli agent as we handle that.",
      ]);
    },
  );

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "real (context-evaluator 1a, 4a/2, 83, 5d/1): UI change requests give no decision",
    () => {
      for (const p of ["1a/551a9675cf/0", "4a/ff29dfc8d7/2", "83/494dd20dc4/0", "5d/74e4f052ad/1", "ba/28f44c88f4/1"]) {
        const evs = transcriptEvents(`${CC}/${p}/full.jsonl`, "claude", ROOT);
        expect(decisions(ruleInput(`ep_${p}`, ROOT, evs))).toEqual([]);
      }
    },
  );
});

describe("the option an approved plan went with", () => {
  const plan = (a: string, b: string, extra = "") =>
    `Implement the following plan:\n\n# Fix: cache invalidation\n\n## Proposed Fix\n\n${a}\n- Drop the cache entry on every write to the orders table, in the repository layer\n- This ensures readers never see a stale order\n\n${b}\n- Keep entries for 30 seconds and accept stale reads\n${extra}\n## Verification\n1. Run the tests\n`;

  test("bold and heading forms are read, with the recommended one picked", () => {
    for (const [a, b] of [
      ["**Option A (Recommended): Invalidate on write**", "**Option B: Time-based expiry**"],
      ["### Option A: Invalidate on write (Recommended)", "### Option B: Time-based expiry"],
      ["- **Option A** (recommended) — Invalidate on write", "- **Option B** — Time-based expiry"],
    ]) {
      const choice = planChoice(plan(a!, b!));
      expect(choice?.chosen.title).toBe("Invalidate on write");
      expect(choice?.others.map((o) => o.title)).toEqual(["Time-based expiry"]);
    }
  });

  test("the stored line says what was chosen, why, and the alternative it was chosen over", () => {
    const evs = claudeEvents([
      {
        type: "user",
        uuid: "p1",
        message: {
          role: "user",
          content: plan("**Option A (Recommended): Invalidate on write**", "**Option B: Time-based expiry**"),
        },
      },
    ]);
    expect(decisions(ruleInput("ep_plan", ROOT, evs)).map((c) => c.content)).toEqual([
      "Drop the cache entry on every write to the orders table, in the repository layer. This ensures readers never see a stale order. Rejected alternative: time-based expiry.",
    ]);
  });

  test("a plan with no pick, or with two, gives nothing; a plan without options gives nothing", () => {
    expect(planChoice(plan("**Option A: Invalidate on write**", "**Option B: Time-based expiry**"))).toBeNull();
    expect(
      planChoice(
        plan("**Option A (Recommended): Invalidate on write**", "**Option B (Recommended): Time-based expiry**"),
      ),
    ).toBeNull();
    expect(
      planChoice("Implement the following plan:\n\n# Plan\n\n1. Do this first step\n2. Then do the second step\n"),
    ).toBeNull();
  });

  test("numbered steps elsewhere in a plan are not options", () => {
    const opts = optionList(plan("**Option A (Recommended): Invalidate on write**", "**Option B: Time-based expiry**"));
    expect(opts.map((o) => o.label)).toEqual(["A", "B"]);
  });

  test("a user's 'A' after a message offering bold options resolves to it", () => {
    const evs = claudeEvents([
      { type: "user", uuid: "q1", message: { role: "user", content: "How should stale orders be handled?" } },
      {
        type: "assistant",
        uuid: "q2",
        message: {
          id: "msg_q2",
          role: "assistant",
          content: [
            {
              type: "text",
              text: "Two ways:\n\n**Option A (Recommended): Invalidate the cache entry on every write**\n\n**Option B: Expire entries after 30 seconds**",
            },
          ],
        },
      },
      { type: "user", uuid: "q3", message: { role: "user", content: "go with B since writes are rare" } },
    ]);
    expect(decisions(ruleInput("ep_pick", ROOT, evs)).map((c) => c.content)).toEqual([
      "Chosen: Expire entries after 30 seconds (writes are rare).",
    ]);
  });

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "real (context-evaluator be): the approved plan's recommended Option A, with Option B rejected",
    () => {
      const evs = transcriptEvents(`${CC}/be/0878c3d75d/0/full.jsonl`, "claude", ROOT);
      expect(decisions(ruleInput("ep_be", ROOT, evs)).map((c) => c.content)).toEqual([
        "In `git-cloner.ts`, when `commitSha` is provided, treat checkout failure as a hard error instead of silently falling back to HEAD. This ensures the user gets a clear error rather than a misleading comparison. Rejected alternative: propagate a warning flag.",
      ]);
    },
  );
});
