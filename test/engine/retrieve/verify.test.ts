/**
 * Memories checked against today's code (issue 15) in a real git repository: anchors recorded where
 * memories are stored, then the code changes under them — a function renamed, a file deleted, the fix
 * reverted, another branch checked out — and task_context, the views and search serve what is true.
 * Bad input (binary, > 10 MB, no repository, detached HEAD, shallow clone) degrades to unverifiable.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { followMoves } from "../../../src/engine/learn/apply/follow-moves.ts";
import { recordAnchors } from "../../../src/engine/learn/apply/record-anchors.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { searchMemory } from "../../../src/engine/retrieve/search.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { clearVerificationCache, verifyItems } from "../../../src/engine/retrieve/verify/verify.ts";
import { pitfallsView } from "../../../src/engine/retrieve/views/pitfalls.ts";
import { projectBriefView } from "../../../src/engine/retrieve/views/project-brief.ts";
import { SearchQuery, TaskContextRequest, ViewQuery } from "../../../src/shared/api.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { nowIso } from "../../../src/shared/time.ts";
import { anchorJsonOf } from "../../../src/sql/memory-anchors.ts";
import { getMemoryItem } from "../../../src/sql/memory-items.ts";
import { openProjectDb } from "../../../src/sql/open.ts";
import { addItem, tempProject } from "./helpers.ts";
import { commitAll, git, initRepo, JWT_TS, JWT_TS_BUGGY, writeFile } from "./git-repo.ts";

const NOW = Date.now();
let p: ReturnType<typeof tempProject>;

beforeEach(() => {
  clearVerificationCache();
  p = tempProject("sqrl-verify-");
});
afterEach(() => p.cleanup());

function commitEvent(sha: string, files: string[]): EventDTO {
  return {
    id: `ev_commit_${sha.slice(0, 7)}`,
    project_id: p.root,
    user_id: "alice",
    source_tool: "git",
    session_id: null,
    timestamp: nowIso(NOW),
    event_type: "git_commit",
    content_json: JSON.stringify({
      commit: { hash: sha, author: "Test", message: "fix", files, insertions: 1, deletions: 1 },
    }),
    file_paths: files,
    hash: `h_${sha}`,
    processed_at: null,
  };
}

const PITFALL =
  "Tokens without `exp` made `isExpired` throw in src/auth/jwt.ts; fixed by treating a missing exp as never expiring.";

/** The repo with the buggy code, then the fix commit; a pitfall anchored on the fix. */
function repoWithFixedPitfall(): { fix: string; id: string } {
  initRepo(p.root);
  writeFile(p.root, "src/auth/jwt.ts", JWT_TS_BUGGY);
  writeFile(p.root, "src/auth/types.ts", "export interface Token { exp?: number }\n");
  commitAll(p.root, "jwt helpers");
  writeFile(p.root, "src/auth/jwt.ts", JWT_TS);
  const fix = commitAll(p.root, "Treat a missing exp as never expiring");
  const item = addItem(
    p.db,
    p.root,
    {
      type: "pitfall",
      key: "jwt_missing_exp",
      content: PITFALL,
      file_paths: ["src/auth/jwt.ts"],
      tags: ["auth", "jwt"],
      importance: 0.8,
      extractor: "offline",
    },
    NOW,
  );
  recordAnchors(p.db, p.root, [item.id], [commitEvent(fix, ["src/auth/jwt.ts"])], "extract", NOW);
  return { fix, id: item.id };
}

const ctx = () => retrievalContext(p.db, p.root, { nowMs: NOW, userId: "alice" });
const task = (text: string) =>
  TaskContextRequest.parse({ project_id: p.root, task_description: text, active_file_paths: ["src/auth/jwt.ts"] });
const statusOf = (id: string) => {
  const item = p.db
    .query(
      "SELECT id, content, file_paths, updated_at FROM memory_items m JOIN memory_meta mm ON mm.memory_id = m.id WHERE id = ?",
    )
    .get(id) as { id: string; content: string; file_paths: string; updated_at: string };
  return verifyItems(p.root, p.db, [{ ...item, file_paths: JSON.parse(item.file_paths) as string[] }], NOW).get(id)!;
};

