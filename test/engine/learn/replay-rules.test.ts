import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandRuns, parseCommand, sameCheck } from "../../../src/engine/events/commands.ts";
import { conceptTags } from "../../../src/engine/learn/extract/concept-tags.ts";
import { appliedChanges, rejectedCalls, toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { extractOffline, ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { pitfalls } from "../../../src/engine/learn/extract/pitfalls.ts";
import { projectManifests } from "../../../src/engine/learn/extract/project-manifests.ts";
import { recipes } from "../../../src/engine/learn/extract/recipes.ts";
import {
  explicitPreferences,
  mentionedPaths,
  parseDirective,
} from "../../../src/engine/learn/extract/style-preferences.ts";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { retrievalContext } from "../../../src/engine/retrieve/retrieval-context.ts";
import { offlineDigest } from "../../../src/engine/learn/summarize.ts";
import { taskContext } from "../../../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../../../src/shared/api.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { insertMemoryItem } from "../../../src/sql/memory-items.ts";
import { insertUserStyle } from "../../../src/sql/user-style.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { fixtureEvents, request, sandbox, USER, type Sandbox } from "./helpers.ts";

/**
 * The offline extractor and retrieval rules added for the replay benchmark, each on a hand-written
 * case in another language/stack than the scenario transcripts (test/fixtures/engine/*.jsonl).
 */
const tmp = tempDir("sqrl-replay-rules-");
afterAll(() => tmp.cleanup());
const ROOT = join(tmp.path, "repo");
mkdirSync(ROOT, { recursive: true });

function input(name: string) {
  return ruleInput(`ep_${name}`, ROOT, fixtureEvents(name, ROOT));
}

/** Events from inline lines (same shape as the fixture files). */
function inline(lines: Array<Record<string, unknown>>, session = "inline"): EventDTO[] {
  return lines.map((l, i) => {
    const { t, type, paths, ...content } = l as { t: number; type: EventDTO["event_type"]; paths?: string[] };
    const id = `evt_${session}_${String(i).padStart(3, "0")}`;
    return {
      id,
      project_id: ROOT,
      user_id: USER,
      source_tool: "claude_code",
      session_id: session,
      timestamp: new Date(Date.parse("2026-04-01T10:00:00Z") + t * 1000).toISOString(),
      event_type: type,
      content_json: JSON.stringify(content),
      file_paths: paths ?? [],
      hash: `h_${id}`,
      processed_at: null,
    };
  });
}

describe("commands: runners launched through a package manager, generation steps, the same check", () => {
  test("`pnpm vitest`, `yarn eslint`, `bun x tsc` keep their kind; the targeted file is not part of the base", () => {
    const t = parseCommand("pnpm vitest run test/auth.test.ts")[0]!;
    expect([t.kind, t.targeted, t.base]).toEqual(["test", true, "pnpm vitest run"]);
    expect(parseCommand("yarn eslint --max-warnings 0 src")[0]!.kind).toBe("lint");
    expect(parseCommand("bun x tsc --noEmit")[0]!.kind).toBe("typecheck");
    expect(parseCommand("pnpm exec prettier --check .")[0]!.kind).toBe("format");
    expect(parseCommand("npm test")[0]!.kind).toBe("test");
  });

  test("code and migration generation is its own kind, before migrate (makemigrations is not a migration run)", () => {
    for (const c of [
      "pnpm db:generate",
      "npx prisma generate",
      "python manage.py makemigrations",
      "go generate ./...",
      "bun run codegen",
      "drizzle-kit generate",
    ]) {
      expect([c, parseCommand(c)[0]!.kind]).toEqual([c, "generate"]);
    }
    expect(parseCommand("python manage.py migrate")[0]!.kind).toBe("migrate");
    expect(parseCommand("pnpm db:migrate")[0]!.kind).toBe("migrate");
  });

  test("a migration through another command is the same check; a test of another runner is not", () => {
    const runs = commandRuns(
      inline([
        {
          t: 0,
          type: "command_run",
          command: "npx prisma migrate deploy",
          exit_code: 1,
          output: "Error: P3009 migrate found failed migrations",
        },
        {
          t: 10,
          type: "command_run",
          command: "pnpm db:migrate",
          exit_code: 0,
          output: "All migrations have been successfully applied.",
        },
        { t: 20, type: "command_run", command: "pnpm vitest run", exit_code: 0, output: "Tests  3 passed (3)" },
        { t: 30, type: "command_run", command: "pnpm playwright test", exit_code: 0, output: "3 passed" },
      ]).map(toEngineEvent),
    );
    expect(sameCheck(runs[0]!, runs[1]!)).toBe(true);
    expect(sameCheck(runs[2]!, runs[3]!)).toBe(false);
  });
});

describe("event view: results pair with their own call", () => {
  test("a refused edit does not void a later accepted edit that reused its tool_use_id", () => {
    const events = input("pitfall-repeated-ids").events;
    const applied = appliedChanges(events);
    expect(applied.map((e) => e.id)).toEqual(["evt_pitfall-repeated-ids_006"]);
    const refused = rejectedCalls(events);
    expect(refused.map((r) => [r.call.id, r.result.id])).toEqual([
      ["evt_pitfall-repeated-ids_003", "evt_pitfall-repeated-ids_004"],
    ]);
  });

  test("an error stamped in the same millisecond as its call still marks that call as failed", () => {
    const events = inline([
      { t: 0, type: "code_change", tool: "Edit", tool_use_id: "x1", input: { file_path: "a.py" }, paths: ["a.py"] },
      {
        t: 0,
        type: "error",
        tool: "Edit",
        tool_use_id: "x1",
        text: "<tool_use_error>File has not been read yet.</tool_use_error>",
        is_error: true,
      },
    ]).map(toEngineEvent);
    expect(appliedChanges([...events].reverse())).toEqual([]);
  });
});

describe("rule pitfalls: cause, fix and evidence in more shapes", () => {
  test("no causal sentence: the explanation before the fix is the cause, the closing summary the fix", () => {
    const [p, ...rest] = pitfalls(input("pitfall-closing-summary"));
    expect(rest).toEqual([]);
    expect(p!.content).toContain(
      "`uv run pytest tests/test_importer.py` failed: FAILED tests/test_importer.py::test_empty_cells - AttributeError",
    );
    expect(p!.content).toContain("Cause: The importer reads every cell as text and empty cells arrive as None.");
    expect(p!.content).toContain(
      "Fix (src/importer.py): `parse_row` in src/importer.py now returns an empty string for empty cells instead of calling `.strip()` on None.",
    );
    expect(p!.content).not.toContain("All 10 importer tests pass");
    expect(p!.key).toBe("pitfall:test:attributeerror_object_has_no_attribute");
    expect(p!.file_paths).toEqual(["src/importer.py"]);
  });

  test("a plan the user refused is not the fix; the user's correction steered it", () => {
    const [p] = pitfalls(input("pitfall-repeated-ids"));
    expect(p!.content).toContain("Cause: Evict runs before the map is initialized, so the entry map is nil.");
    expect(p!.content).not.toContain("panic with a clear message");
    expect(p!.content).toContain(
      'Fix (internal/cache/cache.go): as the user asked: "Don\'t panic in library code, we return errors everywhere."',
    );
    expect(p!.source_event_ids).toContain("evt_pitfall-repeated-ids_006");
  });

  test("a migration fixed by generating it first: the ruled-out hypothesis stays out, the fix is the command", () => {
    const [p, ...rest] = pitfalls(input("recipe-resolved"));
    expect(rest).toEqual([]);
    expect(p!.key).toStartWith("pitfall:migrate:operationalerror_no_such_column");
    expect(p!.content).toContain("Cause: The migration for the new field has to be created first with makemigrations.");
    expect(p!.content).toContain("Fix: ran `python manage.py makemigrations`.");
    expect(p!.content).not.toMatch(/lock|Maybe/);
  });
});

describe("rule recipes: the green sequence after a resolved failure", () => {
  test("the failed attempt and the exploration between are left out; generation steps are part of it", () => {
    const [r, ...rest] = recipes(input("recipe-resolved"));
    expect(rest).toEqual([]);
    expect(r!.key).toBe("recipe:migrate");
    expect(r!.content).toBe(
      "To migrate the database: `python manage.py makemigrations` → `python manage.py migrate` → `pytest`.",
    );
  });

  test("a failure never passed again is no recipe, even when other checks pass after it", () => {
    const events = inline([
      {
        t: 0,
        type: "code_change",
        tool: "Edit",
        tool_use_id: "e1",
        input: { file_path: "src/a.ts" },
        paths: ["src/a.ts"],
      },
      { t: 10, type: "test_run", command: "bun test", exit_code: 1, output: "1 fail", failed: 1 },
      { t: 20, type: "command_run", command: "bun run lint", exit_code: 0, output: "0 errors" },
      { t: 30, type: "command_run", command: "bun run build", exit_code: 0, output: "Bundled 12 modules" },
    ]);
    expect(recipes(ruleInput("ep_x", ROOT, events))).toEqual([]);
  });
});

describe("rule style-preferences: commands, clauses, paths", () => {
  const cands = () => new Map(explicitPreferences(input("preferences-commands")).map((c) => [c.key, c]));

  test("an instruction quoting one command is keyed by what the command does, not by its package manager", () => {
    const lint = cands().get("lint_command")!;
    expect(lint.content).toBe("Always lint with `yarn eslint --max-warnings 0` before you push anything.");
    expect(lint.value).toBe("yarn eslint --max-warnings 0");
    const pm = cands().get("package_manager")!;
    expect([pm.content, pm.value, pm.scope]).toEqual(["We use yarn here, not npm.", "yarn", "project"]);
  });

  test("a standing instruction in a later clause is found; a procedure of two commands keeps a pref: key", () => {
    // "it" is resolved to the subject of the first clause, so the memory stands alone.
    const regen = cands().get("pref:regenerate_client_before_build")!;
    expect(regen.content).toBe("We always regenerate the client before building: `yarn codegen` then `yarn build`.");
    expect(regen.scope).toBe("project");
    expect(cands().has("build_command")).toBe(false);
    // What keeps happening to the team, or a clause that is narration, is no instruction.
    expect(parseDirective("We always end up with merge conflicts in the lockfile.")).toBeNull();
    const narrated = explicitPreferences(
      ruleInput(
        "ep_n",
        ROOT,
        inline(
          [{ t: 0, type: "user_message", text: "I tried the new flag, but always get an error from the build." }],
          "narration",
        ),
      ),
    );
    expect(narrated).toEqual([]);
  });

  test("an instruction in a message about a repo file carries the file; 'everywhere' makes it standing", () => {
    const fetchPref = cands().get("pref:axio_vs_fetch")!;
    expect(fetchPref.file_paths).toEqual(["src/api/client.ts"]);
    expect(fetchPref.scope).toBe("project");
    const lodash = cands().get("pref:reach_lodash_write_small_helper")!;
    expect([lodash.importance, lodash.polarity]).toEqual([0.8, -1]);
    expect(mentionedPaths("see https://example.com/a/b.html and ./lib/x.rb, not /etc/hosts.conf", ROOT)).toEqual([
      "lib/x.rb",
    ]);
  });

  test("an instruction answering a refused edit carries the edited file and the refusal as evidence", () => {
    const p = explicitPreferences(input("pitfall-repeated-ids")).find(
      (c) => c.key === "pref:panic_library_code_return_error",
    )!;
    expect(p.file_paths).toEqual(["internal/cache/cache.go"]);
    expect(p.tags).toContain("correction");
    expect(p.source_event_ids).toEqual([
      "evt_pitfall-repeated-ids_005",
      "evt_pitfall-repeated-ids_003",
      "evt_pitfall-repeated-ids_004",
    ]);
  });
});

describe("concept tags and manifest scripts", () => {
  test("tool, recipe and pitfall items carry the words tasks use for them", () => {
    expect(conceptTags("package_manager")).toContain("dependencies");
    expect(conceptTags("recipe:verify:format+lint+test")).toContain("checks");
    expect(conceptTags("pitfall:migrate:x")).toContain("database");
    expect(conceptTags("pref:early_return_vs_nest_ifs")).toEqual([]);
    expect(conceptTags("lint_command")).toContain("linter");
    expect(conceptTags("test_command")).toContain("suite");
    // A command's own pitfall takes the concept of the check the command runs.
    expect(conceptTags("pitfall:command:rtk_bun_run_test")).toContain("tests");
    expect(conceptTags("pitfall:command:rtk_bun_run_lint")).toContain("linter");
    expect(conceptTags("pitfall:command:gh_pr_create")).toEqual([]);
    const byKey = new Map(extractOffline(input("habits")).map((c) => [c.key, c]));
    expect(byKey.get("package_manager")!.tags).toContain("dependencies");
  });

  test("database scripts of package.json become a migrate_command fact", () => {
    const root = join(tmp.path, "scripts");
    mkdirSync(root, { recursive: true });
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({
        scripts: {
          dev: "next dev",
          generate: "graphql-codegen",
          "db:migrate": "prisma migrate deploy",
          "db:seed": "tsx prisma/seed.ts",
        },
        dependencies: { next: "15.0.0" },
      }),
    );
    const fact = projectManifests(ruleInput("ep_s", root, [])).find((c) => c.key === "migrate_command")!;
    expect(fact.content).toBe(
      "Database scripts: `npm run db:migrate` (runs `prisma migrate deploy`), `npm run db:seed` (runs `tsx prisma/seed.ts`) (from package.json).",
    );
  });
});

describe("episode summary", () => {
  test("a project-wide check fixed through another command reads 'X failed, then Y passed'", () => {
    const digest = offlineDigest(
      inline([
        { t: 0, type: "user_message", text: "apply the new schema" },
        {
          t: 10,
          type: "command_run",
          command: "npx prisma migrate deploy",
          exit_code: 1,
          output: "Error: P3005 The database schema is not empty.",
        },
        { t: 20, type: "command_run", command: "npx prisma generate", exit_code: 0, output: "Generated Prisma Client" },
        {
          t: 30,
          type: "command_run",
          command: "pnpm db:migrate",
          exit_code: 0,
          output: "All migrations have been successfully applied.",
        },
      ]).map(toEngineEvent),
    );
    expect(digest.summary).toContain("`npx prisma migrate deploy` failed, then `pnpm db:migrate` passed");
    expect(digest.outcome).toBe("fixed: checks green");
  });
});

describe("task context: the user's global style", () => {
  let sb: Sandbox | null = null;
  afterEach(() => {
    sb?.cleanup();
    sb = null;
  });

  test("a global preference that matches the task is selected; a project item on the same key replaces it; unrelated tasks abstain", async () => {
    sb = sandbox();
    await processEvents(request(sb.root, fixtureEvents("pitfall-fixed", sb.root)), sb.deps());
    const userDb = sb.userDb();
    try {
      const style = (id: string, key: string, content: string) =>
        insertUserStyle(userDb, {
          id,
          user_id: USER,
          key,
          content,
          tags: ["preference", "do"],
          importance: 0.8,
          created_at: "2026-05-20T00:00:00.000Z",
          updated_at: "2026-05-20T00:00:00.000Z",
          source: "offline",
          confidence: 0.85,
          evidence: [],
        });
      style("ust_early", "pref:early_return_vs_nest_ifs", "Always use early returns instead of nested ifs.");
      style("ust_tz", "pref:date_utc", "Format dates in UTC everywhere.");
      const ctx = retrievalContext(sb.db, sb.root, { nowMs: Date.parse("2026-06-01T00:00:00Z"), userId: USER, userDb });
      const ask = (task: string) =>
        taskContext(ctx, TaskContextRequest.parse({ project_id: sb!.root, task_description: task }));
      const nested = await ask("Flatten the nested ifs in the request parser with early returns");
      expect(nested.selected_memories.map((m) => m.memory_id)).toContain("ust_early");
      expect(nested.selected_memories.find((m) => m.memory_id === "ust_early")!.type).toBe("user_style");
      expect((await ask("Write a haiku about autumn leaves")).has_relevant_memory).toBe(false);
      // The project states its own item on the key: the global one is no candidate any more.
      const at = "2026-05-30T00:00:00.000Z";
      insertMemoryItem(sb.db, {
        id: "mem_local",
        project_id: sb.root,
        user_id: null,
        scope: "project",
        type: "user_style",
        key: "pref:early_return_vs_nest_ifs",
        content: "Nested ifs are fine in the parser.",
        tags: ["preference"],
        importance: 0.8,
        created_at: at,
        updated_at: at,
        source_episode_id: null,
        source_event_ids: [],
        confidence: 0.85,
        file_paths: [],
        evidence_episode_ids: [],
        decision: "ADD_NEW",
        extractor: "offline",
      });
      const again = await ask("Flatten the nested ifs in the request parser with early returns");
      expect(again.selected_memories.map((m) => m.memory_id)).not.toContain("ust_early");
    } finally {
      userDb.close();
    }
  });
});
