import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forgetMemory } from "../../../src/engine/learn/forget.ts";
import {
  exportMemory,
  importMemory,
  parsePortableLines,
  portableHash,
} from "../../../src/engine/learn/memory-transfer.ts";
import { syncProject } from "../../../src/engine/learn/team-sync.ts";
import { currentItems, getMemoryItem, insertMemoryItem, type NewMemoryItem } from "../../../src/sql/memory-items.ts";
import { openDatabase } from "../../../src/sql/open.ts";
import { insertUserStyle, listUserStyle, userStyleHistory } from "../../../src/sql/user-style.ts";
import { isolatedEnv, runSqrl, tempDir } from "../../helpers/sqrl.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

function project(name: string): { root: string; db: Database } {
  const root = join(dir.path, name);
  mkdirSync(join(root, ".ctx"), { recursive: true });
  return { root, db: openDatabase(join(root, ".ctx", "data.db"), "data") };
}

let n = 0;
function item(root: string, over: Partial<NewMemoryItem>): NewMemoryItem {
  n++;
  return {
    id: `mem_t${n}`,
    project_id: root,
    user_id: null,
    scope: "project",
    type: "project_fact",
    key: `k${n}`,
    content: `content ${n}`,
    tags: [],
    importance: 0.6,
    created_at: "2026-11-01T00:00:00.000Z",
    updated_at: "2026-11-01T00:00:00.000Z",
    source_episode_id: "ep_1",
    source_event_ids: ["evt_1"],
    confidence: 0.7,
    file_paths: [],
    evidence_episode_ids: ["ep_1"],
    decision: "ADD_NEW",
    extractor: "offline",
    ...over,
  };
}

describe("export and import", () => {
  test("round trip: valid items only, merged through the update rules", () => {
    const a = project("a");
    insertMemoryItem(a.db, item(a.root, { key: "package_manager", content: "Uses pnpm as the package manager." }));
    insertMemoryItem(
      a.db,
      item(a.root, {
        type: "pitfall",
        key: "pitfall:jwt-exp",
        content: "isExpired crashed on tokens without exp; guard payload.exp.",
        file_paths: ["src/auth/jwt.ts"],
      }),
    );
    const gone = insertMemoryItem(a.db, item(a.root, { key: "old", content: "stale" }));
    forgetMemory(a.db, null, gone.id, "2026-11-02T00:00:00.000Z");
    const exported = exportMemory(a.db, a.root);
    expect(exported.map((e) => e.key).sort()).toEqual(["package_manager", "pitfall:jwt-exp"]);
    const text = exported.map((e) => JSON.stringify(e)).join("\n");

    const b = project("b");
    const first = importMemory(b.db, b.root, parsePortableLines(text, "x.jsonl"), { userId: "u" });
    expect(first.map((o) => o.verb)).toEqual(["ADD_NEW", "ADD_NEW"]);
    const again = importMemory(b.db, b.root, parsePortableLines(text, "x.jsonl"), { userId: "u" });
    expect(again.map((o) => o.verb)).toEqual(["NOOP", "NOOP"]);
    expect(currentItems(b.db, b.root).length).toBe(2);
    const pit = currentItems(b.db, b.root, ["pitfall"])[0]!;
    expect(pit.file_paths).toEqual(["src/auth/jwt.ts"]);
    expect(pit.extractor).toBe("import");
    a.db.close();
    b.db.close();
  });

  test("a bad line names the file, line and field, and nothing is imported", () => {
    const good = JSON.stringify({
      format: "sqrl-memory/1",
      type: "project_fact",
      key: "k",
      scope: "project",
      content: "c",
      importance: 0.5,
      created_at: "t",
      updated_at: "t",
      origin: { item_id: "i", project_id: null, user_id: null },
    });
    expect(() => parsePortableLines(`${good}\n{"format":"sqrl-memory/1","type":"fact"}\n`, "in.jsonl")).toThrow(
      /in.jsonl:2: field `type`/,
    );
    expect(() => parsePortableLines("nope", "in.jsonl")).toThrow(/in.jsonl:1 is not valid JSON/);
  });
});

