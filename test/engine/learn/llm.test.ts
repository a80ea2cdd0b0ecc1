import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createProvider, type LlmProvider } from "../../../src/engine/llm/provider.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { scheduleSummaries } from "../../../src/engine/learn/summary-scheduler.ts";
import { StateDbLedger } from "../../../src/engine/llm/usage.ts";
import { usageOnDay } from "../../../src/sql/llm-usage.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { currentItems, getMemoryItem } from "../../../src/sql/memory-items.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { HARD_CAP_TOKENS } from "../../../src/engine/learn/extract/distil.ts";
import { estimateTokens } from "../../../src/shared/tokens.ts";
import { fixtureEvents, request, sandbox, type Sandbox } from "./helpers.ts";

/**
 * The LLM path through the real @anthropic-ai/sdk against a local Bun.serve that speaks the Messages
 * API: scripted answers (valid JSON, invalid JSON, HTTP 500), every request body recorded so the test
 * can check what left the machine.
 */
type Reply = { status: 200; text: string } | { status: 500 } | { status: 400 };

const received: Array<{ system: string; prompt: string; raw: string }> = [];
let extractQueue: Reply[] = [];
let decideQueue: Reply[] = [];
let summaryQueue: Reply[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "POST" && url.pathname === "/v1/chat/completions") {
        const raw = await req.text();
        const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }> };
        received.push({ system: body.messages[0]!.content, prompt: body.messages[1]!.content, raw });
        const reply = extractQueue.shift() ?? { status: 500 };
        if (reply.status !== 200) return new Response("boom", { status: reply.status });
        return Response.json({
          id: "c1",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: reply.text } }],
          usage: { prompt_tokens: 90, completion_tokens: 60 },
        });
      }
      if (req.method !== "POST" || url.pathname !== "/v1/messages") return new Response("not found", { status: 404 });
      const raw = await req.text();
      const body = JSON.parse(raw) as { system: string; messages: Array<{ content: string }>; model: string };
      received.push({ system: body.system, prompt: body.messages[0]!.content, raw });
      const queue = body.system.includes("You maintain a developer's long-term memory")
        ? decideQueue
        : body.system.startsWith("Summarize one episode")
          ? summaryQueue
          : extractQueue;
      const reply = queue.shift() ?? { status: 500 };
      if (reply.status === 500)
        return Response.json(
          { type: "error", error: { type: "api_error", message: "scripted failure" } },
          { status: 500 },
        );
      if (reply.status === 400)
        return Response.json(
          { type: "error", error: { type: "invalid_request_error", message: "scripted refusal" } },
          { status: 400 },
        );
      return Response.json({
        id: `msg_${received.length}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: reply.text }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 120, output_tokens: 80 },
      });
    },
  });
});
afterAll(() => server.stop(true));

let sb: Sandbox | null = null;
afterEach(() => {
  sb?.cleanup();
  sb = null;
  received.length = 0;
  extractQueue = [];
  decideQueue = [];
  summaryQueue = [];
});

const KEY = `sk-ant-api03-${"k".repeat(40)}`;
const SECRET = `ghp_${"A1b2C3d4E5".repeat(4)}`;

async function provider(): Promise<LlmProvider> {
  const p = await createProvider(
    {
      "llm.provider": "anthropic",
      "llm.model": "claude-haiku-4-5",
      "llm.base_url": `http://127.0.0.1:${server.port}`,
      "llm.api_key_env": "SQRL_TEST_ANTHROPIC_KEY",
      "llm.timeout_ms": 10_000,
    },
    { SQRL_TEST_ANTHROPIC_KEY: KEY },
  );
  if (!p) throw new Error("provider not created");
  return p;
}

/** The pitfall fixture plus a user message carrying a secret the engine must not send anywhere. */
function episodeWithSecret(root: string): EventDTO[] {
  const events = fixtureEvents("pitfall-fixed", root);
  const first = events[0]!;
  events[0] = {
    ...first,
    content_json: JSON.stringify({
      text: `the date formatting test is failing, please fix it. my token is ${SECRET} and password=hunter2hunter2`,
    }),
  };
  return events;
}

