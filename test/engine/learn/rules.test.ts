import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseCommand, commandOutcome } from "../../../src/engine/events/commands.ts";
import { ruleInput } from "../../../src/engine/learn/extract/index.ts";
import { pitfalls } from "../../../src/engine/learn/extract/pitfalls.ts";
import { projectManifests } from "../../../src/engine/learn/extract/project-manifests.ts";
import { mergeModuleContent } from "../../../src/engine/learn/extract/project-modules.ts";
import { hookRecipe, recipes } from "../../../src/engine/learn/extract/recipes.ts";
import { styleHabits } from "../../../src/engine/learn/extract/style-habits.ts";
import { rejectionCorrections } from "../../../src/engine/learn/extract/lint-suppression.ts";
import { explicitPreferences, parseDirective } from "../../../src/engine/learn/extract/style-preferences.ts";
import { toEngineEvent } from "../../../src/engine/events/event-view.ts";
import { tempDir } from "../../helpers/sqrl.ts";
import { eventRows, fixtureEvents } from "./helpers.ts";

const tmp = tempDir("sqrl-rules-");
afterAll(() => tmp.cleanup());
const ROOT = join(tmp.path, "repo");
mkdirSync(ROOT, { recursive: true });

function input(name: string) {
  return ruleInput(`ep_${name}`, ROOT, fixtureEvents(name, ROOT));
}

describe("commands", () => {
  test("splits steps, strips wrappers and classifies them", () => {
    const steps = parseCommand("cd /repo && FOO=1 mise run fmt && mise run lint 2>&1 | head -50");
    expect(steps.map((s) => [s.text, s.kind])).toEqual([
      ["cd /repo", "explore"],
      ["mise run fmt", "format"],
      ["mise run lint", "lint"],
    ]);
    const t = parseCommand(`go test ./cmd/... -count=1 -v -run "Concurrent|Empty"`)[0]!;
    expect(t.kind).toBe("test");
    expect(t.targeted).toBe(true);
    expect(t.base).toBe("go test ./cmd/... -count=1 -v");
    expect(parseCommand("bun run db:migrate")[0]!.kind).toBe("migrate");
    expect(parseCommand("pnpm install")[0]!.manager).toBe("pnpm");
  });

  test("a piped lint run with findings is a failure even with exit code 0", () => {
    const ev = toEngineEvent({
      ...fixtureEvents("habits", ROOT)[0]!,
      event_type: "command_run",
      content_json: JSON.stringify({
        command: "mise run lint 2>&1 | head -50",
        exit_code: 0,
        output: "[lint:go] cmd/x/summarize.go:116:2: missing cases in switch (exhaustive)",
      }),
    });
    expect(commandOutcome(ev)).toBe("fail");
    const ok = toEngineEvent({
      ...fixtureEvents("habits", ROOT)[0]!,
      event_type: "command_run",
      content_json: JSON.stringify({ command: "mise run lint", exit_code: 0, output: "[lint:go] 0 issues." }),
    });
    expect(commandOutcome(ok)).toBe("pass");
  });
});