describe("forget", () => {
  test("a project item leaves the valid set but keeps its history", () => {
    const a = project("a");
    const it = insertMemoryItem(a.db, item(a.root, { content: "Uses Hono." }));
    const res = forgetMemory(a.db, null, it.id, "2026-11-03T00:00:00.000Z");
    expect(res.scope).toBe("project");
    expect(currentItems(a.db, a.root).length).toBe(0);
    const row = getMemoryItem(a.db, it.id)!;
    expect(row.deleted).toBe(true);
    expect(row.valid_to).toBe("2026-11-03T00:00:00.000Z");
    expect(row.superseded_by).toBeNull();
    expect(a.db.query("SELECT COUNT(*) AS n FROM memory_fts WHERE memory_fts MATCH 'hono'").get()).toEqual({ n: 0 });
    expect(() => forgetMemory(a.db, null, it.id, "t")).toThrow(/no longer valid/);
    expect(() => forgetMemory(a.db, null, "mem_nope", "t")).toThrow(/No memory with id mem_nope/);
    a.db.close();
  });

  test("a global style item moves to history", () => {
    const userDb = openDatabase(join(dir.path, "user.db"), "user");
    insertUserStyle(userDb, {
      id: "ust_1",
      user_id: "u",
      key: "exports",
      content: "Named exports only.",
      tags: [],
      importance: 0.7,
      created_at: "t",
      updated_at: "t",
      source: "offline",
      confidence: 0.8,
      evidence: [],
    });
    const res = forgetMemory(null, userDb, "ust_1", "2026-11-03T00:00:00.000Z");
    expect(res.scope).toBe("user");
    expect(listUserStyle(userDb, "u")).toEqual([]);
    expect(userStyleHistory(userDb, "u", "exports")[0]?.decision).toBe("FORGET");
    userDb.close();
  });
});

describe("sync through .ctx/shared", () => {
  test("two clones converge: export, merge, and prune superseded files", () => {
    // Alice and Bob share one repo folder layout; .ctx/shared is what git carries between them.
    const alice = project("alice");
    const bob = project("bob");
    const shared = (root: string) => join(root, ".ctx", "shared");
    const copyShared = (from: string, to: string) => {
      rmSync(shared(to), { recursive: true, force: true });
      if (!existsSync(shared(from))) return;
      for (const e of readdirSync(shared(from), { recursive: true, withFileTypes: true })) {
        if (!e.isFile()) continue;
        const rel = join(e.parentPath, e.name).slice(shared(from).length);
        mkdirSync(join(shared(to), rel, ".."), { recursive: true });
        writeFileSync(join(shared(to), rel), readFileSync(join(e.parentPath, e.name)));
      }
    };
    insertMemoryItem(alice.db, item(alice.root, { key: "framework", content: "Framework: Hono." }));
    insertMemoryItem(
      alice.db,
      item(alice.root, { scope: "user", user_id: "alice", type: "user_style", key: "tabs", content: "Prefers tabs." }),
    );
    const r1 = syncProject(alice.db, alice.root, { userId: "alice" });
    expect(r1.exported.length).toBe(1); // user-scope style stays personal
    expect(r1.exported[0]).toMatch(/^\.ctx\/shared\/project_fact\/framework-[0-9a-f]{12}\.json$/);
    expect(syncProject(alice.db, alice.root, { userId: "alice" }).exported.length).toBe(0); // idempotent

    copyShared(alice.root, bob.root); // git push / pull
    const r2 = syncProject(bob.db, bob.root, { userId: "bob" });
    expect(r2.imported.map((o) => o.verb)).toEqual(["ADD_NEW"]);
    expect(currentItems(bob.db, bob.root).map((i) => i.content)).toEqual(["Framework: Hono."]);

    // Bob's project moves to Fastify: his newer fact supersedes the shared one.
    const hono = currentItems(bob.db, bob.root)[0]!;
    importMemory(
      bob.db,
      bob.root,
      [{ ...exportMemory(bob.db, bob.root)[0]!, content: "Framework: Fastify (replaced Hono)." }],
      { userId: "bob" },
    );
    expect(getMemoryItem(bob.db, hono.id)!.deleted).toBe(true);
    const r3 = syncProject(bob.db, bob.root, { userId: "bob" });
    expect(r3.pruned.length).toBe(1);
    expect(r3.exported.length).toBe(1);

    copyShared(bob.root, alice.root);
    const r4 = syncProject(alice.db, alice.root, { userId: "alice" });
    expect(r4.imported.length).toBe(1);
    expect(
      currentItems(alice.db, alice.root)
        .filter((i) => i.scope === "project")
        .map((i) => i.content),
    ).toEqual(["Framework: Fastify (replaced Hono)."]);
    const files = readdirSync(join(shared(alice.root), "project_fact"));
    expect(files.length).toBe(1);
    const onDisk = JSON.parse(readFileSync(join(shared(alice.root), "project_fact", files[0]!), "utf8"));
    expect(portableHash(onDisk)).toStartWith(files[0]!.split("-").at(-1)!.replace(".json", ""));
    alice.db.close();
    bob.db.close();
  });
});

