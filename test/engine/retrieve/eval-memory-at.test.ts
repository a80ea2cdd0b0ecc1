/**
 * The parts of `sqrl eval` on hand-made rows (issue 27): the memory as it stood at a moment (what
 * stood, what a later session added taken back) and what a session needed (met by its extraction on
 * the same subject or lineage, or anchored to what its failures and fixes touched).
 */
import { afterEach, expect, test } from "bun:test";
import { allVersions, MemoryAt } from "../../../src/engine/retrieve/eval/memory-at.ts";
import { NeedIndex } from "../../../src/engine/retrieve/eval/needed.ts";
import type { ReplaySession } from "../../../src/engine/retrieve/eval/sessions.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { getMemoryItem, insertMemoryItem, supersedeMemoryItem } from "../../../src/sql/memory-items.ts";
import { sandbox, type Sandbox } from "../learn/helpers.ts";

const T0 = Date.parse("2026-03-02T09:00:00Z");
const H = 3_600_000;
let sb: Sandbox | undefined;
afterEach(() => {
  sb?.cleanup();
  sb = undefined;
});

function add(
  s: Sandbox,
  id: string,
  hour: number,
  extra: { key?: string; content?: string; evidence?: string[]; paths?: string[]; importance?: number } = {},
) {
  const at = nowIso(T0 + hour * H);
  return insertMemoryItem(s.db, {
    id,
    project_id: s.root,
    user_id: null,
    scope: "project",
    type: "pitfall",
    key: extra.key ?? `pitfall:${id}`,
    content: extra.content ?? `Item ${id} about the deploy script.`,
    tags: [],
    importance: extra.importance ?? 0.6,
    created_at: at,
    updated_at: at,
    source_episode_id: extra.evidence?.[0] ?? null,
    source_event_ids: [],
    confidence: 0.7,
    file_paths: extra.paths ?? [],
    evidence_episode_ids: extra.evidence ?? [],
    decision: "ADD_NEW",
    extractor: "offline",
  });
}

function session(id: string, hour: number, episodes: string[], touched: Partial<ReplaySession["touched"]> = {}) {
  return {
    sessionId: id,
    startTs: nowIso(T0 + hour * H),
    startMs: T0 + hour * H,
    episodeIds: episodes,
    request: "fix it",
    files: [],
    touched: {
      files: touched.files ?? new Set<string>(),
      identifiers: touched.identifiers ?? new Set<string>(),
      scripts: touched.scripts ?? new Set<string>(),
    },
  } satisfies ReplaySession;
}

test("the memory at a moment: items valid from before it and not ended by it, later evidence and its importance taken back until its time", () => {
  sb = sandbox();
  const s = sb;
  add(s, "a", 1, { evidence: ["e1", "e5"], importance: 0.7 }); // e5 (hour 5) confirmed it later
  add(s, "b", 2, { evidence: ["e2"] });
  add(s, "c", 4, { evidence: ["e4"] });
  supersedeMemoryItem(s.db, "b", "c", "e4", nowIso(T0 + 4 * H)); // c replaced b at hour 4
  const starts = new Map([
    ["e1", T0 + 1 * H],
    ["e2", T0 + 2 * H],
    ["e4", T0 + 4 * H],
    ["e5", T0 + 5 * H],
  ]);
  const mem = new MemoryAt(s.root, allVersions(s.db, s.root), starts);
  try {
    mem.advance(T0 + 3 * H);
    expect([...mem.ids()].sort()).toEqual(["a", "b"]);
    const a = getMemoryItem(mem.db, "a")!;
    expect(a.evidence_episode_ids).toEqual(["e1"]);
    expect(a.importance).toBe(0.65);
    // The FTS index of the rebuild holds exactly what stood.
    const hits = mem.db.query(`SELECT memory_id FROM memory_fts WHERE memory_fts MATCH 'deploy'`).all() as Array<{
      memory_id: string;
    }>;
    expect(hits.map((h) => h.memory_id).sort()).toEqual(["a", "b"]);
    mem.advance(T0 + 6 * H);
    expect([...mem.ids()].sort()).toEqual(["a", "c"]);
    // What confirmed a standing item meanwhile comes back with the time (the ranker counts the sessions that met it).
    expect(getMemoryItem(mem.db, "a")!.evidence_episode_ids).toEqual(["e1", "e5"]);
    expect(getMemoryItem(mem.db, "a")!.importance).toBe(0.7);
    expect(() => mem.advance(T0)).toThrow();
  } finally {
    mem.close();
  }
  // The project's own rows are untouched.
  expect(getMemoryItem(s.db, "a")!.evidence_episode_ids).toEqual(["e1", "e5"]);
  expect(getMemoryItem(s.db, "b")!.deleted).toBe(true);
});

