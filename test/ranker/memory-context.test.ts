import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rankLexical } from "../../src/ranker/lexical.ts";
import { memoryContext, memoryLabels, memoryNeighbours } from "../../src/ranker/memory-context.ts";
import type { MemoryType } from "../../src/shared/api.ts";
import { insertMemoryItem } from "../../src/sql/memory-items.ts";
import { openProjectDb } from "../../src/sql/open.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A real project data.db (schema, memory_fts kept in sync by insertMemoryItem) in a temp dir. */
function project() {
  const base = mkdtempSync(join(tmpdir(), "sqrl-ranker-"));
  const root = join(base, "repo");
  mkdirSync(root, { recursive: true });
  const db = openProjectDb(root);
  cleanups.push(() => {
    db.close();
    rmSync(base, { recursive: true, force: true });
  });
  let n = 0;
  const add = (
    id: string,
    type: MemoryType,
    key: string,
    content: string,
    tags: string[] = [],
    episode: string | null = null,
  ) => {
    const at = new Date(Date.UTC(2025, 0, 1, 0, n++)).toISOString();
    insertMemoryItem(db, {
      id,
      project_id: root,
      user_id: null,
      scope: "project",
      type,
      key,
      content,
      tags,
      importance: 0.5,
      created_at: at,
      updated_at: at,
      source_episode_id: episode,
      source_event_ids: [],
      confidence: 0.8,
      file_paths: [],
      evidence_episode_ids: episode ? [episode] : [],
      decision: "ADD_NEW",
      extractor: "manual",
    });
  };
  return { root, db, add };
}

describe("memory_fts ranking with memory context", () => {
  test("labels are key, tags and type; neighbours are scored items of the same episode", () => {
    const { db, add } = project();
    add("m1", "project_fact", "auth_mechanism", "Login issues a signed session cookie", ["auth", "cookie"], "ep1");
    add("m2", "pitfall", "cookie_domain", "The cookie domain must match the preview host", [], "ep1");
    add("m3", "recipe", "run_tests", "Run bun test before pushing", [], "ep2");
    expect(memoryLabels(db, ["m1", "m3", "missing"])).toEqual(
      new Map([
        ["m1", "auth_mechanism auth cookie project_fact"],
        ["m3", "run_tests  recipe"],
      ]),
    );
    const nb = memoryNeighbours(db, ["m1", "m2", "m3"]);
    expect(nb.get("m1")).toEqual([{ id: "m2", weight: 0.5 }]);
    expect(nb.get("m2")).toEqual([{ id: "m1", weight: 0.5 }]);
    expect(nb.has("m3")).toBe(false);
  });

  test("an item whose key names the query's subject ranks above one that only mentions it", () => {
    const { db, add } = project();
    for (let i = 0; i < 8; i++) add(`f${i}`, "project_fact", `note_${i}`, `Unrelated note number ${i} about the build`);
    add("mentions", "project_fact", "release_steps", "Auth: auth checks run");
    add(
      "about",
      "project_fact",
      "auth_mechanism",
      "Sessions are signed cookies checked by middleware, and the deploy pipeline rotates them",
    );
    const plain = rankLexical(db, "auth", { table: "memory_fts", idColumn: "memory_id", limit: 5, lengthPrior: 0 }).map(
      (h) => h.id,
    );
    const withContext = rankLexical(db, "auth", {
      table: "memory_fts",
      idColumn: "memory_id",
      limit: 5,
      lengthPrior: 0,
      ...memoryContext(db),
    }).map((h) => h.id);
    expect(plain[0]).toBe("mentions");
    expect(withContext[0]).toBe("about");
  });

  test("works on a read-only connection (the fts5vocab helper lives in temp)", () => {
    const { root, db, add } = project();
    add("a", "recipe", "migrate_db", "Run migrations with sqrl migrate before starting the daemon");
    db.close();
    const ro = openProjectDb(root, { readonly: true });
    try {
      expect(
        rankLexical(ro, "migration", {
          table: "memory_fts",
          idColumn: "memory_id",
          limit: 3,
          ...memoryContext(ro),
        }).map((h) => h.id),
      ).toEqual(["a"]);
    } finally {
      ro.close();
    }
  });
});
