import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { precheckSignals } from "../../../src/engine/learn/extract/precheck.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { createProvider, type LlmProvider } from "../../../src/engine/llm/provider.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { eventRows, fixtureEvents, request, sandbox, type EventLine, type Sandbox } from "./helpers.ts";

/**
 * The pre-check before an LLM extraction call (issue 25): an episode with a user statement, a failure
 * or a decision goes to the model; one of reads and green runs alone goes to the offline rules without
 * a call. Checked on the hand-written fixtures and through the engine with the real openai_compatible
 * provider against a local Chat Completions server that counts the calls.
 */
let calls = 0;
let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      calls++;
      return Response.json({
        id: "c",
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: JSON.stringify({
                summary: "The assistant read the router and the tests; nothing changed.",
                items: [],
              }),
            },
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10 },
      });
    },
  });
});
afterAll(() => server.stop(true));
let sb: Sandbox | null = null;
afterEach(() => {
  sb?.cleanup();
  sb = null;
  calls = 0;
});

/** The rest of a task after a pause: the assistant reads and runs green checks; nobody says anything. */
const READS: EventLine[] = [
  { type: "assistant_response", text: "Picking up where we left off: reading the router." },
  {
    type: "tool_call",
    tool: "Read",
    tool_use_id: "r1",
    input: { file_path: "src/router.ts" },
    paths: ["src/router.ts"],
  },
  { type: "tool_result", tool: "Read", tool_use_id: "r1", output: "export const router = …" },
  { type: "tool_call", tool: "Grep", tool_use_id: "g1", input: { pattern: "route(" } },
  { type: "command_run", command: "git status", exit_code: 0, output: "nothing to commit, working tree clean" },
  { type: "assistant_response", text: "The router already handles it." },
];

async function provider(): Promise<LlmProvider> {
  const p = await createProvider(
    {
      "llm.provider": "openai_compatible",
      "llm.model": "stand-in",
      "llm.base_url": `http://127.0.0.1:${server.port}/v1`,
      "llm.api_key_env": "PRECHECK_TEST_NO_KEY",
      "llm.timeout_ms": 5_000,
    },
    {},
  );
  if (!p) throw new Error("provider not created");
  return p;
}

describe("pre-check before an LLM extraction call", () => {
  test("a user statement, a failure, a decision each make an episode worth the model; reads alone do not", () => {
    sb = sandbox();
    const sig = (events: ReturnType<typeof fixtureEvents>) => precheckSignals(events.map(toEngineEvent)).sort();
    expect(sig(fixtureEvents("pitfall-fixed", sb.root))).toEqual(["failure", "user"]);
    expect(sig(eventRows(sb.root, READS))).toEqual([]);
    const failing: EventLine = { type: "test_run", command: "bun test", exit_code: 1, output: "1 fail" };
    expect(sig(eventRows(sb.root, [...READS, failing]))).toEqual(["failure"]);
    const asked: EventLine = {
      type: "tool_call",
      tool: "AskUserQuestion",
      tool_use_id: "q1",
      input: { questions: [] },
    };
    expect(sig(eventRows(sb.root, [...READS, asked]))).toEqual(["decision"]);
    // The parent agent's prompt to a subagent is not the user's statement.
    const delegated: EventLine = { type: "user_message", text: "Search the repo for the router", sidechain: true };
    expect(sig(eventRows(sb.root, [delegated, ...READS]))).toEqual([]);
  });

  test("the engine sends a reads-only episode to the rules without a call; llm.precheck = false sends it", async () => {
    sb = sandbox();
    await processEvents(
      request(sb.root, eventRows(sb.root, READS, { session: "reads" })),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(calls).toBe(0);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("offline");
    sb.cleanup();

    sb = sandbox({ "llm.precheck": false });
    await processEvents(
      request(sb.root, eventRows(sb.root, READS, { session: "reads" })),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(calls).toBe(1);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("llm");
  });
});