describe("anchors recorded where memories are stored", () => {
  test("files, identifiers with their line and fingerprint, and the fix commit are stored next to the item", () => {
    const { fix, id } = repoWithFixedPitfall();
    const anchor = JSON.parse(anchorJsonOf(p.db, [id]).get(id)!);
    expect(anchor.files).toEqual(["src/auth/jwt.ts"]);
    expect(anchor.symbols.map((s: { name: string }) => s.name)).toContain("isExpired");
    const sym = anchor.symbols.find((s: { name: string }) => s.name === "isExpired");
    expect(sym.path).toBe("src/auth/jwt.ts");
    expect(sym.line).toBe("export function isExpired(token: Token, now: number): boolean {");
    expect(sym.fingerprint).toMatch(/^[0-9a-f]{12}$/);
    expect(anchor.commit).toBe(fix);
    expect(anchor.head).toBe(fix);
    expect(anchor.branch).toBe("main");
    expect(statusOf(id).status).toBe("verified");
  });

  test("data.db migrates to the anchors table (one row per anchored memory, gone with its memory)", () => {
    const { id } = repoWithFixedPitfall();
    expect((p.db.query("SELECT COUNT(*) AS n FROM memory_anchors").get() as { n: number }).n).toBe(1);
    p.db.exec("PRAGMA foreign_keys = ON");
    p.db.query("DELETE FROM memory_meta WHERE memory_id = ?").run(id);
    p.db.query("DELETE FROM memory_items WHERE id = ?").run(id);
    expect((p.db.query("SELECT COUNT(*) AS n FROM memory_anchors").get() as { n: number }).n).toBe(0);
  });
});

