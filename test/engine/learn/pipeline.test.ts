import type { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { listEpisodes } from "../../../src/sql/episodes.ts";
import { currentItems, getMemoryItem, predecessors } from "../../../src/sql/memory-items.ts";
import { getUserStyle, listUserStyle, userStyleHistory } from "../../../src/sql/user-style.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { effectiveStyle } from "../../../src/engine/learn/apply/user-style-store.ts";
import {
  fixtureEvents,
  request,
  sandbox,
  store,
  transcriptEvents,
  TRANSCRIPTS,
  USER,
  type Sandbox,
} from "./helpers.ts";

let boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes) b.cleanup();
  boxes = [];
});
function box(): Sandbox {
  const b = sandbox();
  boxes.push(b);
  return b;
}

/** Every row of the tables processing writes, for before/after comparison. */
function snapshot(db: Database): string {
  const tables = [
    "events",
    "episodes",
    "episode_events",
    "episode_state",
    "memory_items",
    "memory_meta",
    "memory_fts",
    "episode_fts",
  ];
  return JSON.stringify(tables.map((t) => db.query(`SELECT * FROM ${t} ORDER BY 1, 2`).all()));
}

const at = (iso: string) => () => Date.parse(iso);

describe("episodes", () => {
  test("a gap over 20 minutes splits; a short segment keeps growing into the next instead of standing alone", async () => {
    const b = box();
    await processEvents(request(b.root, fixtureEvents("gaps", b.root)), b.deps());
    const eps = listEpisodes(b.db, b.root);
    expect(eps.map((e) => e.event_count)).toEqual([3, 6]);
    expect(eps[0]!.end_ts).toBe("2026-03-02T09:00:20.000Z");
    expect(eps[1]!.start_ts).toBe("2026-03-02T09:25:00.000Z");
  });

  test("a short tail after a gap is merged into the episode before it", async () => {
    const b = box();
    await processEvents(request(b.root, fixtureEvents("tail", b.root)), b.deps());
    const eps = listEpisodes(b.db, b.root);
    expect(eps.length).toBe(1);
    expect(eps[0]!.event_count).toBe(6);
    expect(eps[0]!.end_ts).toBe("2026-03-02T09:33:30.000Z");
  });

  test("an open episode grows with later batches and is extracted once, when it closes", async () => {
    const b = box();
    const events = fixtureEvents("pitfall-fixed", b.root);
    const first = events.slice(0, 5);
    const r1 = await processEvents(request(b.root, first), b.deps({ now: at("2026-03-02T09:01:00Z") }));
    let eps = listEpisodes(b.db, b.root);
    expect(eps.length).toBe(1);
    expect(eps[0]!.status).toBe("open");
    expect(eps[0]!.summary).toContain('Goal: "the date formatting test is failing');
    expect(r1.memory_item_ids).toEqual([]);
    const r2 = await processEvents(request(b.root, events.slice(5)), b.deps({ now: at("2026-03-02T09:05:00Z") }));
    eps = listEpisodes(b.db, b.root);
    expect(eps.length).toBe(1);
    expect(eps[0]!.event_count).toBe(events.length);
    expect(eps[0]!.status).toBe("open");
    expect(r2.episode_ids).toEqual([eps[0]!.id]);
    const r3 = await processEvents(request(b.root, []), b.deps({ now: at("2026-03-02T09:30:00Z") }));
    eps = listEpisodes(b.db, b.root);
    expect(eps[0]!.status).toBe("closed");
    expect(r3.memory_item_ids.length).toBeGreaterThan(0);
    expect(currentItems(b.db, b.root, ["pitfall"]).length).toBe(1);
    const again = await processEvents(request(b.root, []), b.deps({ now: at("2026-03-03T00:00:00Z") }));
    expect(again.memory_item_ids).toEqual([]);
  });

  test.skipIf(!existsSync(TRANSCRIPTS))(
    "a backfill sent in small batches does not cut episodes at batch boundaries",
    async () => {
      const b = box();
      const events = transcriptEvents("claude-code/entireio-cli/b1/5d3b4e29e9/0/full.jsonl", "claude", b.root);
      store(b.db, events); // the daemon stores everything first, then sends batches of unprocessed events
      for (let i = 0; i < events.length; i += 10)
        await processEvents(request(b.root, events.slice(i, i + 10)), b.deps());
      const eps = listEpisodes(b.db, b.root);
      expect(eps.length).toBe(1);
      expect(eps[0]!.event_count).toBe(events.length);
      // Extracted once, whole: the user's refusal of the ignore directive (late in the session) is there once.
      expect(currentItems(b.db, b.root, ["user_style"]).filter((i) => i.key === "no_lint_suppression").length).toBe(1);
    },
  );
});

