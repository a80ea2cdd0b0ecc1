import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createProvider, type LlmProvider } from "../../../src/engine/llm/provider.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { extractPendingOffline } from "../../../src/engine/learn/reprocess.ts";
import { retryAfterMs } from "../../../src/engine/llm/http-failure.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { llmWaitSummary, type LlmWait } from "../../../src/sql/llm-waits.ts";
import { currentItems } from "../../../src/sql/memory-items.ts";
import { usageOnDay } from "../../../src/sql/llm-usage.ts";
import { fixtureEvents, request, sandbox, type Sandbox } from "./helpers.ts";

/**
 * Episodes wait for the model (issue 25): the real openai_compatible provider against a local server
 * that speaks the Chat Completions API and is rate-limited (429 with Retry-After), down (connection
 * refused) or well. A passing failure leaves the episode unextracted in `llm_waits` (no offline items);
 * it is tried again when due, distilled by the model once it answers, never twice; after
 * llm.wait_max_hours, or by the user's choice, the offline rules take it.
 */
type Mode = "ok" | "limited" | "unavailable";
let mode: Mode = "ok";
let calls = 0;
let server: ReturnType<typeof Bun.serve>;
let downPort = 0;

const ANSWER = JSON.stringify({
  summary:
    "Goal: fix the failing date formatting test. formatDate used the local timezone; src/format.ts now uses getUTC* accessors and the test passes.",
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
  ],
});

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
      await req.text();
      calls++;
      if (mode === "limited")
        return Response.json(
          { error: { message: "usage limit reached", type: "rate_limit_error" } },
          { status: 429, headers: { "retry-after": "120" } },
        );
      if (mode === "unavailable") return new Response("overloaded", { status: 503 });
      return Response.json({
        id: "c1",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: ANSWER }, finish_reason: "stop" }],
        usage: { prompt_tokens: 90, completion_tokens: 60 },
      });
    },
  });
  // A port nothing listens on: a server started and stopped.
  const gone = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  downPort = gone.port!;
  gone.stop(true);
});
afterAll(() => server.stop(true));

let sb: Sandbox | null = null;
afterEach(() => {
  sb?.cleanup();
  sb = null;
  mode = "ok";
  calls = 0;
});

async function provider(port: number): Promise<LlmProvider> {
  const p = await createProvider(
    {
      "llm.provider": "openai_compatible",
      "llm.model": "stand-in",
      "llm.base_url": `http://127.0.0.1:${port}/v1`,
      "llm.api_key_env": "MODEL_WAIT_TEST_NO_KEY",
      "llm.timeout_ms": 5_000,
    },
    {},
  );
  if (!p) throw new Error("provider not created");
  return p;
}

const T0 = Date.parse("2026-06-01T00:00:00Z");
const at = (ms: number) => ({ now: () => ms, summaryLimit: 0 });

function waits(s: Sandbox): LlmWait[] {
  return s.db.query(`SELECT * FROM llm_waits ORDER BY episode_id`).all() as LlmWait[];
}

