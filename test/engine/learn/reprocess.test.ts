import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { reprocessProject } from "../../../src/engine/learn/reprocess.ts";
import { addProject } from "../../../src/shared/projects.ts";
import { currentItems, getMemoryItem, insertMemoryItem, type NewMemoryItem } from "../../../src/sql/memory-items.ts";
import { isolatedEnv, runSqrl, SQRL_BIN } from "../../helpers/sqrl.ts";
import { fixtureEvents, request, sandbox, type Sandbox } from "./helpers.ts";

/**
 * `sqrl reprocess`: a store built by an older extractor (raw module notes and log-dump pitfalls,
 * planted here the way the old rules wrote them) takes today's shape; nothing is deleted, old
 * items keep their history and point at what replaced them, imported items are left alone.
 */
let sb: Sandbox;
const planted: Record<string, string> = {};

function oldItem(key: string, type: NewMemoryItem["type"], content: string, extractor: string): NewMemoryItem {
  const at = "2026-03-01T00:00:00.000Z";
  return {
    id: `mem_old_${key.replace(/\W+/g, "_")}`,
    project_id: sb.root,
    user_id: null,
    scope: "project",
    type,
    key,
    content,
    tags: [],
    importance: 0.6,
    created_at: at,
    updated_at: at,
    source_episode_id: null,
    source_event_ids: [],
    confidence: 0.6,
    file_paths: [],
    evidence_episode_ids: [],
    decision: "ADD_NEW",
    extractor,
  };
}

beforeAll(async () => {
  sb = sandbox();
  for (const [i, name] of ["preferences", "pitfall-fixed", "recipe-migrate"].entries()) {
    await processEvents(
      request(sb.root, fixtureEvents(name, sb.root, { baseMs: Date.parse("2026-03-02T09:00:00Z") + i * 86_400_000 })),
      sb.deps(),
    );
  }
  // What the previous extractor stored: a module note, a raw log pitfall, and a teammate's imported fact.
  planted.module = insertMemoryItem(
    sb.db,
    oldItem(
      "module:src/auth",
      "project_fact",
      "Module `src/auth/` (typescript): sessions work on `jwt.ts`.",
      "offline",
    ),
  ).id;
  // What the removed `repo-instructions` rule made of AGENTS.md: a cut, false copy of its line 3.
  writeFileSync(join(sb.root, "AGENTS.md"), "# Agents\n\n- Main history must never be rewritten.\n");
  planted.guidance = insertMemoryItem(sb.db, {
    ...oldItem("rule:history_rewritten", "user_style", "History must never be rewritten (AGENTS.md:3).", "offline"),
    tags: ["convention", "repo-file", "dont"],
    file_paths: ["AGENTS.md"],
  }).id;
  planted.imported = insertMemoryItem(
    sb.db,
    oldItem("team:deploys", "project_fact", "Deploys go out on Tuesdays.", "import"),
  ).id;
  planted.recipe = currentItems(sb.db, sb.root).find((i) => i.key === "recipe:migrate")!.id;
  addProject(sb.root, join(sb.home, "projects.json"));
});
afterAll(() => sb.cleanup());

describe("reprocess", () => {
  test("old items are superseded, not deleted; the same anchor points at its successor; imports stay", async () => {
    const before = currentItems(sb.db, sb.root);
    const res = await reprocessProject(sb.db, sb.root, sb.deps());
    expect(res.episodes).toBe(3);
    expect(res.superseded).toBe(before.length - 1); // all but the imported item
    const after = currentItems(sb.db, sb.root);
    expect(res.stored).toBe(after.length);

    const module = getMemoryItem(sb.db, planted.module!)!;
    expect(module.deleted).toBe(true); // history, not gone
    expect(after.some((i) => i.key.startsWith("module:"))).toBe(false); // today's rules make no module notes

    const oldRecipe = getMemoryItem(sb.db, planted.recipe!)!;
    expect(oldRecipe.deleted).toBe(true);
    const newRecipe = after.find((i) => i.key === "recipe:migrate")!;
    expect(newRecipe.id).not.toBe(oldRecipe.id);
    const succ = sb.db.query(`SELECT superseded_by FROM memory_meta WHERE memory_id = ?`).get(oldRecipe.id) as {
      superseded_by: string | null;
    };
    expect(succ.superseded_by).toBe(newRecipe.id);

    expect(getMemoryItem(sb.db, planted.imported!)!.deleted).toBe(false);
    // Re-extraction sees every episode again: the same memories come back.
    expect(new Set(after.filter((i) => i.id !== planted.imported).map((i) => i.key))).toEqual(
      new Set(
        before
          .filter((i) => i.id !== planted.imported && i.id !== planted.module && i.id !== planted.guidance)
          .map((i) => i.key),
      ),
    );
  });

  test("a copy of the repository's guidance the old rule stored is history now, and nothing copies it again", () => {
    const old = getMemoryItem(sb.db, planted.guidance!)!;
    expect(old.deleted).toBe(true); // superseded, kept as history
    expect(old.content).toBe("History must never be rewritten (AGENTS.md:3).");
    const now = currentItems(sb.db, sb.root);
    expect(now.filter((i) => /AGENTS\.md|history must never/i.test(i.content) || i.tags.includes("repo-file"))).toEqual(
      [],
    );
  });

  test.skipIf(!existsSync(SQRL_BIN))(
    "through the compiled binary: a summary line, --json, and a history `sqrl show` can follow",
    () => {
      const env = isolatedEnv(sb.home, { SQRL_HOME: sb.home });
      const r = runSqrl(["reprocess", sb.root, "--json"], { env, cwd: sb.root });
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout) as { episodes: number; superseded: number; stored: number; project: string };
      expect(j.episodes).toBe(3);
      expect(j.superseded).toBeGreaterThan(0);
      const plain = runSqrl(["reprocess", sb.root], { env, cwd: sb.root });
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(
        /^Reprocessed 3 episodes in [\d.]+ s: \d+ memories now; \d+ earlier ones kept as history/,
      );
      const show = runSqrl(["show", planted.recipe!, "--project", sb.root], { env, cwd: sb.root });
      expect(show.code).toBe(0);
      expect(show.stdout).toContain("Replaced by (");
      const bad = runSqrl(["reprocess", join(sb.home, "nowhere")], { env, cwd: sb.root });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("sqrl init");
    },
  );
});
