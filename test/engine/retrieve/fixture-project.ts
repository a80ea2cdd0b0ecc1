import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nowIso } from "../../../src/shared/time.ts";
import { openDatabase } from "../../../src/sql/open.ts";
import { insertUserStyle } from "../../../src/sql/user-style.ts";
import { addEpisode, addItem, tempProject } from "./helpers.ts";

/**
 * A project with memory of every size (a few words to thousands of tokens) of all four types, a
 * global user.db with style, and episodes whose events range from one line to huge outputs.
 */
export const NOW = Date.parse("2025-11-25T10:00:00.000Z");

const para = (topic: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `Step ${i + 1}: the ${topic} check in src/auth/jwt.ts compares exp against Date.now() and logs {"ok":false,"code":${400 + (i % 9)}}.`,
  ).join(" ");

export function richProject(): { root: string; db: Database; userDb: Database; cleanup: () => void } {
  const p = tempProject();
  const userDir = mkdtempSync(join(tmpdir(), "sqrl-userdb-"));
  const userDb = openDatabase(join(userDir, "user.db"), "user");
  const add = (spec: Parameters<typeof addItem>[2]) => addItem(p.db, p.root, spec, NOW);
  // every type, every size; all mention the auth token so that one query reaches them all
  add({
    id: "mem_tiny_style",
    type: "user_style",
    key: "pm",
    content: "Uses pnpm for auth token scripts.",
    importance: 0.9,
    age_days: 1,
  });
  add({
    type: "user_style",
    key: "tests",
    content: `Auth token tests: ${para("style", 3)}`,
    importance: 0.7,
    age_days: 5,
  });
  add({
    type: "user_style",
    key: "huge_style",
    content: `Auth token style guide. ${para("guide", 120)}`,
    importance: 0.95,
    age_days: 2,
  });
  add({
    id: "mem_tiny_fact",
    type: "project_fact",
    key: "auth",
    content: "Auth token is a JWT.",
    importance: 0.8,
    file_paths: ["src/auth/jwt.ts"],
    age_days: 3,
  });
  add({
    type: "project_fact",
    key: "db",
    content: `Auth token sessions in Postgres. ${para("db", 10)}`,
    importance: 0.6,
    age_days: 9,
  });
  add({
    type: "project_fact",
    key: "module:src/auth",
    content: `Module \`src/auth/\`: auth token issuing and checks. ${para("module", 2)}`,
    importance: 0.5,
    file_paths: ["src/auth/jwt.ts", "src/auth/session.ts"],
    age_days: 4,
  });
  add({
    type: "project_fact",
    key: "huge_fact",
    content: `Auth token history. ${para("history", 200)}`,
    importance: 0.99,
    age_days: 1,
  });
  add({
    id: "mem_tiny_pitfall",
    type: "pitfall",
    key: "exp",
    content: "Auth token exp is in seconds.",
    importance: 0.8,
    file_paths: ["src/auth/jwt.ts"],
    age_days: 2,
  });
  add({
    type: "pitfall",
    key: "clock",
    content: `Auth token tests fail with fake timers. ${para("clock", 6)}`,
    importance: 0.75,
    file_paths: ["tests/auth.test.ts"],
    age_days: 6,
  });
  add({
    type: "pitfall",
    key: "huge_pitfall",
    content: `Auth token refresh race. ${para("race", 150)}`,
    importance: 0.9,
    file_paths: ["src/auth/refresh.ts"],
    age_days: 3,
  });
  add({
    id: "mem_tiny_recipe",
    type: "recipe",
    key: "run",
    content: "Auth token tests: pnpm test auth.",
    importance: 0.6,
    age_days: 8,
  });
  add({
    type: "recipe",
    key: "huge_recipe",
    content: `Rotate the auth token signing key. ${para("rotate", 90)}`,
    importance: 0.7,
    age_days: 20,
  });
  insertUserStyle(userDb, {
    id: "us_global_short",
    user_id: "alice",
    key: "indent",
    content: "Indents auth token code with two spaces.",
    tags: ["style"],
    importance: 0.7,
    created_at: nowIso(NOW - 86_400_000 * 30),
    updated_at: nowIso(NOW - 86_400_000 * 30),
    source: "manual",
    confidence: 0.8,
    evidence: [],
  });
  insertUserStyle(userDb, {
    id: "us_global_pm",
    user_id: "alice",
    key: "pm",
    content: "Uses npm everywhere.",
    tags: ["tooling"],
    importance: 0.9,
    created_at: nowIso(NOW - 86_400_000 * 60),
    updated_at: nowIso(NOW - 86_400_000 * 60),
    source: "manual",
    confidence: 0.8,
    evidence: [],
  });
  addEpisode(
    p.db,
    p.root,
    {
      id: "ep_small",
      days_ago: 3,
      summary: "Fixed auth token exp.",
      outcome: "tests green",
      file_paths: ["src/auth/jwt.ts"],
      events: [
        { type: "user_message", content: { text: "fix the auth token exp" }, at: 0 },
        {
          type: "command_run",
          content: {
            command: "pnpm test",
            exit_code: 1,
            output: `FAIL auth.test.ts\n${"expected 3600 got 3600000\n".repeat(400)}`,
          },
          at: 2,
        },
        {
          type: "code_change",
          content: { tool: "Edit", diff_summary: "exp * 1000 -> exp" },
          at: 4,
          file_paths: ["src/auth/jwt.ts"],
        },
        {
          type: "test_run",
          content: { command: "pnpm test", exit_code: 0, runner: "vitest", passed: 12, failed: 0, output: "ok" },
          at: 6,
        },
      ],
    },
    NOW,
  );
  addEpisode(
    p.db,
    p.root,
    {
      id: "ep_big",
      days_ago: 1,
      summary: `Reworked auth token refresh. ${para("refresh", 30)}`,
      outcome: "committed",
      file_paths: ["src/auth/refresh.ts", "src/auth/jwt.ts", "tests/auth.test.ts", "docs/auth.md"],
      events: [
        { type: "user_message", content: { text: `Refactor refresh: ${para("ask", 40)}` }, at: 0 },
        { type: "assistant_response", content: { text: "Done." }, at: 3 },
        {
          type: "git_commit",
          content: {
            commit: {
              hash: "abcdef1234567890",
              author: "alice",
              message: "fix(auth): rotate refresh tokens",
              files: ["src/auth/refresh.ts"],
              insertions: 40,
              deletions: 12,
            },
          },
          at: 5,
        },
      ],
    },
    NOW,
  );
  return {
    root: p.root,
    db: p.db,
    userDb,
    cleanup: () => {
      userDb.close();
      rmSync(userDir, { recursive: true, force: true });
      p.cleanup();
    },
  };
}
