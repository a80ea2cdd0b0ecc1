/**
 * Redaction covers every stored column, not only content (issue 13 item 12): a key block whose
 * BEGIN line a cut would remove, file paths, and the MCP trace's arguments and errors.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { toEventRow } from "../../../src/daemon/ingest.ts";
import { initProject } from "../../../src/cli/init-project.ts";
import { sanitizeContent } from "../../../src/shared/privacy/sanitize.ts";
import { openProjectDb } from "../../../src/sql/open.ts";
import { insertToolCall, listToolCalls } from "../../../src/sql/tool-calls.ts";
import { tempDir } from "../../helpers/sqrl.ts";

const dir = tempDir("sqrl-columns-");
afterAll(() => dir.cleanup());

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function body(lines: number): string[] {
  let s = 7;
  return Array.from({ length: lines }, () => {
    let line = "";
    for (let i = 0; i < 64; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      line += B64[(s >>> 8) % 64];
    }
    return line;
  });
}

test("a key block whose BEGIN line the cut would remove is redacted before the cut: no body line survives", () => {
  const lines = body(26); // ~1.7 KB of key body
  const output = `${"build log line\n".repeat(400)}-----BEGIN RSA PRIVATE KEY-----\n${lines.join("\n")}\n-----END RSA PRIVATE KEY-----\n`;
  const out = sanitizeContent({ tool: "Bash", output, raw: { stdout: output } }, { envFile: false });
  const stored = JSON.stringify(out);
  for (const l of lines) expect(stored).not.toContain(l.slice(0, 24));
});

test("file paths are redacted like content", () => {
  const token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const row = toEventRow(
    {
      source_tool: "claude_code",
      session_id: "s",
      timestamp: "2026-03-01T10:00:00.000Z",
      event_type: "tool_call",
      content: { tool: "Read" },
      file_paths: [`/tmp/clone-${token}/README.md`],
      cwd: "/repo",
    },
    "/repo",
    "u",
  );
  expect(JSON.stringify(row.file_paths)).not.toContain(token);
});

test("the MCP trace stores arguments and errors redacted", () => {
  const root = join(dir.path, "repo");
  mkdirSync(root, { recursive: true });
  initProject(root);
  const db = openProjectDb(root);
  const key = "sk-" + "ant-api03-" + "Q9w8E7r6T5y4U3i2O1p0AaSsDdFfGgHhJjKk";
  insertToolCall(db, {
    ts: "2026-03-01T10:00:00.000Z",
    tool: "get_task_context",
    args: { task_description: `rotate ${key} in ci`, nested: { password: "hunter2secret" } },
    memory_ids: [],
    token_estimate: 10,
    latency_ms: 1,
    error: `bad key ${key}`,
  });
  const [row] = listToolCalls(db);
  db.close();
  const text = JSON.stringify(row);
  expect(text).not.toContain(key);
  expect(text).not.toContain("hunter2secret");
  expect(text).toContain("rotate");
});