describe("episodes wait for the model", () => {
  test("rate-limited: the episode waits (no offline items), is retried after Retry-After and distilled once", async () => {
    sb = sandbox();
    const events = fixtureEvents("pitfall-fixed", sb.root);
    mode = "limited";
    await processEvents(request(sb.root, events), sb.deps({ llm: await provider(server.port!), ...at(T0) }));
    expect(calls).toBe(1);
    const ep = listEpisodes(sb.db, sb.root)[0]!;
    expect(ep.extracted_at).toBeNull();
    expect(currentItems(sb.db, sb.root)).toEqual([]); // the offline rules did not take it
    expect(waits(sb)).toMatchObject([
      {
        episode_id: ep.id,
        reason: "rate_limited",
        attempts: 1,
        first_failed_at: "2026-06-01T00:00:00.000Z",
        next_try_at: "2026-06-01T00:02:00.000Z", // the server's Retry-After: 120
      },
    ]);
    expect(llmWaitSummary(sb.db)).toMatchObject({ count: 1, by_reason: { rate_limited: 1 } });

    // Before the retry is due nothing calls the model; a fresh provider and deps (an engine restart) change nothing.
    mode = "ok";
    await processEvents(request(sb.root, []), sb.deps({ llm: await provider(server.port!), ...at(T0 + 60_000) }));
    expect(calls).toBe(1);
    expect(listEpisodes(sb.db, sb.root)[0]!.extracted_at).toBeNull();

    // Due, and the model is back: distilled by it.
    await processEvents(request(sb.root, []), sb.deps({ llm: await provider(server.port!), ...at(T0 + 121_000) }));
    expect(calls).toBe(2);
    const items = currentItems(sb.db, sb.root);
    expect(items.map((i) => [i.key, i.extractor])).toEqual([["pitfall:test:format_date_timezone", "llm"]]);
    expect(listEpisodes(sb.db, sb.root)[0]!).toMatchObject({ extractor: "llm", summary_source: "llm" });
    expect(waits(sb)).toEqual([]);

    // The same events again, later: nothing is extracted twice.
    await processEvents(request(sb.root, events), sb.deps({ llm: await provider(server.port!), ...at(T0 + 600_000) }));
    expect(calls).toBe(2);
    expect(currentItems(sb.db, sb.root).map((i) => i.id)).toEqual(items.map((i) => i.id));
  });

  test("down: the run's other episodes wait without a call; backoff doubles; after the bound the rules take them", async () => {
    sb = sandbox({ "llm.wait_retry_seconds": 60, "llm.wait_max_hours": 24 });
    const a = fixtureEvents("pitfall-fixed", sb.root);
    const b = fixtureEvents("tail", sb.root, { baseMs: Date.parse("2026-03-05T09:00:00Z") });
    const down = await provider(downPort);
    await processEvents(request(sb.root, [...a, ...b]), sb.deps({ llm: down, ...at(T0) }));
    const w1 = waits(sb);
    expect(w1.length).toBe(2);
    expect(w1.every((w) => w.reason === "unavailable" && w.next_try_at === "2026-06-01T00:01:00.000Z")).toBe(true);
    const st = sb.stateDb();
    expect(usageOnDay(st, "2026-06-01")[0]!.failures).toBe(1); // one call for the run, not one per episode
    st.close();
    expect(listEpisodes(sb.db, sb.root).every((e) => e.extracted_at === null)).toBe(true);

    // Still down at the retry: the wait doubles.
    await processEvents(request(sb.root, []), sb.deps({ llm: down, ...at(T0 + 61_000) }));
    expect(waits(sb).map((w) => [w.attempts, w.next_try_at])).toEqual([
      [2, "2026-06-01T00:03:01.000Z"],
      [2, "2026-06-01T00:03:01.000Z"],
    ]);

    // A day later the model is still away: the offline rules take both episodes, once.
    await processEvents(request(sb.root, []), sb.deps({ llm: down, ...at(T0 + 24 * 3_600_000 + 1) }));
    expect(waits(sb)).toEqual([]);
    const eps = listEpisodes(sb.db, sb.root);
    expect(eps.map((e) => e.extractor)).toEqual(["offline", "offline"]);
    const st2 = sb.stateDb();
    expect(usageOnDay(st2, "2026-06-01")[0]!.failures).toBe(2);
    expect(usageOnDay(st2, "2026-06-02")).toEqual([]); // no call once the bound has passed
    st2.close();
  });

  test("the user's choice: sqrl reprocess --offline-pending takes the waiting episodes with the rules now", async () => {
    sb = sandbox();
    mode = "unavailable";
    const events = fixtureEvents("pitfall-fixed", sb.root);
    await processEvents(request(sb.root, events), sb.deps({ llm: await provider(server.port!), ...at(T0) }));
    expect(waits(sb).map((w) => w.reason)).toEqual(["unavailable"]);
    const res = await extractPendingOffline(sb.db, sb.root, sb.deps(at(T0 + 1000)));
    expect(res.episodes).toBe(1);
    expect(waits(sb)).toEqual([]);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("offline");
    const stored = currentItems(sb.db, sb.root).map((i) => i.id);
    // The model comes back: the episode is not extracted again.
    mode = "ok";
    await processEvents(request(sb.root, []), sb.deps({ llm: await provider(server.port!), ...at(T0 + 3_600_000) }));
    expect(calls).toBe(1);
    expect(currentItems(sb.db, sb.root).map((i) => i.id)).toEqual(stored);
  });

  test("llm.wait_max_hours = 0: no waiting, the rules take the episode at once (the earlier behaviour)", async () => {
    sb = sandbox({ "llm.wait_max_hours": 0 });
    mode = "limited";
    await processEvents(
      request(sb.root, fixtureEvents("pitfall-fixed", sb.root)),
      sb.deps({ llm: await provider(server.port!), ...at(T0) }),
    );
    expect(waits(sb)).toEqual([]);
    expect(listEpisodes(sb.db, sb.root)[0]!.extractor).toBe("offline");
  });

  test("Retry-After in seconds or as an HTTP date", () => {
    expect(retryAfterMs("120")).toBe(120_000);
    expect(retryAfterMs("Mon, 01 Jun 2026 00:05:00 GMT", T0)).toBe(300_000);
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
