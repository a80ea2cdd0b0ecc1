/**
 * The model stand-in of `memory-quality --record DIR / --answers DIR` (issue 25): a local endpoint on
 * 127.0.0.1 that speaks the OpenAI Chat Completions API, so the real `openai_compatible` provider and
 * the whole pipeline run unchanged. Each request is keyed by a hash of its text with the episode id
 * left out (episode ids are random per run; the rendered episode is not).
 *
 * - stored ids in a request (update decisions name them) are shown by position, `mem_#1` …, and an
 *   answer's `mem_#n` is sent back as this run's id, so decisions replay like extractions.
 * - record: every extraction request is saved as `<key>.json` ({key, kind, episode, system, prompt,
 *   max_tokens}); with answers as well, every request that had none (an update decision about the
 *   model's own candidates, a retry after an invalid answer), for a next round of answers.
 * - answers: `<answers>/<key>.json` holds the text the model returns (for an extraction request, the
 *   JSON object the system prompt asks for); it is sent back as the completion. A request with no
 *   answer is listed and refused with HTTP 404 (a final failure: that call falls back to the rules),
 *   never answered with something made up.
 * Token usage is reported as sqrl estimates it (estimateTokens of the request and of the answer).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { estimateTokens } from "../src/shared/tokens.ts";

export type RequestKind = "extraction" | "decision" | "summary" | "other";

/** What an extraction prompt starts with: `Episode <id> (<n> events):`. */
const EPISODE_HEAD = /^Episode (\S+) \(/;

/** A stored item's id (`mem_0mltciwls009b65c7f227`): random per run, like an episode's. */
const MEM_ID = /\bmem_[0-9a-z]{8,}\b/g;
/** How a request names the nth stored id it shows, and an answer refers to it: `mem_#1`, `mem_#2` … */
const POSITIONAL = /\bmem_#(\d+)\b/g;

/**
 * An update decision names the stored items it is about by their ids, which change from run to run, so
 * its text (and key) would never be the same twice and its answer could not be replayed. The stand-in
 * shows them by position instead (`mem_#1` for the first id the prompt names); an answer written against
 * that text names `mem_#n`, and `idsBack` turns it into this run's id.
 */
export function positionalIds(prompt: string): { text: string; ids: string[] } {
  const ids: string[] = [];
  const text = prompt.replace(MEM_ID, (id) => {
    let i = ids.indexOf(id);
    if (i < 0) i = ids.push(id) - 1;
    return `mem_#${i + 1}`;
  });
  return { text, ids };
}

/** An answer's `mem_#n` as this run's ids (one it does not know stays as written: the pipeline refuses it). */
export function idsBack(answer: string, ids: readonly string[]): string {
  return answer.replace(POSITIONAL, (m, n: string) => ids[Number(n) - 1] ?? m);
}

/** The request's key: sha256 of the system prompt and the prompt without the episode id (24 hex digits). */
export function requestKey(system: string, prompt: string): string {
  const text = `${system}\n\n${prompt.replace(EPISODE_HEAD, "Episode (")}`;
  return createHash("sha256").update(text).digest("hex").slice(0, 24);
}

export function requestKind(system: string): RequestKind {
  if (system.startsWith("You extract long-term engineering memory")) return "extraction";
  if (system.includes("You maintain a developer's long-term memory")) return "decision";
  if (system.startsWith("Summarize one episode")) return "summary";
  return "other";
}

/** One request the stand-in saw. */
export interface SeenRequest {
  key: string;
  kind: RequestKind;
  /** The episode an extraction request is about. */
  episode: string | null;
  inputTokens: number;
  /** Tokens of the answer sent back (0 when there was none). */
  outputTokens: number;
  answered: boolean;
}

export interface AnswerServer {
  /** Base URL for `llm.base_url` (…/v1). */
  url: string;
  seen: SeenRequest[];
  stop(): void;
}

export function startAnswerServer(opts: { record?: string; answers?: string }): AnswerServer {
  if (opts.record) mkdirSync(opts.record, { recursive: true });
  const seen: SeenRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions")
        return new Response("not found", { status: 404 });
      const body = (await req.json()) as {
        max_tokens?: number;
        messages: Array<{ role: string; content: string }>;
      };
      const system = body.messages.find((m) => m.role === "system")?.content ?? "";
      const { text: prompt, ids } = positionalIds(body.messages.find((m) => m.role === "user")?.content ?? "");
      const key = requestKey(system, prompt);
      const kind = requestKind(system);
      const episode = kind === "extraction" ? (EPISODE_HEAD.exec(prompt)?.[1] ?? null) : null;
      const answerFile = opts.answers ? join(opts.answers, `${key}.json`) : null;
      const answered = answerFile !== null && existsSync(answerFile);
      if (opts.record && (kind === "extraction" || (opts.answers && !answered))) {
        const file = join(opts.record, `${key}.json`);
        if (!existsSync(file))
          writeFileSync(
            file,
            `${JSON.stringify({ key, kind, episode, system, prompt, max_tokens: body.max_tokens ?? null }, null, 1)}\n`,
          );
      }
      const inputTokens = estimateTokens(system) + estimateTokens(prompt);
      if (!answerFile || !answered) {
        seen.push({ key, kind, episode, inputTokens, outputTokens: 0, answered: false });
        return Response.json({ error: { message: "no recorded answer for this request" } }, { status: 404 });
      }
      const text = idsBack(readFileSync(answerFile, "utf8"), ids);
      const outputTokens = estimateTokens(text);
      seen.push({ key, kind, episode, inputTokens, outputTokens, answered: true });
      return Response.json({
        id: `stand-in-${seen.length}`,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: inputTokens, completion_tokens: outputTokens },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, seen, stop: () => server.stop(true) };
}