const VALID = JSON.stringify({
  summary:
    "Goal: fix the failing date formatting test. The test failed because formatDate used the local timezone; switched src/format.ts to getUTC* accessors. `bun test test/format.test.ts` failed, then passed after the change. Outcome: fixed, tests green.",
  items: [
    {
      type: "pitfall",
      key: "pitfall:test:format_date_timezone",
      content:
        "formatDate used the local timezone, so midnight UTC rendered as the previous day; use getUTC* accessors in src/format.ts.",
      tags: ["dates", "timezone"],
      importance: 0.8,
      confidence: 0.9,
      scope: "project",
      file_paths: ["src/format.ts"],
      evidence: [2, 3, 6, 8],
    },
    {
      type: "project_fact",
      key: "test_runner",
      content: "Tests run with bun test.",
      tags: ["testing"],
      importance: 0.5,
      confidence: 0.4,
      scope: "project",
      file_paths: [],
      evidence: [2],
    },
  ],
});

describe("LLM extraction through @anthropic-ai/sdk against a local Messages API", () => {
  test("valid JSON: items with evidence mapped to event ids, the LLM summary, tokens recorded", async () => {
    sb = sandbox();
    extractQueue = [{ status: 200, text: VALID }];
    const events = episodeWithSecret(sb.root);
    await processEvents(request(sb.root, events), sb.deps({ llm: await provider(), summaryLimit: 0 }));
    expect(received.length).toBe(1);
    const pit = currentItems(sb.db, sb.root, ["pitfall"]);
    expect(pit.map((i) => i.key)).toEqual(["pitfall:test:format_date_timezone"]);
    expect(pit[0]!.extractor).toBe("llm");
    expect(pit[0]!.source_event_ids).toEqual([events[1]!.id, events[2]!.id, events[5]!.id, events[7]!.id]);
    expect(currentItems(sb.db, sb.root).some((i) => i.key === "test_runner")).toBe(false); // confidence 0.4: not proven
    const ep = listEpisodes(sb.db, sb.root)[0]!;
    expect(ep.extractor).toBe("llm");
    expect(ep.summary_source).toBe("llm");
    expect(ep.summary).toStartWith("Goal: fix the failing date formatting test.");
    const st = sb.stateDb();
    const usage = usageOnDay(st, "2026-06-01");
    st.close();
    expect(usage).toEqual([
      {
        day: "2026-06-01",
        provider: "anthropic",
        model: "claude-haiku-4-5",
        calls: 1,
        input_tokens: 120,
        output_tokens: 80,
        failures: 0,
      },
    ]);
  });

  test("the prompt carries the guidance's digest; a model item that restates the guidance is not stored", async () => {
    sb = sandbox();
    writeFileSync(
      join(sb.root, "CLAUDE.md"),
      "# Project\n\n## Dates\n\nformatDate must use the getUTC* accessors in src/format.ts: the local timezone renders midnight UTC as the previous day.\n\n## Testing\n\nRun `bun test` before every commit.\n",
    );
    extractQueue = [{ status: 200, text: VALID }];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received[0]!.prompt).toContain(
      "Already in the repository's guidance (the agent reads these files; store nothing they say):\n- CLAUDE.md: Project; Dates; Testing",
    );
    expect(received[0]!.system).toContain("Keep the lesson, not the surface");
    // The model's timezone lesson is what CLAUDE.md's "Dates" section says: not stored again.
    expect(currentItems(sb.db, sb.root, ["pitfall"])).toEqual([]);
  });

  test("no secret reaches the provider: the prompt is redacted again before it leaves", async () => {
    sb = sandbox();
    extractQueue = [{ status: 200, text: VALID }];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.length).toBe(1);
    const body = received[0]!.raw;
    expect(body).not.toContain(SECRET);
    expect(body).not.toContain("hunter2hunter2");
    expect(body).not.toContain(KEY);
    expect(body).toContain("[REDACTED:github_token]");
    expect(body).toContain("the date formatting test is failing");
  });

  test("invalid JSON, then a retry that says why, then valid JSON", async () => {
    sb = sandbox();
    extractQueue = [
      { status: 200, text: "Sure! Here are the memories: pitfall about dates." },
      { status: 200, text: `\`\`\`json\n${VALID}\n\`\`\`` },
    ];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.length).toBe(2);
    expect(received[1]!.prompt).toContain("Your previous answer was rejected");
    expect(currentItems(sb.db, sb.root, ["pitfall"])[0]!.extractor).toBe("llm");
  });

  test("invalid JSON twice: the offline rules extract this episode", async () => {
    sb = sandbox();
    extractQueue = [
      { status: 200, text: '{"summary": 5}' },
      { status: 200, text: '{"items": "none"}' },
    ];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.length).toBe(2);
    const ep = listEpisodes(sb.db, sb.root)[0]!;
    expect(ep.extractor).toBe("offline");
    expect(currentItems(sb.db, sb.root, ["pitfall"])[0]!.content).toContain(
      "Cause: The test fails because formatDate uses the local timezone",
    );
  });

  test("HTTP 500: no retry storm; the episode waits for the model and the failure is counted", async () => {
    sb = sandbox();
    extractQueue = [{ status: 500 }];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.length).toBe(1);
    expect(listEpisodes(sb.db, sb.root)[0]!.extracted_at).toBeNull();
    expect(sb.db.query("SELECT reason FROM llm_waits").all()).toEqual([{ reason: "unavailable" }]);
    expect(currentItems(sb.db, sb.root).length).toBe(0);
    const st = sb.stateDb();
    expect(usageOnDay(st, "2026-06-01")[0]!.failures).toBe(1);
    st.close();
  });

  test("HTTP 400: the request itself was refused; the offline rules take over", async () => {
    sb = sandbox();
    extractQueue = [{ status: 400 }];
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.length).toBe(1);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("offline");
    expect(currentItems(sb.db, sb.root, ["pitfall"]).length).toBe(1);
    expect(sb.db.query("SELECT reason FROM llm_waits").all()).toEqual([]);
  });

  test("daily cap reached: no call is made, offline extraction instead", async () => {
    sb = sandbox();
    const now = () => Date.parse("2026-06-01T00:00:00Z");
    extractQueue = [{ status: 200, text: VALID }];
    const ledger = new StateDbLedger(500, now, sb.stateDb);
    ledger.record("anthropic", "claude-haiku-4-5", 450, 40, false); // 490 of 500 spent today
    await processEvents(
      request(sb.root, episodeWithSecret(sb.root)),
      sb.deps({ llm: await provider(), ledger, summaryLimit: 0 }),
    );
    expect(received.length).toBe(0);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("offline");
    expect(currentItems(sb.db, sb.root, ["pitfall"]).length).toBe(1);
  });

  test("update decisions by the LLM: a contradiction it flags supersedes the stored item", async () => {
    sb = sandbox();
    const llm = await provider();
    // Episode 1 offline: the habits fixture stores package_manager = pnpm.
    await processEvents(request(sb.root, fixtureEvents("habits", sb.root)), sb.deps({ summaryLimit: 0 }));
    const old = currentItems(sb.db, sb.root).find((i) => i.key === "package_manager")!;
    extractQueue = [
      {
        status: 200,
        text: JSON.stringify({
          summary:
            "Goal: switch the repo to bun. Replaced pnpm with bun in scripts and CI; `bun test` passed. Outcome: the project now installs and tests with bun.",
          items: [
            {
              type: "user_style",
              key: "package_manager",
              content: "Uses bun as the package manager (bun install, bun test).",
              tags: ["tooling"],
              importance: 0.7,
              confidence: 0.9,
              scope: "project",
              file_paths: [],
              evidence: [1],
            },
          ],
        }),
      },
    ];
    decideQueue = [
      {
        status: 200,
        text: JSON.stringify({ decisions: [{ candidate: 0, verb: "DELETE_AND_ADD", target_id: old.id }] }),
      },
    ];
    const later = fixtureEvents("recipe-migrate", sb.root, { baseMs: Date.parse("2026-03-09T10:00:00Z") });
    await processEvents(request(sb.root, later), sb.deps({ llm, summaryLimit: 0 }));
    expect(received.some((r) => r.system.includes("long-term memory") && r.prompt.includes(old.id))).toBe(true);
    const cur = currentItems(sb.db, sb.root).find((i) => i.key === "package_manager")!;
    expect(cur.content).toBe("Uses bun as the package manager (bun install, bun test).");
    expect(cur.decision).toBe("DELETE_AND_ADD");
    expect(getMemoryItem(sb.db, old.id)!.superseded_by).toBe(cur.id);
  });
});

