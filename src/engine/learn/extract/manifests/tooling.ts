/**
 * How the repository is run around its code: containers (Dockerfile, compose), CI workflows and task
 * runners (mise.toml, Makefile).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { parseCommand } from "../../../events/commands.ts";
import { clip } from "../../../events/event-view.ts";
import { add, has, readText, type Facts } from "./facts.ts";

export function readContainers(root: string, facts: Facts): void {
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

export function readCi(root: string, facts: Facts): void {
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

export function readTaskRunners(root: string, facts: Facts): void {
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