describe("idempotency", () => {
  test("the same batch twice changes nothing", async () => {
    const b = box();
    const events = [
      ...fixtureEvents("pitfall-fixed", b.root),
      ...fixtureEvents("habits", b.root),
      ...fixtureEvents("preferences", b.root),
    ];
    const r1 = await processEvents(request(b.root, events), b.deps());
    expect(r1.memory_item_ids.length).toBeGreaterThan(5);
    const before = snapshot(b.db);
    const u = b.userDb();
    const userBefore = JSON.stringify(listUserStyle(u, USER));
    u.close();
    const r2 = await processEvents(request(b.root, events), b.deps());
    expect(r2.episode_ids.sort()).toEqual(r1.episode_ids.sort());
    expect(r2.memory_item_ids).toEqual([]);
    expect(snapshot(b.db)).toBe(before);
    const u2 = b.userDb();
    expect(JSON.stringify(listUserStyle(u2, USER))).toBe(userBefore);
    u2.close();
  });

  test("a batch from another project is refused before anything is written", async () => {
    const b = box();
    const events = fixtureEvents("habits", "/somewhere/else");
    await expect(processEvents(request(b.root, events), b.deps())).rejects.toMatchObject({ code: "bad_request" });
    expect(listEpisodes(b.db, b.root)).toEqual([]);
  });
});

function prefSession(root: string, session: string, startIso: string, text: string): EventDTO[] {
  const base = Date.parse(startIso);
  const mk = (i: number, type: EventDTO["event_type"], content: object): EventDTO => ({
    id: `evt_${session}_${i}`,
    project_id: root,
    user_id: USER,
    source_tool: "claude_code",
    session_id: session,
    timestamp: new Date(base + i * 10_000).toISOString(),
    event_type: type,
    content_json: JSON.stringify(content),
    file_paths: [],
    hash: `h_${session}_${i}`,
    processed_at: null,
  });
  return [
    mk(0, "user_message", { text }),
    mk(1, "assistant_response", { text: "Noted." }),
    mk(2, "user_message", { text: "thanks" }),
  ];
}

