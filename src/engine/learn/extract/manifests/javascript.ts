/**
 * package.json and its lockfiles: language, frameworks, databases, test framework, package manager,
 * the scripts that test, build, lint, type-check, format, serve and migrate, workspaces, Node version.
 */
import { clip } from "../../../events/event-view.ts";
import { add, has, readText, type Facts } from "./facts.ts";

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

export function readPackageJson(root: string, facts: Facts): void {
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
