/**
 * The words a task uses for what a tooling item governs. An item about the package manager says
 * "pnpm", but the task that needs it says "add the dayjs dependency"; an item about the test command
 * says "vitest", the task says "run the tests". Tags are indexed with the item (memory_fts), so these
 * concept words let the offline ranker meet such tasks without an embedding model.
 */
const CONCEPTS: Record<string, readonly string[]> = {
  package_manager: ["dependencies", "packages", "install"],
  python_package_manager: ["dependencies", "packages", "install"],
  test_runner: ["tests", "testing", "suite"],
  test_command: ["tests", "testing", "suite"],
  test_framework: ["tests", "testing", "suite"],
  lint_command: ["lint", "linting", "linter"],
  linter: ["lint", "linting", "linter"],
  format_command: ["formatting", "format"],
  formatter: ["formatting", "format"],
  typecheck_command: ["types", "typecheck"],
  build_command: ["build"],
  dev_command: ["dev", "server", "run"],
  migrate_command: ["migrations", "database", "schema"],
  database: ["database"],
};

/** Recipes by purpose (`recipe:verify:lint+test` → verify). */
const RECIPE_CONCEPTS: Record<string, readonly string[]> = {
  verify: ["checks", "verify", "validate", "tests", "linter"],
  migrate: ["migrations", "database", "schema"],
  build: ["build", "compile"],
  release: ["release", "publish", "deploy"],
};

/** Pitfalls by the kind of check that failed (`pitfall:migrate:…` → migrate). */
const PITFALL_CONCEPTS: Record<string, readonly string[]> = {
  test: ["tests", "suite"],
  lint: ["lint", "linter"],
  typecheck: ["types", "typecheck"],
  build: ["build"],
  migrate: ["migrations", "database", "schema"],
  generate: ["codegen", "generate"],
  install: ["dependencies", "install"],
  format: ["formatting"],
};

/** Concept tags for an item key (tool keys, recipes and pitfalls by kind; `pref:` and other keys get none). */
export function conceptTags(key: string): string[] {
  const [head, kind] = key.split(":");
  if (head === "recipe" && kind) return [...(RECIPE_CONCEPTS[kind] ?? [])];
  if (head === "pitfall" && kind === "command") {
    // A command's own pitfall (`pitfall:command:rtk_bun_run_test`): the check it runs names the concept.
    const check = /(?:^|_)(test|lint|typecheck|build|migrate|install|format)(?:_|$)/.exec(key.split(":")[2] ?? "")?.[1];
    return check ? [...(PITFALL_CONCEPTS[check] ?? [])] : [];
  }
  if (head === "pitfall" && kind) return [...(PITFALL_CONCEPTS[kind] ?? [])];
  return [...(CONCEPTS[key] ?? [])];
}

/** `tags` plus the concept tags of `key`, without duplicates. */
export function withConcepts(key: string, tags: readonly string[]): string[] {
  return [...new Set([...tags, ...conceptTags(key)])];
}
