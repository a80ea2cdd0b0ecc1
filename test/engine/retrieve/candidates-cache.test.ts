/**
 * loadItems remembers rows per connection: what the engine writes through another connection
 * (updates, supersedes, new items) is seen on the next call; rows are shared, so they are frozen;
 * project, validity and type filters still apply.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { loadItems } from "../../../src/engine/retrieve/rank/candidates.ts";
import { supersedeMemoryItem, updateMemoryItem } from "../../../src/sql/memory-items.ts";
import { openProjectDb } from "../../../src/sql/open.ts";
import { addItem, tempProject } from "./helpers.ts";

let p: ReturnType<typeof tempProject>;
const NOW = Date.parse("2026-11-01T12:00:00.000Z");
beforeEach(() => {
  p = tempProject();
});
afterEach(() => p.cleanup());

test("another connection's update, supersede and insert are seen on the next call", () => {
  const a = addItem(p.db, p.root, { type: "project_fact", key: "db", content: "Postgres 15 via prisma" }, NOW);
  const b = addItem(p.db, p.root, { type: "pitfall", key: "tz", content: "Dates are stored in UTC" }, NOW);
  expect(
    loadItems(p.db, p.root, [a.id, b.id])
      .map((i) => i.content)
      .sort(),
  ).toEqual(["Dates are stored in UTC", "Postgres 15 via prisma"]);

  const engine = openProjectDb(p.root); // the writer: another connection, like process-events
  updateMemoryItem(engine, a.id, { content: "Postgres 16 via prisma", updated_at: "2026-11-02T00:00:00.000Z" });
  supersedeMemoryItem(engine, b.id, null, null, "2026-11-02T00:00:00.000Z");
  const c = addItem(engine, p.root, { type: "recipe", key: "migrate", content: "Run bun run db:migrate" }, NOW);
  engine.close();

  expect(
    loadItems(p.db, p.root, [a.id, b.id, c.id])
      .map((i) => i.content)
      .sort(),
  ).toEqual(["Postgres 16 via prisma", "Run bun run db:migrate"]);
});

test("rows are shared between calls and frozen; filters by project, validity and type apply", () => {
  const a = addItem(p.db, p.root, { type: "project_fact", key: "db", content: "Postgres", tags: ["db"] }, NOW);
  const first = loadItems(p.db, p.root, [a.id])[0]!;
  const again = loadItems(p.db, p.root, [a.id, "mem_missing"])[0]!;
  expect(again).toBe(first);
  expect(Object.isFrozen(first)).toBe(true);
  expect(Object.isFrozen(first.tags)).toBe(true);
  expect(() => {
    (first as { content: string }).content = "changed";
  }).toThrow();
  expect(loadItems(p.db, p.root, [a.id], ["pitfall"])).toEqual([]);
  expect(loadItems(p.db, "/some/other/project", [a.id])).toEqual([]);
});
