/**
 * Every real transcript in ../shared/fixtures parses without a crash and yields the expected
 * event types per file. The expected counts were derived independently (a Python reading of the
 * files with the rules), not by running this code. A copy whose cwd (or Gemini projectHash)
 * is rewritten to a temp repo lands in that repo's data.db.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { ingestFileOnce, sniffSource, TRANSCRIPT_SOURCES } from "../../../src/daemon/backfill.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { newTailFile, readTail } from "../../../src/daemon/tail.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import {
  countByType,
  makeCaptureHome,
  readEvents,
  retargetTranscript,
  SHARED_TRANSCRIPTS,
  type CaptureHome,
} from "./helpers.ts";

const EXPECTED: Record<string, Record<string, number>> = {
  "claude-code/entireio-cli/8e/0a64736bc7/0/full.jsonl": {
    assistant_response: 9,
    code_change: 3,
    command_run: 8,
    error: 2,
    session_summary: 1,
    tool_call: 28,
    tool_result: 21,
    user_message: 7,
  },
  "claude-code/entireio-cli/a6/e4c2a0fbd1/0/full.jsonl": {
    assistant_response: 10,
    code_change: 3,
    command_run: 3,
    session_summary: 1,
    test_run: 1,
    tool_call: 7,
    tool_result: 6,
    user_message: 3,
  },
  "claude-code/entireio-cli/b1/5d3b4e29e9/0/full.jsonl": {
    assistant_response: 9,
    code_change: 4,
    command_run: 6,
    error: 2,
    tool_call: 11,
    tool_result: 7,
    user_message: 7,
  },
  "claude-code/jnarowski-agentcmd/06381696-0074-49f8-863e-6ad4fac507f9.jsonl": {
    assistant_response: 3,
    tool_call: 3,
    tool_result: 2,
    user_message: 2,
  },
  "claude-code/jnarowski-agentcmd/full-session-five.jsonl": {
    assistant_response: 3,
    session_summary: 16,
    tool_call: 5,
    tool_result: 5,
    user_message: 1,
  },
  "claude-code/jnarowski-agentcmd/full-session-two.jsonl": {
    assistant_response: 6,
    code_change: 2,
    error: 1,
    tool_call: 8,
    tool_result: 9,
    user_message: 7,
  },
  "claude-code/kvsankar-agent-history/real_sessions/claude/session-01.jsonl": {
    assistant_response: 1,
    user_message: 1,
  },
  "claude-code/marot-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl": {
    assistant_response: 13,
    command_run: 11,
    error: 1,
    tool_call: 19,
    tool_result: 7,
    user_message: 1,
  },
  "claude-code/marot-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl": {
    assistant_response: 1,
    user_message: 1,
  },
  "claude-code/marot-spotter/short.jsonl": {
    assistant_response: 1,
    command_run: 1,
    error: 1,
    tool_call: 2,
    user_message: 2,
  },
  "claude-code/marot-spotter/tool_heavy.jsonl": {
    assistant_response: 1,
    command_run: 2,
    tool_call: 6,
    tool_result: 4,
    user_message: 5,
  },
  "claude-code/vibecodingtracker/test_conversation.jsonl": {
    assistant_response: 6,
    code_change: 6,
    command_run: 1,
    error: 2,
    tool_call: 24,
    tool_result: 28,
    user_message: 8,
  },
  "codex/jnarowski-agentcmd/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl": {
    assistant_response: 2,
    command_run: 16,
    tool_call: 16,
    user_message: 2,
  },
  "codex/kvsankar-agent-history/real_sessions/codex/session-01.jsonl": { assistant_response: 1, user_message: 1 },
  "codex/vibecodingtracker/test_conversation_oai.jsonl": {
    assistant_response: 9,
    code_change: 5,
    command_run: 9,
    tool_call: 13,
    tool_result: 9,
    user_message: 1,
  },
  "gemini/entireio-cli/ab/2b9748b105/0/full.jsonl": {
    assistant_response: 10,
    code_change: 1,
    command_run: 6,
    tool_call: 8,
    tool_result: 3,
    user_message: 1,
  },
  "gemini/jnarowski-agentcmd/session-2025-10-27T19-55-981c87cb.json": {
    assistant_response: 14,
    code_change: 2,
    command_run: 5,
    error: 1,
    tool_call: 11,
    tool_result: 7,
    user_message: 3,
  },
  "gemini/jnarowski-agentcmd/session-2025-10-29T10-39-a63242d9.json": { code_change: 1, error: 1, user_message: 1 },
  "gemini/vibecodingtracker/test_conversation_gemini.jsonl": {
    assistant_response: 2,
    code_change: 2,
    tool_call: 10,
    tool_result: 12,
    user_message: 3,
  },
};

const haveShared = existsSync(SHARED_TRANSCRIPTS);

function normalizeWhole(path: string) {
  const { source, document } = sniffSource(path);
  const src = TRANSCRIPT_SOURCES[source];
  const deps = { projects: () => [] as string[] };
  const renew = () => src.createNormalizer(path, deps);
  const file = newTailFile(path, source, document, renew());
  return { source, read: readTail(file, { final: true, renew }) };
}

describe.skipIf(!haveShared)("real transcripts (../shared/fixtures)", () => {
  for (const [rel, expected] of Object.entries(EXPECTED)) {
    test(`parses ${rel}`, () => {
      const path = join(SHARED_TRANSCRIPTS, rel);
      const { source, read } = normalizeWhole(path);
      expect(source).toBe(rel.startsWith("claude-code") ? "claude" : rel.startsWith("codex") ? "codex" : "gemini");
      expect(read.malformed).toBe(0);
      expect(countByType(read.events)).toEqual(expected);
      for (const e of read.events) {
        expect(Number.isFinite(Date.parse(e.timestamp))).toBe(true);
        expect(e.session_id).toBeTruthy();
        if (source !== "gemini") expect(e.cwd).toBeTruthy();
      }
      if (rel.includes("/subagents/")) expect(read.events.every((e) => e.content.sidechain === true)).toBe(true);
    });
  }

  let home: CaptureHome;
  beforeAll(() => {
    home = makeCaptureHome();
  });
  afterAll(() => home.restore());

  test("a copy with cwd rewritten to a temp repo lands in that repo's data.db, once", async () => {
    const pool = new ProjectDbPool();
    try {
      let i = 0;
      for (const [rel, expected] of Object.entries(EXPECTED)) {
        const repo = home.addRepo(`repo-${i++}`);
        const copy = join(home.root, "copies", rel);
        mkdirSync(dirname(copy), { recursive: true });
        writeFileSync(copy, retargetTranscript(readFileSync(join(SHARED_TRANSCRIPTS, rel), "utf8"), repo));
        const ctx = { projects: listProjects(), userId: "tester", pool };
        const { source, document } = sniffSource(copy);
        const first = await ingestFileOnce(copy, source, document, ctx);
        const total = Object.values(expected).reduce((a, b) => a + b, 0);
        expect(first.skipped).toBe(0);
        expect(first.added).toBe(total);
        expect(countByType(readEvents(repo))).toEqual(expected);
        const again = await ingestFileOnce(copy, source, document, ctx);
        expect(again.added).toBe(0);
        expect(again.duplicates).toBe(total);
      }
    } finally {
      pool.close();
    }
  });
});