describe("scenarios in a real git repository", () => {
  test("a function renamed: the memory is served as moved, with the new name", async () => {
    const { id } = repoWithFixedPitfall();
    writeFile(p.root, "src/auth/jwt.ts", JWT_TS.replace("isExpired", "hasExpired"));
    commitAll(p.root, "rename isExpired");
    const res = await taskContext(ctx(), task("isExpired throws for tokens without exp"));
    const m = res.selected_memories.find((s) => s.memory_id === id)!;
    expect(m.verification).toEqual({ status: "moved", reason: "`isExpired` is now `hasExpired` in src/auth/jwt.ts" });
    expect(m.content).toContain("`hasExpired`");
    expect(m.content).not.toContain("isExpired");
    expect(m.reason).toContain("moved");
    expect(res.markdown).toContain("hasExpired");
  });

  test("the engine's write path makes the move lasting: a new version with the new name and a fresh anchor, the old one kept", () => {
    const { id } = repoWithFixedPitfall();
    writeFile(p.root, "src/auth/jwt.ts", JWT_TS.replace("isExpired", "hasExpired"));
    commitAll(p.root, "rename isExpired");
    const made = followMoves(p.db, p.root, NOW, { force: true });
    expect(made).toHaveLength(1);
    const next = getMemoryItem(p.db, made[0]!)!;
    expect(next.content).toContain("`hasExpired`");
    expect(next.decision).toBe("UPDATE_EXISTING");
    expect(getMemoryItem(p.db, id)!.superseded_by).toBe(next.id);
    expect(JSON.parse(anchorJsonOf(p.db, [next.id]).get(next.id)!).commit).toBeTruthy();
    expect(statusOf(next.id).status).toBe("verified");
    expect(followMoves(p.db, p.root, NOW)).toEqual([]);
  });

  test("a file renamed with git mv: moved, served with the new path", async () => {
    const { id } = repoWithFixedPitfall();
    git(p.root, "mv", "src/auth/jwt.ts", "src/auth/token.ts");
    commitAll(p.root, "rename jwt.ts");
    const res = await taskContext(
      ctx(),
      TaskContextRequest.parse({ project_id: p.root, task_description: "isExpired throws for tokens without exp" }),
    );
    const m = res.selected_memories.find((s) => s.memory_id === id)!;
    expect(m.verification?.status).toBe("moved");
    expect(m.content).toContain("src/auth/token.ts");
    expect(m.content).not.toContain("src/auth/jwt.ts");
  });

  test("the file deleted: stale, held back from task_context and the core view, listed apart in full mode", async () => {
    const { id } = repoWithFixedPitfall();
    rmSync(join(p.root, "src/auth/jwt.ts"));
    commitAll(p.root, "drop jwt");
    expect(statusOf(id)).toMatchObject({ status: "stale" });
    expect(statusOf(id).reason).toContain("src/auth/jwt.ts no longer exists");
    const res = await taskContext(ctx(), task("isExpired throws for tokens without exp"));
    expect(res.memory_ids).not.toContain(id);
    const core = await pitfallsView(ctx(), ViewQuery.parse({ project_id: p.root }));
    expect(core.memory_ids).not.toContain(id);
    const full = await pitfallsView(ctx(), ViewQuery.parse({ project_id: p.root, mode: "full" }));
    expect(full.markdown).toContain("May be out of date (src/auth/jwt.ts no longer exists");
    expect(full.items[0]?.verification?.status).toBe("stale");
    const found = await searchMemory(ctx(), SearchQuery.parse({ project_id: p.root, query: "isExpired exp" }));
    expect(found.results[0]?.verification?.status).toBe("stale");
    expect(found.markdown).toContain("May be out of date");
  });

  test("an uncommitted deletion is seen at once (the cache follows the files, not only HEAD)", async () => {
    const { id } = repoWithFixedPitfall();
    expect(statusOf(id).status).toBe("verified");
    rmSync(join(p.root, "src/auth/jwt.ts"));
    expect(statusOf(id).status).toBe("stale");
    writeFile(p.root, "src/auth/jwt.ts", JWT_TS);
    expect(statusOf(id).status).toBe("verified");
  });

  test("the fix commit reverted: the pitfall is flagged stale, naming the revert", async () => {
    const { fix, id } = repoWithFixedPitfall();
    git(p.root, "revert", "--no-edit", fix);
    const revert = git(p.root, "rev-parse", "HEAD");
    const v = statusOf(id);
    expect(v.status).toBe("stale");
    expect(v.reason).toBe(`fix commit ${fix.slice(0, 7)} was reverted by ${revert.slice(0, 7)}`);
    const res = await taskContext(ctx(), task("isExpired throws for tokens without exp"));
    expect(res.memory_ids).not.toContain(id);
  });

  test("a branch that never merged: held back on main (task_context, search, views) until it is merged, then served", async () => {
    initRepo(p.root);
    writeFile(p.root, "README.md", "demo\n");
    commitAll(p.root, "init");
    git(p.root, "checkout", "-q", "-b", "feature");
    writeFile(
      p.root,
      "src/flags/rollout.ts",
      "export function rolloutPercent(flag: string): number {\n  return 10;\n}\n",
    );
    commitAll(p.root, "rollout flags");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "rollout",
        content: "Feature rollout percentages come from `rolloutPercent` in src/flags/rollout.ts.",
        file_paths: ["src/flags/rollout.ts"],
        importance: 0.7,
      },
      NOW,
    );
    recordAnchors(p.db, p.root, [item.id], [], "extract", NOW);
    expect(statusOf(item.id).status).toBe("verified");
    git(p.root, "checkout", "-q", "main");
    const v = statusOf(item.id);
    expect(v.status).toBe("stale");
    expect(v.reason).toBe("from branch feature, not merged: `rolloutPercent`, `src/flags/rollout.ts` are only there");
    const ask = TaskContextRequest.parse({
      project_id: p.root,
      task_description: "rollout percentages rolloutPercent",
    });
    expect((await taskContext(ctx(), ask)).memory_ids).not.toContain(item.id);
    const core = await projectBriefView(ctx(), ViewQuery.parse({ project_id: p.root }));
    expect(core.markdown).not.toContain("rolloutPercent");
    const full = await projectBriefView(ctx(), ViewQuery.parse({ project_id: p.root, mode: "full" }));
    expect(full.markdown).toContain("May be out of date (from branch feature, not merged");
    const found = await searchMemory(ctx(), SearchQuery.parse({ project_id: p.root, query: "rollout percentages" }));
    expect(found.results[0]?.verification?.reason).toStartWith("from branch feature, not merged");
    expect(found.markdown).toContain("May be out of date (from branch feature, not merged");
    // Merged: the code is on main now, and the memory is served as current.
    git(p.root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature");
    expect(statusOf(item.id).status).toBe("verified");
    expect((await taskContext(ctx(), ask)).memory_ids).toContain(item.id);
    const brief = await projectBriefView(ctx(), ViewQuery.parse({ project_id: p.root }));
    expect(brief.markdown).toContain("rolloutPercent");
  });

  test("a decision naming only a package folder the branch added: anchored, held back on main until merged", async () => {
    initRepo(p.root);
    writeFile(p.root, "README.md", "demo\n");
    commitAll(p.root, "init");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "decision:gitutil",
        tags: ["decision"],
        content: "Git helpers live in one package, `cmd/cli/gitutil`, so the hooks and the CLI share them.",
        importance: 0.7,
      },
      NOW,
    );
    // Stored while main is checked out (the session worked in another worktree): the folder is not here yet.
    recordAnchors(p.db, p.root, [item.id], [], "extract", NOW);
    const anchor = JSON.parse(anchorJsonOf(p.db, [item.id]).get(item.id)!);
    expect(anchor.names).toEqual(["cmd/cli/gitutil"]);
    git(p.root, "checkout", "-q", "-b", "gitutil");
    writeFile(p.root, "cmd/cli/gitutil/git.go", "package gitutil\n");
    commitAll(p.root, "gitutil package");
    git(p.root, "checkout", "-q", "main");
    expect(statusOf(item.id)).toMatchObject({
      status: "stale",
      reason: "from branch gitutil, not merged: `cmd/cli/gitutil` is only there",
    });
    git(p.root, "merge", "-q", "--no-ff", "-m", "merge gitutil", "gitutil");
    expect(statusOf(item.id).status).not.toBe("stale");
  });

  test("written on a branch since deleted, naming nothing its session wrote: unverifiable on this branch, still served", async () => {
    initRepo(p.root);
    writeFile(p.root, "README.md", "demo\n");
    commitAll(p.root, "init");
    git(p.root, "checkout", "-q", "-b", "spike");
    writeFile(p.root, "src/flags/rollout.ts", "export const rolloutPercent = 10;\n");
    commitAll(p.root, "spike");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "rollout",
        content: "Feature rollout percentages come from `rolloutPercent` in src/flags/rollout.ts.",
        file_paths: ["src/flags/rollout.ts"],
      },
      NOW,
    );
    recordAnchors(p.db, p.root, [item.id], [], "extract", NOW);
    git(p.root, "checkout", "-q", "main");
    git(p.root, "branch", "-q", "-D", "spike");
    const v = statusOf(item.id);
    expect(v.status).toBe("unverifiable");
    expect(v.reason).toContain("unverifiable on this branch: written on branch spike");
  });

  test("code its own session wrote into a file that is here without it, on no branch: not landed", async () => {
    initRepo(p.root);
    writeFile(p.root, "cmd/cli/checkpoint.go", "package cli\n");
    commitAll(p.root, "init");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "checkpoint_lookup",
        content: "Commit messages of a checkpoint are found with `findCommitMessageByCheckpointID`.",
        importance: 0.7,
      },
      NOW,
    );
    const edit: EventDTO = {
      ...commitEvent("0000000", []),
      id: "ev_edit",
      source_tool: "claude_code",
      event_type: "code_change",
      content_json: JSON.stringify({
        tool: "Edit",
        input: {
          file_path: "cmd/cli/checkpoint.go",
          old_string: "",
          new_string: "func findCommitMessageByCheckpointID(id string) string {",
        },
      }),
      file_paths: ["cmd/cli/checkpoint.go"],
    };
    recordAnchors(p.db, p.root, [item.id], [edit], "extract", NOW);
    const anchor = JSON.parse(anchorJsonOf(p.db, [item.id]).get(item.id)!);
    expect(anchor.introduced).toEqual([{ name: "findCommitMessageByCheckpointID", path: "cmd/cli/checkpoint.go" }]);
    expect(statusOf(item.id)).toMatchObject({
      status: "stale",
      reason:
        "not landed or since removed: `findCommitMessageByCheckpointID`, written in its session into cmd/cli/checkpoint.go, is on no branch here",
    });
    // Written now and committed: served again.
    writeFile(p.root, "cmd/cli/checkpoint.go", "func findCommitMessageByCheckpointID(id string) string {}\n");
    commitAll(p.root, "checkpoint lookup");
    expect(statusOf(item.id).status).not.toBe("stale");
    // A checkout without the file the session wrote tells nothing: not judged.
    rmSync(join(p.root, "cmd"), { recursive: true });
    commitAll(p.root, "drop cmd");
    expect(statusOf(item.id).reason).not.toContain("not landed");
  });

  test("a memory that cites nothing in the code (a pure preference) is unverifiable", () => {
    initRepo(p.root);
    writeFile(p.root, "README.md", "demo\n");
    commitAll(p.root, "init");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "tone",
        content: "Keep commit messages short and in the imperative mood.",
        importance: 0.5,
      },
      NOW,
    );
    expect(statusOf(item.id)).toMatchObject({ status: "unverifiable", reason: "cites nothing in the repository" });
  });

  test("items stored before anchors existed are anchored in memory on first serve (nothing written)", () => {
    initRepo(p.root);
    writeFile(p.root, "src/auth/jwt.ts", JWT_TS);
    commitAll(p.root, "init");
    const item = addItem(
      p.db,
      p.root,
      { type: "pitfall", key: "p", content: PITFALL, file_paths: ["src/auth/jwt.ts"] },
      NOW,
    );
    expect(statusOf(item.id).status).toBe("verified");
    expect(anchorJsonOf(p.db, [item.id]).size).toBe(0);
  });

  test("a script the memory runs removed from package.json: stale", () => {
    initRepo(p.root);
    writeFile(
      p.root,
      "package.json",
      JSON.stringify({ scripts: { "db:migrate": "drizzle-kit migrate", test: "vitest" } }),
    );
    commitAll(p.root, "init");
    const item = addItem(
      p.db,
      p.root,
      {
        type: "recipe",
        key: "recipe:migrate",
        content: "To change the schema run `pnpm db:migrate`, then the tests.",
        importance: 0.6,
      },
      NOW,
    );
    recordAnchors(p.db, p.root, [item.id], [], "extract", NOW);
    expect(statusOf(item.id).status).toBe("verified");
    writeFile(p.root, "package.json", JSON.stringify({ scripts: { test: "vitest" } }));
    expect(statusOf(item.id)).toMatchObject({
      status: "stale",
      reason: "script `db:migrate` is no longer in package.json",
    });
  });
});

