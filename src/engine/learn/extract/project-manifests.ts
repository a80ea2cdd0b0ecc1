/**
 * Rule `project-manifests`: facts the repository states about itself — languages, frameworks,
 * database, package manager, test/build/lint commands, runtime versions, CI and container setup —
 * read from its own package.json, lockfiles, pyproject.toml, Cargo.toml, go.mod, mix.exs, Gemfile,
 * Dockerfile, compose files, CI workflows, mise.toml and Makefile. Only what the files say.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { parseCommand } from "../../events/commands.ts";
import { clip } from "../../events/event-view.ts";

interface Fact {
  key: string;
  /** Parts joined into the content; the source files are appended. */
  parts: string[];
  sources: Set<string>;
  tags: Set<string>;
  value?: string;
  importance: number;
}

type Facts = Map<string, Fact>;

function add(
  facts: Facts,
  key: string,
  part: string,
  source: string,
  opts: { tag?: string; value?: string; importance?: number } = {},
): void {
  const f = facts.get(key) ?? {
    key,
    parts: [],
    sources: new Set<string>(),
    tags: new Set<string>(),
    importance: opts.importance ?? 0.7,
  };
  if (!f.parts.includes(part)) f.parts.push(part);
  f.sources.add(source);
  if (opts.tag) f.tags.add(opts.tag.toLowerCase());
  if (opts.value && f.value === undefined) f.value = opts.value;
  facts.set(key, f);
}

const MAX_FILE = 512 * 1024;

function readText(root: string, rel: string): string | null {
  const p = join(root, rel);
  try {
    if (!existsSync(p)) return null;
    const st = statSync(p);
    if (!st.isFile() || st.size > MAX_FILE) return null;
    return readFileSync(p, "utf8");
  } catch {
    return null;
  }
}

function has(root: string, rel: string): boolean {
  return existsSync(join(root, rel));
}