describe("the LLM's memories pass the rules' gates and distilling", () => {
  test("a routine pitfall waits for recurrence; text is capped, narration dropped, this machine's paths made portable", async () => {
    sb = sandbox();
    const long = `Let me note this for later. The settings page reads ${"its defaults from the shared config module and merges them with the user's saved choices. ".repeat(6)}See ${sb.root}/src/settings.tsx.`;
    extractQueue = [
      {
        status: 200,
        text: JSON.stringify({
          summary:
            "Goal: add the settings page. Added src/settings.tsx; tests and lint passed. Outcome: done, checks green, nothing left open.",
          items: [
            {
              type: "pitfall",
              key: "pitfall:lint:unused_import",
              content: "ESLint flagged an unused import in settings.tsx; removed it.",
              tags: [],
              importance: 0.6,
              confidence: 0.9,
              scope: "project",
              file_paths: [],
              evidence: [2],
            },
            {
              type: "project_fact",
              key: "settings_page",
              content: long,
              tags: [],
              importance: 0.6,
              confidence: 0.9,
              scope: "project",
              file_paths: [`${sb.root}/src/settings.tsx`],
              evidence: [1],
            },
          ],
        }),
      },
    ];
    await processEvents(
      request(sb.root, fixtureEvents("habits", sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    const items = currentItems(sb.db, sb.root);
    // Nothing in this episode failed and was fixed the hard way: the LLM's pitfall is an observation, not a memory.
    expect(items.some((i) => i.type === "pitfall")).toBe(false);
    expect(
      (
        sb.db
          .query("SELECT COUNT(*) AS n FROM observations WHERE signature = 'llm:pitfall:lint:unused_import'")
          .get() as { n: number }
      ).n,
    ).toBe(1);
    const fact = items.find((i) => i.key === "settings_page")!;
    expect(fact.content.startsWith("The settings page reads")).toBe(true);
    expect(fact.content).not.toContain(sb.root);
    expect(estimateTokens(fact.content)).toBeLessThanOrEqual(HARD_CAP_TOKENS);
    expect(fact.file_paths).toEqual(["src/settings.tsx"]);
  });
});

/** A model's pitfall as the extraction answer writes it. */
const pitfall = (key: string, content: string, evidence: number[]) => ({
  type: "pitfall",
  key,
  content,
  tags: [],
  importance: 0.6,
  confidence: 0.8,
  scope: "project",
  file_paths: [],
  evidence,
});

describe("a model's pitfall with its proof in the episode", () => {
  test("one citing a refused call is stored at once; one citing only green runs waits for a second episode", async () => {
    sb = sandbox();
    extractQueue = [
      {
        status: 200,
        text: JSON.stringify({
          summary:
            "Goal: add the settings page. Added src/settings.tsx; tests and lint passed; the user refused `npm install left-pad`. Outcome: done.",
          items: [
            pitfall(
              "pitfall:deps:no-npm-install",
              "This repository uses pnpm: the user refuses `npm install`, which would write a second lockfile; add packages with `pnpm add`.",
              [9],
            ),
            pitfall("pitfall:lint:prettier-after-tests", "Prettier reformats src/ after the tests pass.", [5, 6]),
          ],
        }),
      },
    ];
    await processEvents(
      request(sb.root, fixtureEvents("habits", sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    // the evidence numbers above are the rendered events': [9] is the refused call
    expect(received.at(-1)!.prompt).toMatch(/\[9\] [^\n]*npm install left-pad[^\n]*→ rejected/);
    const keys = currentItems(sb.db, sb.root, ["pitfall"]).map((i) => i.key);
    expect(keys).toEqual(["pitfall:deps:no-npm-install"]);
    const held = sb.db.query("SELECT signature FROM observations WHERE signature LIKE 'llm:%'").all() as Array<{
      signature: string;
    }>;
    expect(held.map((h) => h.signature)).toEqual(["llm:pitfall:lint:prettier-after-tests"]);
  });
});

describe("a model's pitfall proven by the user stepping in", () => {
  test("one citing the user's later words stands; one citing only the opening request waits", async () => {
    sb = sandbox();
    extractQueue = [
      {
        status: 200,
        text: JSON.stringify({
          summary:
            "Goal: apply the user's coding preferences. The user stated several standing rules about returns, comments, pnpm, commits and indentation. Outcome: noted.",
          items: [
            pitfall(
              "pitfall:style:comment-noise",
              "Comments on every line get removed in review here: the user asked to stop adding them; comment only what the code cannot say.",
              [3],
            ),
            pitfall("pitfall:style:nested-ifs", "Nested ifs are rewritten to early returns.", [1]),
          ],
        }),
      },
    ];
    await processEvents(
      request(sb.root, fixtureEvents("preferences", sb.root)),
      sb.deps({ llm: await provider(), summaryLimit: 0 }),
    );
    expect(received.at(-1)!.prompt).toMatch(/\[1\] user: Always use early returns/);
    expect(received.at(-1)!.prompt).toMatch(/\[3\] user: Please stop adding comments/);
    expect(currentItems(sb.db, sb.root, ["pitfall"]).map((i) => i.key)).toEqual(["pitfall:style:comment-noise"]);
  });
});

describe("OpenAI-compatible endpoint (Ollama, llama.cpp) through ofetch", () => {
  test("/chat/completions: the same extraction, redacted, tokens recorded", async () => {
    sb = sandbox();
    extractQueue = [{ status: 200, text: VALID }];
    const llm = await createProvider(
      {
        "llm.provider": "openai_compatible",
        "llm.model": "qwen2.5-coder",
        "llm.base_url": `http://127.0.0.1:${server.port}/v1`,
        "llm.api_key_env": "SQRL_TEST_NO_KEY",
        "llm.timeout_ms": 10_000,
      },
      {},
    );
    await processEvents(request(sb.root, episodeWithSecret(sb.root)), sb.deps({ llm, summaryLimit: 0 }));
    expect(received.length).toBe(1);
    expect(received[0]!.raw).not.toContain(SECRET);
    expect(currentItems(sb.db, sb.root, ["pitfall"])[0]!.key).toBe("pitfall:test:format_date_timezone");
    const st = sb.stateDb();
    expect(usageOnDay(st, "2026-06-01")[0]).toMatchObject({
      provider: "openai_compatible",
      model: "qwen2.5-coder",
      input_tokens: 90,
      output_tokens: 60,
    });
    st.close();
  });

  test("no provider without a key (anthropic) or a base URL (openai_compatible): offline", async () => {
    const base = {
      "llm.model": "m",
      "llm.base_url": "",
      "llm.api_key_env": "SQRL_TEST_ABSENT",
      "llm.timeout_ms": 1000,
    };
    expect(await createProvider({ ...base, "llm.provider": "anthropic" }, {})).toBeNull();
    expect(await createProvider({ ...base, "llm.provider": "openai_compatible" }, {})).toBeNull();
    expect(await createProvider({ ...base, "llm.provider": "none" }, { SQRL_TEST_ABSENT: "x" })).toBeNull();
  });
});

describe("proactive summary scheduler", () => {
  test("episodes without a summary get one, biggest savings first; raw events are untouched", async () => {
    sb = sandbox();
    const a = fixtureEvents("pitfall-abandoned", sb.root);
    const b = fixtureEvents("tail", sb.root, { baseMs: Date.parse("2026-03-05T09:00:00Z") });
    await processEvents(request(sb.root, [...a, ...b]), sb.deps({ summaryLimit: 0 }));
    sb.db.exec(
      `UPDATE episodes SET summary = ''; UPDATE episode_state SET summary_source = 'none'; DELETE FROM episode_fts;`,
    );
    const eventsBefore = JSON.stringify(sb.db.query("SELECT * FROM events ORDER BY id").all());
    const res = await scheduleSummaries({
      db: sb.db,
      projectId: sb.root,
      llm: null,
      ledger: null,
      contextWindowTokens: 16000,
      limit: 10,
    });
    const eps = listEpisodes(sb.db, sb.root);
    const big = eps.find((e) => e.session_id === "pitfall-abandoned")!;
    expect(res.offline).toEqual([big.id, eps.find((e) => e.id !== big.id)!.id]);
    for (const e of eps) {
      expect(e.summary.length).toBeGreaterThan(20);
      expect(e.summary_source).toBe("offline");
    }
    expect((sb.db.query("SELECT COUNT(*) AS n FROM episode_fts").get() as { n: number }).n).toBe(2);
    expect(JSON.stringify(sb.db.query("SELECT * FROM events ORDER BY id").all())).toBe(eventsBefore);
  });

  test("with an LLM, offline summaries are upgraded biggest first within the limit", async () => {
    sb = sandbox();
    const a = fixtureEvents("pitfall-abandoned", sb.root);
    const b = fixtureEvents("tail", sb.root, { baseMs: Date.parse("2026-03-05T09:00:00Z") });
    await processEvents(request(sb.root, [...a, ...b]), sb.deps({ summaryLimit: 0 }));
    summaryQueue = [
      {
        status: 200,
        text: JSON.stringify({
          summary:
            "Goal: make npm test green after the upgrade. fake-clock 3.0 renamed now() to currentTime(); src/cache.ts updated; tests pass.",
        }),
      },
    ];
    const llm = await provider();
    const res = await scheduleSummaries({
      db: sb.db,
      projectId: sb.root,
      llm,
      ledger: new StateDbLedger(100_000, Date.now, sb.stateDb),
      contextWindowTokens: 16000,
      limit: 1,
    });
    const big = listEpisodes(sb.db, sb.root).find((e) => e.session_id === "pitfall-abandoned")!;
    expect(res.llm).toEqual([big.id]);
    expect(big.summary_source).toBe("llm");
    expect(big.summary).toContain("fake-clock 3.0");
    expect(listEpisodes(sb.db, sb.root).find((e) => e.id !== big.id)!.summary_source).toBe("offline");
  });
});