describe("CLI (compiled binary)", () => {
  test("nothing meant to leave the machine carries a local absolute path, a home folder or a time travel", () => {
    const env = isolatedEnv(dir.path);
    const a = join(dir.path, "pa");
    mkdirSync(join(a, ".git"), { recursive: true });
    expect(runSqrl(["init", a, "--yes", "--no-backfill"], { env }).code).toBe(0);
    const db = openDatabase(join(a, ".ctx", "data.db"), "data");
    insertMemoryItem(
      db,
      item(a, {
        type: "pitfall",
        key: "pitfall:build",
        content: `The build failed in ${a}/src/build.ts; the fix lives in /Users/bob/notes/fix.md and /home/carol/.config/tool.json.`,
        file_paths: [`${a}/src/build.ts`, "src/other.ts"],
        created_at: "2026-11-02T00:00:00.000Z",
        updated_at: "2026-11-01T00:00:00.000Z",
      }),
    );
    db.close();
    const exported = runSqrl(["export", "--project", a], { env });
    expect(exported.code).toBe(0);
    expect(runSqrl(["sync", "--project", a], { env }).code).toBe(0);
    const sharedDir = join(a, ".ctx", "shared");
    const teamFiles = readdirSync(sharedDir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"));
    expect(teamFiles.length).toBe(1);
    for (const text of [exported.stdout, ...teamFiles]) {
      expect(text).not.toContain(dir.path);
      expect(text).not.toMatch(/\/Users\/bob|\/home\/carol/);
      // A team file is one pretty-printed item; the export is JSON Lines (one item here).
      const m = JSON.parse(text.trim().startsWith("{\n") ? text : text.trim().split("\n")[0]!) as {
        content: string;
        file_paths: string[];
        created_at: string;
        updated_at: string;
        origin: { project_id: string };
      };
      expect(m.content).toBe(
        "The build failed in src/build.ts; the fix lives in ~/notes/fix.md and ~/.config/tool.json.",
      );
      expect(m.file_paths).toEqual(["src/build.ts", "src/other.ts"]);
      expect(m.origin.project_id).toBe("pa");
      expect(m.updated_at >= m.created_at).toBe(true);
    }
  });

  test("export | import between projects, forget, sync; bad files exit with a clear line", () => {
    const env = isolatedEnv(dir.path);
    const a = join(dir.path, "pa");
    const b = join(dir.path, "pb");
    mkdirSync(join(a, ".git"), { recursive: true });
    mkdirSync(join(b, ".git"), { recursive: true });
    expect(runSqrl(["init", a, "--yes", "--no-backfill"], { env }).code).toBe(0);
    expect(runSqrl(["init", b, "--yes", "--no-backfill"], { env }).code).toBe(0);
    expect(readFileSync(join(a, ".gitignore"), "utf8")).toContain("!.ctx/shared/");
    const db = openDatabase(join(a, ".ctx", "data.db"), "data");
    const it = insertMemoryItem(db, item(a, { key: "test_command", content: "Run tests with `pnpm vitest run`." }));
    db.close();

    const out = join(dir.path, "mem.jsonl");
    expect(runSqrl(["export", "--project", a, "-o", out], { env }).code).toBe(0);
    const imp = runSqrl(["import", out, "--project", b], { env });
    expect(imp.code).toBe(0);
    expect(imp.stdout).toContain("1 ADD_NEW");

    const sync = runSqrl(["sync", "--project", a, "--json"], { env });
    expect(sync.code).toBe(0);
    expect((JSON.parse(sync.stdout) as { exported: string[] }).exported.length).toBe(1);

    const forget = runSqrl(["forget", it.id, "--project", a], { env });
    expect(forget.code).toBe(0);
    expect(forget.stdout).toContain(`Forgot ${it.id}`);
    const again = runSqrl(["forget", it.id, "--project", a], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no longer valid");

    writeFileSync(out, "garbage\n");
    const bad = runSqrl(["import", out, "--project", b], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("mem.jsonl:1 is not valid JSON");
  });
});