const JS_FRAMEWORKS: Record<string, string> = {
  next: "Next.js",
  react: "React",
  vue: "Vue",
  nuxt: "Nuxt",
  svelte: "Svelte",
  "@sveltejs/kit": "SvelteKit",
  "@angular/core": "Angular",
  express: "Express",
  fastify: "Fastify",
  hono: "Hono",
  "@nestjs/core": "NestJS",
  koa: "Koa",
  "@remix-run/react": "Remix",
  astro: "Astro",
  electron: "Electron",
  "solid-js": "Solid",
  "react-native": "React Native",
  expo: "Expo",
  elysia: "Elysia",
  "@tanstack/react-router": "TanStack Router",
  "react-router-dom": "React Router",
  vite: "Vite",
  tailwindcss: "Tailwind CSS",
  "@modelcontextprotocol/sdk": "MCP SDK",
};
const JS_DATABASES: Record<string, string> = {
  pg: "PostgreSQL",
  postgres: "PostgreSQL",
  "@neondatabase/serverless": "PostgreSQL (Neon)",
  mysql2: "MySQL",
  mysql: "MySQL",
  "better-sqlite3": "SQLite",
  sqlite3: "SQLite",
  "@libsql/client": "SQLite (libSQL)",
  mongodb: "MongoDB",
  mongoose: "MongoDB (Mongoose)",
  redis: "Redis",
  ioredis: "Redis",
  "@prisma/client": "Prisma ORM",
  prisma: "Prisma ORM",
  "drizzle-orm": "Drizzle ORM",
  typeorm: "TypeORM",
  sequelize: "Sequelize",
  knex: "Knex",
  kysely: "Kysely",
  "@supabase/supabase-js": "Supabase",
};
const JS_TESTS: Record<string, string> = {
  vitest: "Vitest",
  jest: "Jest",
  mocha: "Mocha",
  "@playwright/test": "Playwright",
  cypress: "Cypress",
  ava: "AVA",
};
const PY_FRAMEWORKS: Record<string, string> = {
  fastapi: "FastAPI",
  django: "Django",
  flask: "Flask",
  starlette: "Starlette",
  litestar: "Litestar",
  typer: "Typer",
  click: "Click",
  pydantic: "Pydantic",
  streamlit: "Streamlit",
  celery: "Celery",
  pytorch: "PyTorch",
  torch: "PyTorch",
  langchain: "LangChain",
};
const PY_DATABASES: Record<string, string> = {
  sqlalchemy: "SQLAlchemy",
  psycopg: "PostgreSQL",
  psycopg2: "PostgreSQL",
  "psycopg2-binary": "PostgreSQL",
  asyncpg: "PostgreSQL",
  pymongo: "MongoDB",
  motor: "MongoDB",
  redis: "Redis",
  alembic: "Alembic migrations",
  sqlmodel: "SQLModel",
  "django-redis": "Redis",
};
const GO_LIBS: Array<[string, string, "framework" | "database"]> = [
  ["github.com/gin-gonic/gin", "Gin", "framework"],
  ["github.com/labstack/echo", "Echo", "framework"],
  ["github.com/gofiber/fiber", "Fiber", "framework"],
  ["github.com/go-chi/chi", "chi", "framework"],
  ["github.com/spf13/cobra", "Cobra (CLI)", "framework"],
  ["github.com/charmbracelet/bubbletea", "Bubble Tea (TUI)", "framework"],
  ["google.golang.org/grpc", "gRPC", "framework"],
  ["gorm.io/gorm", "GORM", "database"],
  ["github.com/jackc/pgx", "PostgreSQL (pgx)", "database"],
  ["github.com/lib/pq", "PostgreSQL", "database"],
  ["github.com/mattn/go-sqlite3", "SQLite", "database"],
  ["modernc.org/sqlite", "SQLite", "database"],
  ["github.com/redis/go-redis", "Redis", "database"],
  ["go.mongodb.org/mongo-driver", "MongoDB", "database"],
  ["github.com/jmoiron/sqlx", "sqlx", "database"],
];
const RUST_LIBS: Record<string, [string, "framework" | "database"]> = {
  axum: ["Axum", "framework"],
  "actix-web": ["Actix Web", "framework"],
  rocket: ["Rocket", "framework"],
  warp: ["warp", "framework"],
  tokio: ["Tokio", "framework"],
  clap: ["clap (CLI)", "framework"],
  tauri: ["Tauri", "framework"],
  leptos: ["Leptos", "framework"],
  bevy: ["Bevy", "framework"],
  sqlx: ["sqlx", "database"],
  diesel: ["Diesel", "database"],
  "sea-orm": ["SeaORM", "database"],
  rusqlite: ["SQLite (rusqlite)", "database"],
  redis: ["Redis", "database"],
};
const ELIXIR_LIBS: Record<string, [string, "framework" | "database"]> = {
  phoenix: ["Phoenix", "framework"],
  phoenix_live_view: ["Phoenix LiveView", "framework"],
  ash: ["Ash", "framework"],
  oban: ["Oban", "framework"],
  ecto_sql: ["Ecto", "database"],
  postgrex: ["PostgreSQL", "database"],
  ecto_sqlite3: ["SQLite", "database"],
  myxql: ["MySQL", "database"],
};

function scriptFact(
  facts: Facts,
  key: string,
  label: string,
  runner: string,
  name: string,
  body: string,
  source: string,
): void {
  add(
    facts,
    key,
    `${label}: \`${runner} ${name === "test" ? "test" : `run ${name}`}\` (runs \`${clip(body, 80)}\`)`,
    source,
    { value: `${runner} ${name === "test" ? "test" : `run ${name}`}` },
  );
}

/** Database scripts (generate, migrate, push, seed), in package.json order: how this repo changes its schema. */
function migrationScripts(facts: Facts, runner: string, scripts: Record<string, unknown>): void {
  const names = Object.keys(scripts).filter(
    (n) =>
      typeof scripts[n] === "string" &&
      /^(?:db|database|prisma|drizzle|migrations?)(?::|$)|(?:^|:)(?:migrat\w*|generate|push|seed)$/.test(n) &&
      /migrat|db|drizzle|prisma|knex|sequelize|typeorm|schema|seed/i.test(`${n} ${String(scripts[n])}`),
  );
  if (names.length === 0) return;
  const list = names.slice(0, 4).map((n) => `\`${runner} run ${n}\` (runs \`${clip(String(scripts[n]), 50)}\`)`);
  add(facts, "migrate_command", `Database scripts: ${list.join(", ")}`, "package.json", { value: names.join(" ") });
}

