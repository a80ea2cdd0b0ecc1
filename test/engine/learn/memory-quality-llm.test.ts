import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { idsBack, positionalIds, requestKey, startAnswerServer } from "../../../bench/llm-answers.ts";
import { memoryQuality } from "../../../bench/memory-quality.ts";
import { SYSTEM_PROMPT } from "../../../src/engine/learn/extract/llm-extractor.ts";
import { tempDir } from "../../helpers/sqrl.ts";

/**
 * The LLM path of the memory-quality benchmark without a model API (issue 25): `--record` saves each
 * extraction request the real openai_compatible provider sends to the local stand-in; `--answers`
 * replays the answers found for them through the whole pipeline, and lists the requests that had none.
 * Run on the scenario transcripts (quick mode), one answer written here for one recorded request.
 */
const t = tempDir("sqrl-mq-llm-test-");
afterAll(() => t.cleanup());

describe("memory-quality with a model stand-in", () => {
  test("a request's key leaves out the episode id and nothing else", () => {
    const a = requestKey(SYSTEM_PROMPT, "Episode ep_1 (2 events):\n[1] user: x");
    expect(requestKey(SYSTEM_PROMPT, "Episode ep_2 (2 events):\n[1] user: x")).toBe(a);
    expect(requestKey(SYSTEM_PROMPT, "Episode ep_1 (2 events):\n[1] user: y")).not.toBe(a);
  });

  test("an update decision replays across runs: stored ids are shown by position and given back as this run's", async () => {
    const system = "You maintain a developer's long-term memory. For each NEW candidate …";
    const ask = (a: string, b: string) =>
      `Candidate 0 [pitfall x]: new text\n  existing ${a}: old text\n  existing ${b}: other\nsee ${a}`;
    const first = positionalIds(ask("mem_0mltciwls009b65c7f227", "mem_0mlrup6kecf99d0bda417"));
    expect(first.text).toBe(
      "Candidate 0 [pitfall x]: new text\n  existing mem_#1: old text\n  existing mem_#2: other\nsee mem_#1",
    );
    expect(idsBack('{"target_id": "mem_#2", "x": "mem_#9"}', first.ids)).toBe(
      '{"target_id": "mem_0mlrup6kecf99d0bda417", "x": "mem_#9"}',
    );
    // Through the stand-in: recorded in one run, answered against the positional text, replayed in another.
    const rec = join(t.path, "decisions");
    const ans = join(t.path, "decision-answers");
    const call = async (url: string, prompt: string) =>
      fetch(`${url}/chat/completions`, {
        method: "POST",
        body: JSON.stringify({
          messages: [
            { role: "system", content: system },
            { role: "user", content: prompt },
          ],
        }),
      });
    const a = startAnswerServer({ record: rec, answers: ans });
    expect((await call(a.url, ask("mem_aaaaaaaaaaaa1", "mem_bbbbbbbbbbbb2"))).status).toBe(404);
    a.stop();
    const [file] = readdirSync(rec);
    const recorded = JSON.parse(readFileSync(join(rec, file!), "utf8")) as { prompt: string };
    expect(recorded.prompt).toContain("existing mem_#1: old text");
    mkdirSync(ans, { recursive: true });
    writeFileSync(join(ans, file!), '{"decisions": [{"candidate": 0, "verb": "NOOP", "target_id": "mem_#1"}]}');
    const b = startAnswerServer({ answers: ans });
    const res = await call(b.url, ask("mem_cccccccccccc3", "mem_dddddddddddd4"));
    b.stop();
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(JSON.parse(body.choices[0]!.message.content).decisions[0].target_id).toBe("mem_cccccccccccc3");
  });

  test("--record saves every extraction request; --answers replays one and lists the others", async () => {
    const rec = join(t.path, "requests");
    const ans = join(t.path, "answers");
    const recorded = await memoryQuality(true, undefined, {}, { record: rec, precheck: false });
    const files = readdirSync(rec).filter((f) => f.endsWith(".json"));
    const extractions = recorded.llm!.requests.filter((q) => q.kind === "extraction");
    expect(files.length).toBeGreaterThan(1);
    expect(new Set(extractions.map((q) => q.key)).size).toBe(files.length);
    expect(recorded.llm!.byLlm).toBe(0); // nothing answered: the rules took every episode

    // One answer: the recipe the scenario's first recorded episode shows, as the model would return it.
    const req = JSON.parse(readFileSync(join(rec, files[0]!), "utf8")) as { key: string; prompt: string };
    expect(req.key).toBe(files[0]!.replace(/\.json$/, ""));
    const firstEvent = Number(/\[(\d+)\]/.exec(req.prompt)![1]);
    const answer = {
      summary: "The developer worked on the inventory API; the episode's commands ran and the work ended green.",
      items: [
        {
          type: "project_fact",
          key: "decision:stand-in-check",
          content: "The inventory API keeps stand-in checks separate from its own tests.",
          tags: ["decision"],
          importance: 0.6,
          confidence: 0.9,
          scope: "project",
          file_paths: [],
          evidence: [firstEvent],
        },
      ],
    };
    mkdirSync(ans, { recursive: true });
    writeFileSync(join(ans, files[0]!), JSON.stringify(answer));

    const replayed = await memoryQuality(true, undefined, {}, { answers: ans, precheck: false });
    const run = replayed.llm!;
    expect(run.byLlm).toBe(1);
    expect(run.requests.filter((q) => q.answered).map((q) => q.key)).toEqual([req.key]);
    // The others are listed, and the rules took their episodes.
    const missing = run.requests.filter((q) => !q.answered && q.kind === "extraction").map((q) => q.key);
    expect(new Set(missing)).toEqual(new Set(files.slice(1).map((f) => f.replace(/\.json$/, ""))));
    expect(run.byRules).toBe(files.length - 1);
    expect(replayed.stored.some((s) => s.content.includes("stand-in checks"))).toBe(true);
  });
});