describe("updates (supersede, never destroy)", () => {
  test("npm → pnpm → bun: each contradiction supersedes the last; a repeat is a NOOP that refreshes", async () => {
    const b = box();
    const steps = [
      ["s1", "2026-03-01T10:00:00Z", "We use npm in this repo."],
      ["s2", "2026-03-02T10:00:00Z", "Use pnpm instead of npm."],
      ["s3", "2026-03-03T10:00:00Z", "Use bun instead of pnpm."],
    ] as const;
    const ids: string[] = [];
    for (const [s, ts, text] of steps) {
      await processEvents(
        request(b.root, prefSession(b.root, s, ts, text)),
        b.deps({ now: at("2026-04-01T00:00:00Z") }),
      );
      const cur = currentItems(b.db, b.root, ["user_style"]).filter((i) => i.key === "package_manager");
      expect(cur.length).toBe(1);
      ids.push(cur[0]!.id);
    }
    const [npm, pnpm, bun] = ids.map((id) => getMemoryItem(b.db, id)!);
    expect(bun!.content).toBe("Use bun instead of pnpm.");
    expect(bun!.decision).toBe("DELETE_AND_ADD");
    expect(predecessors(b.db, bun!.id).map((p) => p.id)).toEqual([pnpm!.id, npm!.id]);
    expect(npm!.deleted).toBe(true);
    expect(npm!.superseded_by).toBe(pnpm!.id);
    expect(npm!.valid_to).not.toBeNull();
    expect(pnpm!.superseded_by_episode).toBe(bun!.source_episode_id);
    // Near-duplicate later: NOOP — same row, newer updated_at, higher importance, evidence appended.
    await processEvents(
      request(b.root, prefSession(b.root, "s4", "2026-03-04T10:00:00Z", "Use bun instead of pnpm.")),
      b.deps({ now: at("2026-04-02T00:00:00Z") }),
    );
    const after = getMemoryItem(b.db, bun!.id)!;
    expect(after.deleted).toBe(false);
    // updated_at is when the repeat was observed (the episode's end), not when it was processed.
    expect(after.updated_at).toBe("2026-03-04T10:00:20.000Z");
    expect(after.updated_at > bun!.updated_at).toBe(true);
    expect(after.importance).toBeGreaterThan(bun!.importance);
    expect(after.evidence_episode_ids.length).toBe(2);
    expect(currentItems(b.db, b.root).filter((i) => i.key === "package_manager").length).toBe(1);
  });

  test("weaker habit evidence does not override a stated preference", async () => {
    const b = box();
    await processEvents(
      request(b.root, prefSession(b.root, "s1", "2026-03-01T10:00:00Z", "Use pnpm instead of npm.")),
      b.deps(),
    );
    const stated = currentItems(b.db, b.root).find((i) => i.key === "package_manager")!;
    // A later session that ran npm four times (install, test twice, lint).
    const npmRuns = fixtureEvents("habits", b.root, {
      baseMs: Date.parse("2026-03-05T10:00:00Z"),
      sessionPrefix: "x",
    }).map((e) => ({ ...e, content_json: e.content_json.replaceAll("pnpm", "npm") }));
    await processEvents(request(b.root, npmRuns), b.deps());
    const now = currentItems(b.db, b.root).find((i) => i.key === "package_manager")!;
    expect(now.id).toBe(stated.id);
    expect(now.content).toBe("Use pnpm instead of npm.");
  });

  test("user-scope preferences live in user.db, are shared across projects, and keep their history", async () => {
    const a = box();
    const b = box();
    const deps = (s: Sandbox) => s.deps({ openUserDb: a.userDb });
    await processEvents(request(a.root, fixtureEvents("preferences", a.root)), deps(a));
    const u = a.userDb();
    try {
      const keys = listUserStyle(u, USER)
        .map((i) => i.key)
        .sort();
      expect(keys).toEqual(["pref:add_comment_line", "pref:commit_directly_main", "pref:early_return_vs_nest_ifs"]);
      expect(currentItems(a.db, a.root).map((i) => i.key)).toContain("package_manager");
      expect(currentItems(a.db, a.root).map((i) => i.key)).not.toContain("pref:early_return_vs_nest_ifs");
      // The same preference seen in another project: one global item, evidence from both.
      await processEvents(request(b.root, fixtureEvents("preferences", b.root)), deps(b));
      const item = getUserStyle(u, USER, "pref:early_return_vs_nest_ifs")!;
      expect(new Set(item.evidence.map((e) => e.project_id))).toEqual(new Set([a.root, b.root]));
      // The opposite instruction later supersedes it; the old version moves to history.
      await processEvents(
        request(
          b.root,
          prefSession(
            b.root,
            "later",
            "2026-03-09T10:00:00Z",
            "Please stop adding comments to every line. Always add comments to every line.",
          ),
        ),
        deps(b),
      );
      const hist = userStyleHistory(u, USER, "pref:add_comment_line");
      expect(hist.length).toBe(1);
      expect(hist[0]!.content).toBe("Stop adding comments to every line.");
      expect(getUserStyle(u, USER, "pref:add_comment_line")!.content).toBe("Always add comments to every line.");
      expect(hist[0]!.superseded_by).toBe(getUserStyle(u, USER, "pref:add_comment_line")!.id);
    } finally {
      u.close();
    }
  });

  test("project style overrides global style on the same key", async () => {
    const b = box();
    await processEvents(
      request(
        b.root,
        prefSession(b.root, "g", "2026-03-01T10:00:00Z", "Always use early returns instead of nested ifs."),
      ),
      b.deps(),
    );
    await processEvents(
      request(
        b.root,
        prefSession(b.root, "p", "2026-03-02T10:00:00Z", "In this repo we prefer nested ifs over early returns."),
      ),
      b.deps(),
    );
    const u = b.userDb();
    try {
      const eff = effectiveStyle(b.db, u, b.root, USER).filter((i) => i.key === "pref:early_return_vs_nest_ifs");
      expect(eff.length).toBe(1);
      expect(eff[0]!.scope).toBe("project");
      expect(eff[0]!.content).toBe("In this repo we prefer nested ifs over early returns.");
      expect(getUserStyle(u, USER, "pref:early_return_vs_nest_ifs")!.content).toBe(
        "Always use early returns instead of nested ifs.",
      );
    } finally {
      u.close();
    }
  });
});