function jsManager(root: string, pkg: Record<string, unknown>): { name: string; source: string } | null {
  const field =
    typeof pkg.packageManager === "string" ? /^(npm|pnpm|yarn|bun)@/.exec(pkg.packageManager)?.[1] : undefined;
  if (field) return { name: field, source: "package.json" };
  const locks: Array<[string, string]> = [
    ["bun.lock", "bun"],
    ["bun.lockb", "bun"],
    ["pnpm-lock.yaml", "pnpm"],
    ["yarn.lock", "yarn"],
    ["package-lock.json", "npm"],
  ];
  for (const [file, name] of locks) if (has(root, file)) return { name, source: file };
  return null;
}

function readPackageJson(root: string, facts: Facts): void {
  const text = readText(root, "package.json");
  if (!text) return;
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return;
  }
  const deps = {
    ...(pkg.dependencies as Record<string, string> | undefined),
    ...(pkg.devDependencies as Record<string, string> | undefined),
  };
  const ts = "typescript" in deps || has(root, "tsconfig.json");
  add(
    facts,
    "language",
    ts ? "TypeScript" : "JavaScript",
    ts && has(root, "tsconfig.json") ? "tsconfig.json" : "package.json",
    { tag: ts ? "typescript" : "javascript", importance: 0.75 },
  );
  for (const [dep, name] of Object.entries(JS_FRAMEWORKS))
    if (dep in deps) add(facts, "framework", name, "package.json", { tag: name, importance: 0.8 });
  for (const [dep, name] of Object.entries(JS_DATABASES))
    if (dep in deps) add(facts, "database", name, "package.json", { tag: name });
  for (const [dep, name] of Object.entries(JS_TESTS))
    if (dep in deps) add(facts, "test_framework", name, "package.json", { tag: name });
  const mgr = jsManager(root, pkg);
  if (mgr)
    add(facts, "package_manager", `Package manager: ${mgr.name}`, mgr.source, {
      tag: mgr.name,
      value: mgr.name,
      importance: 0.7,
    });
  const runner = mgr?.name ?? "npm";
  const scripts = (pkg.scripts ?? {}) as Record<string, unknown>;
  const pick = (names: string[]) => names.find((n) => typeof scripts[n] === "string");
  const specs: Array<[string, string, string[]]> = [
    ["test_command", "Tests", ["test", "test:unit"]],
    ["build_command", "Build", ["build"]],
    ["lint_command", "Lint", ["lint"]],
    ["typecheck_command", "Type check", ["typecheck", "type-check", "check-types", "tsc"]],
    ["format_command", "Format", ["format", "fmt"]],
    ["dev_command", "Dev server", ["dev", "start"]],
  ];
  for (const [key, label, names] of specs) {
    const n = pick(names);
    if (n) scriptFact(facts, key, label, runner, n, String(scripts[n]), "package.json");
  }
  migrationScripts(facts, runner, scripts);
  const ws = Array.isArray(pkg.workspaces)
    ? pkg.workspaces
    : (pkg.workspaces as { packages?: unknown } | undefined)?.packages;
  if (Array.isArray(ws) && ws.length > 0)
    add(
      facts,
      "monorepo",
      `Monorepo with workspaces ${ws
        .slice(0, 4)
        .map((w) => `\`${String(w)}\``)
        .join(", ")}`,
      "package.json",
    );
  else if (has(root, "pnpm-workspace.yaml"))
    add(facts, "monorepo", "Monorepo (pnpm workspaces)", "pnpm-workspace.yaml");
  const engines = pkg.engines as Record<string, string> | undefined;
  if (engines?.node) add(facts, "runtime_version", `Node ${engines.node}`, "package.json");
}

function depName(spec: string): string {
  return spec
    .trim()
    .split(/[\s<>=!~;[(]/)[0]!
    .toLowerCase();
}

function readPython(root: string, facts: Facts): void {
  const text = readText(root, "pyproject.toml");
  const names = new Set<string>();
  let source = "requirements.txt";
  if (text) {
    source = "pyproject.toml";
    try {
      const doc = parseToml(text) as Record<string, any>;
      for (const d of (doc.project?.dependencies ?? []) as string[]) names.add(depName(d));
      for (const group of Object.values((doc.project?.["optional-dependencies"] ?? {}) as Record<string, string[]>))
        for (const d of group) names.add(depName(d));
      for (const group of Object.values((doc["dependency-groups"] ?? {}) as Record<string, unknown[]>))
        for (const d of group) if (typeof d === "string") names.add(depName(d));
      for (const d of Object.keys(doc.tool?.poetry?.dependencies ?? {})) names.add(d.toLowerCase());
      for (const d of Object.keys(doc.tool?.poetry?.group?.dev?.dependencies ?? {})) names.add(d.toLowerCase());
      const rp = doc.project?.["requires-python"] ?? doc.tool?.poetry?.dependencies?.python;
      if (typeof rp === "string") add(facts, "runtime_version", `Python ${rp}`, "pyproject.toml");
      if (doc.tool?.ruff)
        add(facts, "lint_command", "Lint: `ruff check` (configured in pyproject.toml)", "pyproject.toml", {
          value: "ruff check",
        });
      if (doc.tool?.pytest) names.add("pytest");
      if (doc.tool?.mypy)
        add(facts, "typecheck_command", "Type check: `mypy` (configured in pyproject.toml)", "pyproject.toml", {
          value: "mypy",
        });
    } catch {
      // unreadable TOML: say nothing rather than guess
    }
  }
  const req = readText(root, "requirements.txt");
  if (req)
    for (const line of req.split("\n"))
      if (line.trim() && !line.trim().startsWith("#") && !line.startsWith("-")) names.add(depName(line));
  if (!text && !req && !has(root, "setup.py")) return;
  add(facts, "language", "Python", text ? "pyproject.toml" : req ? "requirements.txt" : "setup.py", {
    tag: "python",
    importance: 0.75,
  });
  for (const [dep, name] of Object.entries(PY_FRAMEWORKS))
    if (names.has(dep)) add(facts, "framework", name, source, { tag: name, importance: 0.8 });
  for (const [dep, name] of Object.entries(PY_DATABASES))
    if (names.has(dep)) add(facts, "database", name, source, { tag: name });
  if (names.has("pytest")) {
    add(facts, "test_framework", "pytest", source, { tag: "pytest" });
    const prefix = has(root, "uv.lock") ? "uv run " : has(root, "poetry.lock") ? "poetry run " : "";
    add(facts, "test_command", `Tests: \`${prefix}pytest\``, source, { value: `${prefix}pytest` });
  }
  const pm = has(root, "uv.lock")
    ? ["uv", "uv.lock"]
    : has(root, "poetry.lock")
      ? ["poetry", "poetry.lock"]
      : has(root, "Pipfile.lock")
        ? ["pipenv", "Pipfile.lock"]
        : null;
  if (pm)
    add(facts, "python_package_manager", `Python packages managed with ${pm[0]}`, pm[1]!, { tag: pm[0], value: pm[0] });
}

