import { expect, test } from "bun:test";
import { REPO_ROOT } from "../helpers/sqrl.ts";

/** The test suite's own output: what a new contributor sees when running `bun test`. */
function bunTest(files: string[], env: Record<string, string> = {}): { code: number; out: string } {
  const { SQRL_LOG_LEVEL: _level, ...inherited } = process.env;
  const r = Bun.spawnSync([process.execPath, "test", ...files], {
    cwd: REPO_ROOT,
    env: { ...inherited, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() + r.stderr.toString() };
}

test("without ../shared the suite says so once, in one line, with what to do", () => {
  const r = bunTest(["test/engine/retrieve/tokens.test.ts", "test/sql/schema.test.ts"], {
    SQRL_SHARED_DIR: "/nonexistent/shared",
  });
  expect(r.code).toBe(0);
  const lines = r.out.split("\n").filter((l) => l.includes("/nonexistent/shared"));
  expect(lines.length).toBe(1);
  expect(lines[0]).toContain("skipped");
  expect(r.out).toMatch(/\d+ skip/);
});

test("expected warnings provoked by tests (a failing LLM, an embeddings server that refuses) stay quiet", () => {
  const r = bunTest(["test/engine/retrieve/chain-of-note.test.ts", "test/engine/retrieve/embeddings.test.ts"]);
  expect(r.code).toBe(0);
  expect(r.out).not.toContain("[warn]");
  expect(r.out).not.toContain("ECONNREFUSED");
});