describe("bad input degrades to unverifiable and never fails the call", () => {
  test("a binary file and a file over 10 MB", () => {
    initRepo(p.root);
    writeFile(p.root, "assets/logo.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3]));
    writeFile(p.root, "data/huge.sql", `-- dump\n${"INSERT INTO t VALUES (1);\n".repeat(450_000)}`);
    commitAll(p.root, "assets");
    const bin = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "logo",
        content: "The logo is `assets/logo.png`; `renderLogo` draws it.",
        file_paths: ["assets/logo.png"],
      },
      NOW,
    );
    const big = addItem(
      p.db,
      p.root,
      {
        type: "project_fact",
        key: "dump",
        content: "Seed data lives in data/huge.sql.",
        file_paths: ["data/huge.sql"],
      },
      NOW,
    );
    recordAnchors(p.db, p.root, [bin.id, big.id], [], "extract", NOW);
    for (const id of [bin.id, big.id]) expect(["verified", "unverifiable"]).toContain(statusOf(id).status);
    // The files are there but nothing in them can be read: never stale.
    rmSync(join(p.root, "data/huge.sql"));
    writeFileSync(join(p.root, "data/huge.sql"), Buffer.alloc(11 * 1024 * 1024, 0x41));
    expect(statusOf(big.id).status).not.toBe("stale");
  });

  test("no repository at all: unverifiable", () => {
    writeFile(p.root, "src/auth/jwt.ts", JWT_TS);
    const item = addItem(
      p.db,
      p.root,
      { type: "pitfall", key: "p", content: PITFALL, file_paths: ["src/auth/jwt.ts"] },
      NOW,
    );
    expect(statusOf(item.id)).toMatchObject({
      status: "unverifiable",
      reason: "the project is not a git repository here",
    });
  });

  test("the repository gone from under the project: unverifiable, task_context still answers", async () => {
    const { id } = repoWithFixedPitfall();
    rmSync(join(p.root, "src"), { recursive: true });
    rmSync(join(p.root, ".git"), { recursive: true });
    expect(statusOf(id).status).toBe("unverifiable");
    const res = await taskContext(ctx(), task("isExpired throws for tokens without exp"));
    expect(res.selected_memories.find((m) => m.memory_id === id)?.verification?.status).toBe("unverifiable");
  });

  test("a detached HEAD checks like a branch", () => {
    const { id, fix } = repoWithFixedPitfall();
    git(p.root, "checkout", "-q", "--detach", fix);
    expect(statusOf(id).status).toBe("verified");
    rmSync(join(p.root, "src/auth/jwt.ts"));
    expect(statusOf(id).status).toBe("stale");
  });

  test("a shallow clone that lacks the anchored commits: unverifiable, not stale", () => {
    repoWithFixedPitfall();
    const clone = join(p.root, "..", "shallow");
    git(p.root, "commit", "-q", "--allow-empty", "-m", "later");
    Bun.spawnSync(["git", "clone", "-q", "--depth", "1", `file://${p.root}`, clone], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" },
    });
    const db = openProjectDb(clone);
    try {
      const item = addItem(
        db,
        clone,
        { type: "pitfall", key: "p", content: PITFALL, file_paths: ["src/auth/jwt.ts"] },
        NOW,
      );
      // An anchor recorded in the full clone (its head and fix commit are missing from the shallow one).
      const json = (p.db.query("SELECT anchor_json FROM memory_anchors").get() as { anchor_json: string }).anchor_json;
      db.query("INSERT INTO memory_anchors (memory_id, anchor_json, recorded_at) VALUES (?, ?, ?)").run(
        item.id,
        json,
        nowIso(NOW),
      );
      rmSync(join(clone, "src/auth/jwt.ts"));
      const v = verifyItems(clone, db, [item], NOW).get(item.id)!;
      expect(v.status).toBe("unverifiable");
    } finally {
      db.close();
    }
  });
});
