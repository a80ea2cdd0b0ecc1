import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import {
  appendLines,
  claudeTurns,
  daemonStatus,
  initProject,
  killQuietly,
  makeHome,
  queryProject,
  readRuntime,
  SQRL_BIN,
  startDaemon,
  transcriptPath,
  waitFor,
  type DaemonHome,
} from "./harness.ts";

/**
 * Episodes wait for the model, end to end (issue 25): the compiled daemon and engine with the
 * openai_compatible provider pointed at a local Chat Completions server that answers 429 ("usage limit
 * reached", Retry-After 1 s). The closed episode waits in data.db (`sqrl status` says how many and why),
 * survives the engine being killed, and once the server answers it is distilled by the model — once.
 */
const SESSION = "f2f2f2f2-0000-4000-8000-00000000000b";
let limited = true;
const answered: string[] = [];
let server: ReturnType<typeof Bun.serve>;

function answer(): string {
  return JSON.stringify({
    summary:
      "The developer asked to run the module tests and fix what failed; the runs ended and the work stopped there.",
    items: [
      {
        type: "project_fact",
        key: "decision:module-tests-first",
        content: "Module tests run before any fix in this project, so a failing module is found before it is changed.",
        tags: ["decision"],
        importance: 0.6,
        confidence: 0.9,
        scope: "project",
        file_paths: [],
        evidence: [1],
      },
    ],
  });
}

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
      const body = (await req.json()) as { messages: Array<{ content: string }> };
      if (limited)
        return Response.json(
          { error: { message: "usage limit reached", type: "rate_limit_error" } },
          { status: 429, headers: { "retry-after": "1" } },
        );
      answered.push(body.messages[1]!.content);
      return Response.json({
        id: `c${answered.length}`,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: answer() }, finish_reason: "stop" }],
        usage: { prompt_tokens: 100, completion_tokens: 50 },
      });
    },
  });
});
afterAll(() => server.stop(true));

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

describe.skipIf(!existsSync(SQRL_BIN))("episodes wait for the model (compiled binary)", () => {
  test("rate-limited: queued, shown by status, kept across an engine kill, distilled by the model once it answers", async () => {
    home = makeHome(
      [
        "[daemon]",
        "batch_interval_seconds = 1",
        "batch_min_events = 5",
        "[llm]",
        'provider = "openai_compatible"',
        `base_url = "http://127.0.0.1:${server.port}/v1"`,
        'model = "stand-in"',
        "wait_retry_seconds = 1",
        "",
      ].join("\n"),
    );
    const project = initProject(home, "waits");
    startDaemon(home);
    const turns = claudeTurns({ cwd: project, sessionId: SESSION, turns: 4, startMs: Date.now() - 7_200_000 });
    appendLines(transcriptPath(home, project, SESSION), turns.lines);

    const waiting = await waitFor(
      "an episode waiting for the model",
      () => {
        const rows = queryProject<{ episode_id: string; reason: string }>(
          project,
          "SELECT episode_id, reason FROM llm_waits",
        );
        return rows.length > 0 ? rows : undefined;
      },
      45_000,
    );
    expect(waiting.map((w) => w.reason)).toEqual(["rate_limited"]);
    const episodeId = waiting[0]!.episode_id;
    expect(queryProject(project, "SELECT id FROM memory_items")).toEqual([]); // the rules did not take it

    const status = home.sqrl(["status", project, "--json"]);
    expect(status.code).toBe(0);
    const s = JSON.parse(status.stdout) as { llm: { waiting: { count: number; by_reason: Record<string, number> } } };
    expect(s.llm.waiting.count).toBe(1);
    expect(s.llm.waiting.by_reason).toEqual({ rate_limited: 1 });
    const text = home.sqrl(["status", project]);
    expect(text.stdout).toContain("1 episode waits for it (1 rate-limited");

    // The engine dies while the episode waits; the next one finds it in data.db.
    const engine = readRuntime(home, "engine")!;
    killQuietly(engine.pid, "SIGKILL");
    await waitFor(
      "a new engine",
      async () => {
        const st = await daemonStatus(home!);
        return st.engine.healthy && st.engine.pid !== engine.pid ? st : undefined;
      },
      45_000,
    );
    expect(queryProject<{ episode_id: string }>(project, "SELECT episode_id FROM llm_waits")).toEqual([
      { episode_id: episodeId },
    ]);

    limited = false;
    await waitFor(
      "the waiting episode distilled by the model",
      () => {
        const rows = queryProject<{ extractor: string | null }>(
          project,
          "SELECT extractor FROM episode_state WHERE episode_id = ?",
          episodeId,
        );
        return rows[0]?.extractor === "llm" ? rows : undefined;
      },
      45_000,
    );
    await Bun.sleep(2500); // a few more batcher ticks: nothing is sent again
    expect(answered.length).toBe(1);
    expect(answered[0]).toContain("Turn 0: please run the tests");
    expect(queryProject(project, "SELECT episode_id FROM llm_waits")).toEqual([]);
    const items = queryProject<{ key: string; extractor: string }>(
      project,
      "SELECT m.key, mm.extractor FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id WHERE m.deleted = 0",
    );
    expect(items).toEqual([{ key: "decision:module-tests-first", extractor: "llm" }]);
  }, 150_000);
});
