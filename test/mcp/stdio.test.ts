/**
 * StdioServer in-process (issue 13 item 7, issue 12's habits): its streams are PassThroughs, the
 * real McpServer behind it. Every malformed message gets the JSON-RPC error the spec names, none
 * crashes it, a line past the read cap is dropped, and it stops within a second of its input closing.
 * The compiled `sqrl mcp` is checked the same way at the end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { INVALID_REQUEST, PARSE_ERROR, StdioServer } from "../../src/mcp/stdio.ts";
import { SQRL_BIN, isolatedEnv, tempDir } from "../helpers/sqrl.ts";

// the real server loads with its default deps: keep it away from the real home
const home = tempDir("sqrl-stdio-home-");
const saved = { SQRL_HOME: process.env.SQRL_HOME, HOME: process.env.HOME };
beforeAll(() => {
  process.env.SQRL_HOME = `${home.path}/sqrl`;
  process.env.HOME = `${home.path}/home`;
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  home.cleanup();
});

interface Reply {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

function harness(opts: { maxLineBytes?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const replies: Reply[] = [];
  let buf = "";
  output.on("data", (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      replies.push(JSON.parse(buf.slice(0, nl)) as Reply);
      buf = buf.slice(nl + 1);
    }
  });
  const server = new StdioServer({ input, output, cwd: "/", maxLineBytes: opts.maxLineBytes });
  server.start();
  const send = (line: string) => input.write(`${line}\n`);
  const waitFor = async (n: number, ms = 3000) => {
    const end = Date.now() + ms;
    while (replies.length < n && Date.now() < end) await Bun.sleep(5);
    return replies;
  };
  return { input, server, replies, send, waitFor };
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

describe("malformed messages get the error the JSON-RPC spec names", () => {
  const cases: Array<[string, string, number, string | number | null]> = [
    ["a line that is not JSON", "{not json", PARSE_ERROR, null],
    ["a half JSON object", '{"jsonrpc":"2.0","id":3,', PARSE_ERROR, null],
    ["JSON null", "null", INVALID_REQUEST, null],
    ["a number", "42", INVALID_REQUEST, null],
    ["a string", '"hello"', INVALID_REQUEST, null],
    ["an empty array", "[]", INVALID_REQUEST, null],
    ["a batch", `[${INIT}]`, INVALID_REQUEST, null],
    ["no jsonrpc member", '{"id":7,"method":"ping"}', INVALID_REQUEST, 7],
    ["jsonrpc 1.0", '{"jsonrpc":"1.0","id":8,"method":"ping"}', INVALID_REQUEST, 8],
    ["params null", '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":null}', INVALID_REQUEST, 9],
    ["params a string", '{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}', INVALID_REQUEST, 10],
    ["id null", '{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, null],
    ["id an object", '{"jsonrpc":"2.0","id":{},"method":"ping"}', INVALID_REQUEST, null],
    ["method a number", '{"jsonrpc":"2.0","id":11,"method":5}', INVALID_REQUEST, 11],
    ["nothing but jsonrpc", '{"jsonrpc":"2.0"}', INVALID_REQUEST, null],
  ];
  for (const [name, line, code, id] of cases) {
    test(name, async () => {
      const h = harness();
      h.send(line);
      const [reply] = await h.waitFor(1);
      expect(reply).toMatchObject({ jsonrpc: "2.0", id, error: { code } });
      // and the server still answers afterwards
      h.send(INIT);
      const after = await h.waitFor(2);
      expect(after[1]).toMatchObject({ id: 1, result: { serverInfo: { name: "sqrl" } } });
      h.input.end();
      await h.server.done;
    });
  }
});

test("a line longer than the read cap is dropped with -32600; the next line is served", async () => {
  const h = harness({ maxLineBytes: 1024 });
  h.input.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"x".repeat(600)}`);
  h.input.write(`${"y".repeat(600)}"}}\n`);
  h.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
  const replies = await h.waitFor(2);
  expect(replies[0]).toMatchObject({ id: null, error: { code: INVALID_REQUEST } });
  expect(replies[1]).toMatchObject({ id: 2, result: {} });
  h.input.end();
  await h.server.done;
});

test("a request for an unknown method goes to the real server and gets -32601; then it stops within a second of input closing", async () => {
  const h = harness();
  h.send(INIT);
  h.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  h.send('{"jsonrpc":"2.0","id":"u1","method":"no/such/method","params":{}}');
  const replies = await h.waitFor(2, 10_000);
  expect(replies[1]).toMatchObject({ id: "u1", error: { code: -32601 } });
  const closedAt = performance.now();
  h.input.end();
  await h.server.done;
  expect(performance.now() - closedAt).toBeLessThan(1000);
});

test("the compiled `sqrl mcp` answers a null line with -32600 and exits within a second of stdin closing", async () => {
  const dir = tempDir("sqrl-stdio-");
  try {
    const proc = Bun.spawn([SQRL_BIN, "mcp"], {
      env: isolatedEnv(dir.path),
      cwd: dir.path,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    proc.stdin.write("null\n{oops\n");
    proc.stdin.write('{"jsonrpc":"2.0","id":{},"method":"ping"}\n');
    await proc.stdin.flush();
    const reader = proc.stdout.getReader();
    let text = "";
    while (text.split("\n").length < 4) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const codes = text
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as Reply).error?.code);
    expect(codes).toEqual([INVALID_REQUEST, PARSE_ERROR, INVALID_REQUEST]);
    const closedAt = performance.now();
    proc.stdin.end();
    const code = await proc.exited;
    expect(performance.now() - closedAt).toBeLessThan(1000);
    expect(code).toBe(0);
  } finally {
    dir.cleanup();
  }
});

test("the compiled `sqrl mcp` gives ids beyond 2^53 back exactly and answers a last request that has no newline (issue 30 item 8)", async () => {
  const dir = tempDir("sqrl-stdio-");
  try {
    const proc = Bun.spawn([SQRL_BIN, "mcp"], {
      env: isolatedEnv(dir.path),
      cwd: dir.path,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    proc.stdin.write(`${INIT.replace('"id":1', '"id":9007199254740993')}\n`);
    proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    // answered by the real server (the SDK), then the early path, then a last line without its newline
    proc.stdin.write('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"no/such/method","params":{}}\n');
    proc.stdin.write('{"jsonrpc":"2.0","id":-9007199254740995,"method":"ping"}\n');
    proc.stdin.write('{"jsonrpc":"2.0","id":"last","method":"ping"}');
    await proc.stdin.flush();
    proc.stdin.end();
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    const ids = text
      .trim()
      .split("\n")
      .map((l) => /"id":("[^"]*"|-?\d+)/.exec(l)?.[1]);
    expect(ids.sort()).toEqual(['"last"', "-9007199254740995", "12345678901234567890123", "9007199254740993"].sort());
  } finally {
    dir.cleanup();
  }
});