test("an item a later episode's item replaced ended with that episode, though the pass that replaced it ran days later (a backfill)", () => {
  sb = sandbox();
  const s = sb;
  add(s, "old", 1, { evidence: ["e1"] });
  add(s, "new", 5, { evidence: ["e5"] });
  supersedeMemoryItem(s.db, "old", "new", "e5", nowIso(T0 + 100 * H)); // the pass ran at hour 100
  const ends = new Map([
    ["e1", T0 + 1.5 * H],
    ["e5", T0 + 5.5 * H],
  ]);
  const byId = (v: ReturnType<typeof allVersions>) => new Map(v.map((x) => [x.item.id, x.toMs]));
  expect(byId(allVersions(s.db, s.root, ends)).get("old")).toBe(T0 + 5.5 * H);
  expect(byId(allVersions(s.db, s.root)).get("old")).toBe(T0 + 100 * H); // without episode ends: the pass time
  const mem = new MemoryAt(s.root, allVersions(s.db, s.root, ends), new Map());
  try {
    mem.advance(T0 + 8 * H);
    expect([...mem.ids()]).toEqual(["new"]); // not both wordings side by side
  } finally {
    mem.close();
  }
});

test("an item that lost the pass its own episode brought (the older one stayed) never stood in the replay", () => {
  sb = sandbox();
  const s = sb;
  add(s, "right", 1, { evidence: ["e1"] });
  add(s, "wrong", 5, { evidence: ["e5"] }); // created when e5 ended
  supersedeMemoryItem(s.db, "wrong", "right", "e5", nowIso(T0 + 100 * H));
  const ends = new Map([
    ["e1", T0 + 1 * H],
    ["e5", T0 + 5 * H],
  ]);
  const mem = new MemoryAt(s.root, allVersions(s.db, s.root, ends), new Map());
  try {
    mem.advance(T0 + 8 * H);
    expect([...mem.ids()]).toEqual(["right"]);
  } finally {
    mem.close();
  }
});

test("needed: met by the session's extraction (evidence, same key, a later version), or anchored to what its failures touched", () => {
  sb = sandbox();
  const s = sb;
  add(s, "confirmed", 1, { evidence: ["e1", "k1"] });
  add(s, "same-key", 1, { key: "pitfall:shared", evidence: ["e1"] });
  add(s, "k-new", 10, { key: "pitfall:shared", evidence: ["k1"] }); // k stored another item on that key
  add(s, "replaced", 1, { evidence: ["e1"] });
  add(s, "successor", 12, { evidence: ["e1", "k2"] });
  supersedeMemoryItem(s.db, "replaced", "successor", null, nowIso(T0 + 12 * H));
  add(s, "by-file", 1, { evidence: ["e1"], paths: ["scripts/deploy.sh"] });
  add(s, "by-script", 1, { evidence: ["e1"], content: "Run `npm run migrate` before the tests." });
  add(s, "unrelated", 1, { evidence: ["e1"], paths: ["docs/other.md"] });
  const versions = allVersions(s.db, s.root);
  const anchors = new Map(
    versions.map((v) => [
      v.item.id,
      {
        files: new Set(v.item.file_paths),
        identifiers: new Set<string>(),
        scripts: new Set(v.item.content.includes("npm run migrate") ? ["migrate"] : []),
      },
    ]),
  );
  const index = new NeedIndex(versions, anchors);
  const k = session("k", 9, ["k1", "k2"], { files: new Set(["scripts/deploy.sh"]), scripts: new Set(["migrate"]) });
  const standing = new Set(["confirmed", "same-key", "replaced", "by-file", "by-script", "unrelated"]);
  const needed = index.needed(k, standing);
  expect(Object.fromEntries([...needed].sort())).toEqual({
    "by-file": "anchor_touched",
    "by-script": "anchor_touched",
    confirmed: "met_by_extraction",
    replaced: "met_by_extraction",
    "same-key": "met_by_extraction",
  });
  // Another session that met none of them and touched nothing needs nothing.
  expect(index.needed(session("j", 9, ["j1"]), standing).size).toBe(0);
});