function readGo(root: string, facts: Facts): void {
  const text = readText(root, "go.mod");
  if (!text) return;
  add(facts, "language", "Go", "go.mod", { tag: "go", importance: 0.75 });
  const mod = /^module\s+(\S+)/m.exec(text)?.[1];
  if (mod) add(facts, "go_module", `Go module \`${mod}\``, "go.mod", { value: mod, importance: 0.5 });
  const ver = /^go\s+(\d+\.\d+(?:\.\d+)?)/m.exec(text)?.[1];
  if (ver) add(facts, "runtime_version", `Go ${ver}`, "go.mod", { value: ver });
  for (const [path, name, kind] of GO_LIBS)
    if (text.includes(path))
      add(facts, kind, name, "go.mod", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
  if (!facts.has("test_command"))
    add(facts, "test_command", "Tests: `go test ./...`", "go.mod", { value: "go test ./..." });
}

function readCargo(root: string, facts: Facts): void {
  const text = readText(root, "Cargo.toml");
  if (!text) return;
  add(facts, "language", "Rust", "Cargo.toml", { tag: "rust", importance: 0.75 });
  try {
    const doc = parseToml(text) as Record<string, any>;
    const deps = {
      ...(doc.dependencies ?? {}),
      ...(doc["dev-dependencies"] ?? {}),
      ...(doc.workspace?.dependencies ?? {}),
    } as Record<string, unknown>;
    for (const [dep, [name, kind]] of Object.entries(RUST_LIBS))
      if (dep in deps)
        add(facts, kind, name, "Cargo.toml", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
    if (doc.workspace?.members) add(facts, "monorepo", "Cargo workspace", "Cargo.toml");
    if (typeof doc.package?.edition === "string")
      add(facts, "runtime_version", `Rust edition ${doc.package.edition}`, "Cargo.toml");
  } catch {
    // leave out what cannot be read
  }
  if (!facts.has("test_command"))
    add(facts, "test_command", "Tests: `cargo test`", "Cargo.toml", { value: "cargo test" });
}

function readElixirRuby(root: string, facts: Facts): void {
  const mix = readText(root, "mix.exs");
  if (mix) {
    add(facts, "language", "Elixir", "mix.exs", { tag: "elixir", importance: 0.75 });
    for (const [dep, [name, kind]] of Object.entries(ELIXIR_LIBS))
      if (new RegExp(`\\{:${dep}\\b`).test(mix))
        add(facts, kind, name, "mix.exs", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
    if (!facts.has("test_command")) add(facts, "test_command", "Tests: `mix test`", "mix.exs", { value: "mix test" });
  }
  const gem = readText(root, "Gemfile");
  if (gem) {
    add(facts, "language", "Ruby", "Gemfile", { tag: "ruby", importance: 0.75 });
    if (/gem\s+["']rails["']/.test(gem)) add(facts, "framework", "Rails", "Gemfile", { tag: "rails", importance: 0.8 });
    if (/gem\s+["']sinatra["']/.test(gem)) add(facts, "framework", "Sinatra", "Gemfile", { tag: "sinatra" });
    if (/gem\s+["']pg["']/.test(gem)) add(facts, "database", "PostgreSQL", "Gemfile", { tag: "postgresql" });
    if (/gem\s+["']rspec/.test(gem))
      add(facts, "test_command", "Tests: `bundle exec rspec`", "Gemfile", { value: "bundle exec rspec" });
  }
}

function readContainers(root: string, facts: Facts): void {
  const docker = readText(root, "Dockerfile");
  if (docker) {
    const froms = [...docker.matchAll(/^FROM\s+(?:--\S+\s+)?(\S+)/gim)].map((m) => m[1]!).filter((f) => !/^\$/.test(f));
    if (froms.length > 0)
      add(
        facts,
        "container",
        `Docker image built FROM ${froms
          .slice(0, 3)
          .map((f) => `\`${f}\``)
          .join(", ")}`,
        "Dockerfile",
        { tag: "docker", importance: 0.55 },
      );
  }
  for (const file of ["docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml"]) {
    const text = readText(root, file);
    if (!text) continue;
    const images = [...text.matchAll(/^\s*image:\s*["']?([\w./-]+)/gm)].map((m) => m[1]!.split("/").pop()!);
    const dbs: Record<string, string> = {
      postgres: "PostgreSQL",
      postgis: "PostgreSQL (PostGIS)",
      mysql: "MySQL",
      mariadb: "MariaDB",
      redis: "Redis",
      mongo: "MongoDB",
      valkey: "Valkey",
    };
    for (const img of images)
      for (const [k, v] of Object.entries(dbs)) if (img.startsWith(k)) add(facts, "database", v, file, { tag: v });
    if (images.length > 0)
      add(
        facts,
        "container",
        `Compose services use ${[...new Set(images)]
          .slice(0, 4)
          .map((i) => `\`${i}\``)
          .join(", ")}`,
        file,
        { tag: "docker", importance: 0.55 },
      );
  }
  const prisma = readText(root, "prisma/schema.prisma");
  const provider = prisma
    ? /provider\s*=\s*"(postgresql|mysql|sqlite|mongodb|sqlserver|cockroachdb)"/.exec(prisma)?.[1]
    : undefined;
  if (provider)
    add(
      facts,
      "database",
      `${{ postgresql: "PostgreSQL", mysql: "MySQL", sqlite: "SQLite", mongodb: "MongoDB", sqlserver: "SQL Server", cockroachdb: "CockroachDB" }[provider]} via Prisma`,
      "prisma/schema.prisma",
      { tag: provider },
    );
}

function readCi(root: string, facts: Facts): void {
  const dir = join(root, ".github", "workflows");
  let files: string[] = [];
  try {
    files = readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .slice(0, 8);
  } catch {
    files = [];
  }
  const commands: string[] = [];
  for (const f of files) {
    const text = readText(root, `.github/workflows/${f}`) ?? "";
    for (const m of text.matchAll(/^\s*(?:-\s+)?run:\s*(?:\|\s*\n((?:\s{4,}.*\n?)+)|(.+))$/gm)) {
      const body = (m[1] ?? m[2] ?? "")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      for (const line of body)
        for (const step of parseCommand(line))
          if (["test", "lint", "build", "typecheck", "format"].includes(step.kind) && !commands.includes(step.text))
            commands.push(step.text);
    }
  }
  if (files.length > 0) {
    add(
      facts,
      "ci",
      `CI: GitHub Actions (${files
        .map((f) => `.github/workflows/${f}`)
        .slice(0, 3)
        .join(", ")})${
        commands.length
          ? ` runs ${commands
              .slice(0, 5)
              .map((c) => `\`${clip(c, 50)}\``)
              .join(", ")}`
          : ""
      }`,
      ".github/workflows",
      { tag: "ci", importance: 0.55 },
    );
  } else if (has(root, ".gitlab-ci.yml"))
    add(facts, "ci", "CI: GitLab CI (.gitlab-ci.yml)", ".gitlab-ci.yml", { tag: "ci", importance: 0.55 });
}

function readTaskRunners(root: string, facts: Facts): void {
  const tasks = new Set<string>();
  let source = "";
  const mise = readText(root, "mise.toml") ?? readText(root, ".mise.toml");
  if (mise) {
    try {
      const doc = parseToml(mise) as Record<string, any>;
      for (const t of Object.keys(doc.tasks ?? {})) tasks.add(t);
      source = "mise.toml";
    } catch {
      // ignore
    }
  }
  try {
    for (const f of readdirSync(join(root, "mise-tasks"))) tasks.add(f.replace(/\.\w+$/, ""));
    source ||= "mise-tasks/";
  } catch {
    // no file tasks
  }
  const runTasks = (label: string, key: string, names: string[]) => {
    const n = names.find((x) => tasks.has(x));
    if (n) add(facts, key, `${label}: \`mise run ${n}\``, source, { value: `mise run ${n}` });
  };
  if (tasks.size > 0) {
    runTasks("Tests", "test_command", ["test"]);
    runTasks("Lint", "lint_command", ["lint"]);
    runTasks("Format", "format_command", ["fmt", "format"]);
    runTasks("Build", "build_command", ["build"]);
  }
  const make = readText(root, "Makefile");
  if (make) {
    const targets = new Set([...make.matchAll(/^([A-Za-z][\w-]*):/gm)].map((m) => m[1]!));
    for (const [name, key, label] of [
      ["test", "test_command", "Tests"],
      ["lint", "lint_command", "Lint"],
      ["build", "build_command", "Build"],
    ] as const) {
      if (targets.has(name) && !facts.has(key))
        add(facts, key, `${label}: \`make ${name}\``, "Makefile", { value: `make ${name}` });
    }
  }
}

const LABELS: Record<string, string> = {
  language: "Language",
  framework: "Framework",
  database: "Database",
  test_framework: "Test framework",
};

function factContent(f: Fact): string {
  const label = LABELS[f.key];
  const body = label ? `${label}${f.parts.length > 1 ? "s" : ""}: ${f.parts.join(", ")}` : f.parts.join("; ");
  return `${body} (from ${[...f.sources].join(", ")}).`;
}

/** Every fact the repo's own files state, keyed by slug. */
export function manifestFacts(root: string): Fact[] {
  const facts: Facts = new Map();
  readTaskRunners(root, facts);
  readPackageJson(root, facts);
  readPython(root, facts);
  readGo(root, facts);
  readCargo(root, facts);
  readElixirRuby(root, facts);
  readContainers(root, facts);
  readCi(root, facts);
  return [...facts.values()];
}

export const MANIFEST_FILES =
  /(?:^|\/)(?:package\.json|bun\.lockb?|pnpm-lock\.yaml|yarn\.lock|package-lock\.json|tsconfig\.json|pyproject\.toml|requirements\.txt|uv\.lock|poetry\.lock|Cargo\.toml|go\.mod|mix\.exs|Gemfile|Dockerfile|(?:docker-)?compose\.ya?ml|mise\.toml|Makefile|schema\.prisma|\.github\/workflows\/[^/]+)$/;

export const projectManifests: Rule = (input: RuleInput) => {
  const touching = input.events.filter((e) => e.filePaths.some((p) => MANIFEST_FILES.test(p))).map((e) => e.id);
  return manifestFacts(input.projectRoot).map(
    (f): Candidate => ({
      type: "project_fact",
      key: f.key,
      content: factContent(f),
      tags: ["manifest", ...f.tags],
      importance: f.importance,
      confidence: 0.95,
      scope: "project",
      file_paths: [...f.sources].filter((s) => !s.endsWith("/")),
      source_episode_id: input.episodeId,
      source_event_ids: touching.slice(0, 20),
      value: f.value,
      rule: "project-manifests",
    }),
  );
};