describe("rule style-preferences", () => {
  test("stated preferences become user_style items with stable keys and the right scope", () => {
    const cands = explicitPreferences(input("preferences"));
    const byKey = new Map(cands.map((c) => [c.key, c]));
    expect(byKey.get("pref:early_return_vs_nest_ifs")?.content).toBe("Always use early returns instead of nested ifs.");
    expect(byKey.get("pref:early_return_vs_nest_ifs")?.scope).toBe("user");
    const comments = byKey.get("pref:add_comment_line");
    expect(comments?.polarity).toBe(-1);
    expect(comments?.scope).toBe("user");
    const pm = byKey.get("package_manager");
    expect(pm?.value).toBe("pnpm");
    expect(pm?.scope).toBe("project");
    expect(byKey.get("pref:commit_directly_main")?.content).toBe("Never commit directly to main.");
    expect(byKey.get("pref:tab_indentation_here")?.scope).toBe("project");
    for (const c of cands) expect(c.source_event_ids.length).toBe(1);
  });

  test("questions, one-off instructions and narration are not preferences", () => {
    const contents = explicitPreferences(input("preferences")).map((c) => c.content);
    expect(contents.some((c) => /commit yet/i.test(c))).toBe(false);
    expect(contents.some((c) => /before you push/i.test(c))).toBe(false);
    expect(contents.some((c) => /don't know/i.test(c))).toBe(false);
    expect(contents.some((c) => /never thought/i.test(c))).toBe(false);
    expect(contents.some((c) => /exit/i.test(c))).toBe(false);
    // A slash command's expanded prompt and a pasted colleague review are not the user's own preferences.
    expect(contents.some((c) => /40 lines|without tests/i.test(c))).toBe(false);
    expect(contents.some((c) => /\bvar\b/.test(c))).toBe(false);
    expect(parseDirective("Don't worry about the tests")).toBeNull();
    expect(parseDirective("should we always use tabs?")).toBeNull();
  });

  test("a refused suppression edit followed by an instruction is a no_lint_suppression preference", () => {
    const cands = rejectionCorrections(input("rejections"));
    const sup = cands.find((c) => c.key === "no_lint_suppression");
    expect(sup?.content).toContain("eslint-disable");
    expect(sup?.content).toContain("add the missing break statements instead");
    expect(sup?.source_event_ids).toEqual(["evt_rejections_001", "evt_rejections_002", "evt_rejections_004"]);
  });

  test("a refused tool call followed by 'not X, but Y' is left to the episode, like a vague follow-up; only the suppression refusal is stored", () => {
    const cands = rejectionCorrections(input("rejections"));
    const corr = cands.find((c) => c.key === "correction:add_issue_comment");
    // Not stored: "not as a comment, but as a section in the PR description" has no subject of its own.
    expect(corr).toBeUndefined();
    expect(cands.some((c) => /search bar/.test(c.content))).toBe(false);
    expect(cands.map((c) => c.key)).toEqual(["no_lint_suppression"]);
  });
});

describe("rule style-habits", () => {
  test("package manager, test command with flags, linter, formatter and commit style from what ran", () => {
    const cands = styleHabits(input("habits"));
    const byKey = new Map(cands.map((c) => [c.key, c]));
    expect(byKey.get("package_manager")?.value).toBe("pnpm");
    expect(byKey.get("test_command")?.content).toBe(
      "Runs tests with `pnpm test`; flags used: `--run`; single tests: `pnpm test -- --run src/settings.test.ts`.",
    );
    expect(byKey.get("lint_command")?.value).toBe("pnpm lint");
    expect(byKey.get("format_command")?.value).toBe("npx prettier");
    expect(byKey.get("commit_style")?.value).toBe("conventional");
    for (const c of cands) expect(c.scope).toBe("project");
  });

  test("a refused command is not a habit; ticket-prefixed commits are recognised from git events", () => {
    const cands = styleHabits(input("habits"));
    expect(cands.find((c) => c.key === "package_manager")?.content).not.toMatch(/`npm install/);
    const commits = styleHabits(input("commits"));
    expect(commits.find((c) => c.key === "commit_style")?.value).toBe("ticket-prefix");
  });
});

describe("module facts of earlier versions", () => {
  test("two versions of one folder's fact merge into the union of their files; other folders do not merge", () => {
    const a = "Module `src/auth/` (typescript): sessions work on `jwt.ts`, `login.ts`.";
    const b = "Module `src/auth/` (typescript): sessions work on `login.ts`, `session.ts`.";
    expect(mergeModuleContent(a, b)).toBe(
      "Module `src/auth/` (typescript): sessions work on `jwt.ts`, `login.ts`, `session.ts`.",
    );
    expect(mergeModuleContent(a, "Module `src/jobs/`: sessions work on `queue.ts`.")).toBeNull();
    expect(mergeModuleContent(a, "Uses bun as the package manager.")).toBeNull();
  });
});

describe("rule pitfalls", () => {
  test("a failing test fixed in the same episode: what failed, where, cause and fix", () => {
    const [p, ...rest] = pitfalls(input("pitfall-fixed"));
    expect(rest).toEqual([]);
    expect(p!.type).toBe("pitfall");
    expect(p!.content).toContain("`bun test test/format.test.ts` failed: ✗ formatDate > uses UTC");
    expect(p!.content).toContain("Cause: The test fails because formatDate uses the local timezone instead of UTC");
    expect(p!.content).toContain("Fix (src/format.ts): Switch formatDate to the getUTC* accessors."); // told, not narrated
    expect(p!.content).not.toContain("Let me read");
    // A timezone cause is not obvious from the code: a lesson at once, not waiting for recurrence.
    expect(p!.gate).toBeUndefined();
    expect(p!.tags).toContain("non-obvious");
    expect(p!.file_paths).toEqual(["src/format.ts"]);
    expect(p!.key).toStartWith("pitfall:test:");
  });

  test("an error never resolved produces no pitfall (and no recipe)", () => {
    expect(pitfalls(input("pitfall-unresolved"))).toEqual([]);
    expect(recipes(input("pitfall-unresolved"))).toEqual([]);
  });

  test("an abandoned hypothesis is not stored: only the explanation and change after the last failure count", () => {
    const [p, ...rest] = pitfalls(input("pitfall-abandoned"));
    expect(rest).toEqual([]);
    expect(p!.content).toContain("fake-clock 3.0 renamed now() to currentTime()");
    expect(p!.content).toContain("TypeError: clock.now is not a function");
    expect(p!.content).not.toMatch(/stale|jest cache|cache: false/);
    expect(p!.file_paths).toContain("src/cache.ts");
    expect(p!.file_paths).not.toContain("jest.config.js");
    expect(p!.source_event_ids).not.toContain("evt_pitfall-abandoned_004");
  });
});

describe("rule recipes", () => {
  test("a sequence of checks that ended green after the change is a recipe", () => {
    const [r, ...rest] = recipes(input("recipe-migrate"));
    expect(rest).toEqual([]);
    expect(r!.key).toBe("recipe:migrate");
    expect(r!.content).toBe("To migrate the database: `bun run db:migrate` → `bun test` → `bun run build`.");
    expect(r!.gate).toBeUndefined(); // a migration flow is a recipe at once
  });

  test("a sequence that ends red is not a recipe", () => {
    expect(recipes(input("recipe-red"))).toEqual([]);
  });

  test("what the pre-commit hook ran, also when git is told where the repo is (`git -C <repo> commit`)", () => {
    const commit = (command: string) =>
      hookRecipe({
        episodeId: "ep_hook",
        events: eventRows(ROOT, [
          {
            type: "command_run",
            command,
            exit_code: 0,
            output:
              "[main b903802] Add docs\n 1 file changed\n$ bun test src/\n 12 pass\n$ biome check --error-on-warnings\n$ tsc --noEmit",
          },
        ]).map(toEngineEvent),
      }).map((c) => c.content);
    const want = [
      "The pre-commit hook runs `bun test src/` → `biome check --error-on-warnings` → `tsc --noEmit`; a commit lands only when all pass.",
    ];
    expect(commit('git commit -m "Add docs"')).toEqual(want);
    expect(commit('git -C /work/repo add README.md && git -C /work/repo commit -m "Add docs"')).toEqual(want);
    expect(commit("git -C /work/repo log --oneline -5")).toEqual([]);
  });
});

describe("rule project-manifests", () => {
  test("facts read from package.json, lockfile, compose, prisma and CI files", () => {
    const root = join(tmp.path, "manifests");
    mkdirSync(join(root, ".github", "workflows"), { recursive: true });
    mkdirSync(join(root, "prisma"), { recursive: true });
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({
        name: "shop",
        scripts: { test: "vitest run", build: "next build", lint: "eslint .", dev: "next dev" },
        dependencies: { next: "15.0.0", react: "19.0.0", "@prisma/client": "6.0.0" },
        devDependencies: { vitest: "2.0.0", typescript: "5.6.0" },
      }),
    );
    writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
    writeFileSync(join(root, "tsconfig.json"), "{}");
    writeFileSync(
      join(root, "prisma", "schema.prisma"),
      'datasource db {\n  provider = "postgresql"\n  url = env("DATABASE_URL")\n}\n',
    );
    writeFileSync(
      join(root, "docker-compose.yml"),
      "services:\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n",
    );
    writeFileSync(
      join(root, ".github", "workflows", "ci.yml"),
      "jobs:\n  test:\n    steps:\n      - run: pnpm install\n      - run: pnpm test\n      - run: pnpm lint\n",
    );
    const cands = projectManifests(ruleInput("ep_m", root, []));
    const byKey = new Map(cands.map((c) => [c.key, c.content]));
    expect(byKey.get("language")).toBe("Language: TypeScript (from tsconfig.json).");
    expect(byKey.get("framework")).toBe("Frameworks: Next.js, React (from package.json).");
    expect(byKey.get("database")).toContain("PostgreSQL via Prisma");
    expect(byKey.get("database")).toContain("Redis");
    expect(byKey.get("package_manager")).toBe("Package manager: pnpm (from pnpm-lock.yaml).");
    expect(byKey.get("test_command")).toBe("Tests: `pnpm test` (runs `vitest run`) (from package.json).");
    expect(byKey.get("ci")).toContain("runs `pnpm test`, `pnpm lint`");
    for (const c of cands) expect(c.confidence).toBeGreaterThan(0.9);
  });

  test("go.mod and pyproject.toml", () => {
    const go = join(tmp.path, "gorepo");
    mkdirSync(go, { recursive: true });
    writeFileSync(
      join(go, "go.mod"),
      "module claude-code-helper\n\ngo 1.23\n\nrequire (\n\tgithub.com/charmbracelet/bubbletea v1.3.6\n)\n",
    );
    const g = new Map(projectManifests(ruleInput("ep_g", go, [])).map((c) => [c.key, c.content]));
    expect(g.get("language")).toBe("Language: Go (from go.mod).");
    expect(g.get("runtime_version")).toBe("Go 1.23 (from go.mod).");
    expect(g.get("framework")).toBe("Framework: Bubble Tea (TUI) (from go.mod).");
    const py = join(tmp.path, "pyrepo");
    mkdirSync(py, { recursive: true });
    writeFileSync(
      join(py, "pyproject.toml"),
      '[project]\nname = "api"\nrequires-python = ">=3.12"\ndependencies = ["fastapi>=0.110", "sqlalchemy[asyncio]", "asyncpg"]\n[dependency-groups]\ndev = ["pytest>=8"]\n',
    );
    writeFileSync(join(py, "uv.lock"), "version = 1\n");
    const p = new Map(projectManifests(ruleInput("ep_p", py, [])).map((c) => [c.key, c.content]));
    expect(p.get("framework")).toBe("Framework: FastAPI (from pyproject.toml).");
    expect(p.get("database")).toBe("Databases: SQLAlchemy, PostgreSQL (from pyproject.toml).");
    expect(p.get("test_command")).toBe("Tests: `uv run pytest` (from pyproject.toml).");
    expect(p.get("python_package_manager")).toBe("Python packages managed with uv (from uv.lock).");
  });

  test("an empty repo states nothing", () => {
    const empty = join(tmp.path, "empty");
    mkdirSync(empty, { recursive: true });
    expect(projectManifests(ruleInput("ep_e", empty, []))).toEqual([]);
  });
});

describe("rule project-endpoints", () => {
  test("endpoints from code read and written; a refused edit adds nothing", async () => {
    const { projectEndpoints } = await import("../../../src/engine/learn/extract/project-endpoints.ts");
    const byKey = new Map(projectEndpoints(input("endpoints")).map((c) => [c.key, c.content]));
    expect(byKey.get("endpoint:/login")).toBe("Endpoint `POST /login` is handled in `src/routes/auth.ts`.");
    expect(byKey.get("endpoint:/logout")).toBe("Endpoint `POST /logout` is handled in `src/routes/auth.ts`.");
    expect(byKey.get("endpoint:/api/teams/:id")).toBe(
      "Endpoint `DELETE, GET /api/teams/:id` is handled in `apps/web/app/(protected)/api/teams/[id]/route.ts`.",
    );
    expect(byKey.has("endpoint:/sessions")).toBe(false);
  });

  test("two versions of an endpoint fact merge their methods and files", async () => {
    const { mergeEndpointContent } = await import("../../../src/engine/learn/extract/project-endpoints.ts");
    expect(
      mergeEndpointContent(
        "Endpoint `GET /me` is handled in `src/a.ts`.",
        "Endpoint `PATCH /me` is handled in `src/b.ts`.",
      ),
    ).toBe("Endpoint `GET, PATCH /me` is handled in `src/a.ts`, `src/b.ts`.");
    expect(mergeEndpointContent("Endpoint `GET /me`.", "Endpoint `GET /you`.")).toBeNull();
  });
});
