/**
 * Rule `recipes`: the sequence of checks run after the episode's last change that ended green — how
 * this repo verifies a change, builds, migrates or releases. When a check failed after the change and
 * a later run of it passed, the recipe is the green sequence after the last failure (the failed
 * attempt and whatever was tried between are not part of it). Single commands are left to the
 * habits rule; a sequence that did not end green, or left a failure unresolved, is not a recipe.
 * A recipe is named by what its commands do: a "migrate" step is a database migration only when its
 * tool is one (drizzle-kit, prisma, alembic, `db:migrate` …) or the repository's manifests name a
 * database; otherwise (a CLI's own `migrate` subcommand, a config migration script) it is left out,
 * never stored as "To migrate the database" in a project with no database.
 */
import type { Candidate, Rule } from "./candidate.ts";
import {
  commandRuns,
  GIT_COMMIT,
  sameCheck,
  type CommandKind,
  type CommandRun,
  type CommandStep,
} from "../../events/commands.ts";
import { appliedChanges, clip } from "../../events/event-view.ts";
import { manifestFacts } from "./project-manifests.ts";

/** Tools whose "migrate" is a database schema migration. */
const DB_MIGRATION =
  /\b(?:db:(?:migrate|push|generate)|prisma\b|drizzle-kit\b|alembic\b|ecto\.|manage\.py\s+migrate|rails\s+db|rake\s+db|knex\b|sequelize\b|typeorm\b|goose\b|migrate\s+-(?:path|database)|flyway\b|liquibase\b|diesel\b|sqlx\b|dbmate\b|atlas\s+migrate|supabase\s+(?:db|migration)|flask\s+db)/i;

const RECIPE_KINDS: ReadonlySet<CommandKind> = new Set([
  "install",
  "format",
  "lint",
  "typecheck",
  "test",
  "build",
  "generate",
  "migrate",
  "release",
]);

/** The runs after the last failure, when every failure of the tail has a later passing run of the same check; else null. */
function greenSuffix(tail: readonly CommandRun[]): CommandRun[] | null {
  let lastBad = -1;
  tail.forEach((r, i) => {
    if (r.outcome !== "pass") lastBad = i;
  });
  const green = tail.slice(lastBad + 1);
  if (green.length === 0) return null;
  for (const r of tail.slice(0, lastBad + 1)) {
    if (r.outcome === "fail" && !green.some((g) => sameCheck(r, g))) return null;
    if (r.outcome !== "fail" && r.outcome !== "pass") return null; // an unknown outcome proves nothing either way
  }
  return green;
}

interface Purpose {
  key: string;
  label: string;
}

function purposeOf(kinds: Set<CommandKind>): Purpose {
  if (kinds.has("release")) return { key: "recipe:release", label: "To release" };
  if (kinds.has("migrate")) return { key: "recipe:migrate", label: "To migrate the database" };
  if ([...kinds].every((k) => k === "build" || k === "install")) return { key: "recipe:build", label: "To build" };
  return { key: "recipe:verify", label: "To verify a change" };
}

export const recipes: Rule = (input) => {
  const events = input.events;
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected");
  const changes = appliedChanges(events);
  const lastChangeMs = changes.length > 0 ? changes[changes.length - 1]!.ms : -Infinity;
  const tail = greenSuffix(runs.filter((r) => r.ev.ms > lastChangeMs && r.steps.some((s) => RECIPE_KINDS.has(s.kind))));
  if (!tail) return hookRecipe(input);
  const steps: CommandStep[] = [];
  let database: boolean | null = null;
  const isDatabase = () => (database ??= manifestFacts(input.projectRoot).some((f) => f.key === "database"));
  for (const r of tail)
    for (const s of r.steps) {
      if (!RECIPE_KINDS.has(s.kind)) continue;
      if (s.kind === "migrate" && !DB_MIGRATION.test(s.text) && !isDatabase()) continue;
      steps.push(s);
    }
  const fullKinds = new Set(steps.filter((s) => !s.targeted).map((s) => s.kind));
  const chosen: CommandStep[] = [];
  for (const s of steps) {
    if (s.targeted && fullKinds.has(s.kind)) continue;
    if (s.targeted) continue;
    if (!chosen.some((c) => c.base === s.base)) chosen.push(s);
  }
  const kinds = new Set(chosen.map((s) => s.kind));
  const oneStepWorthIt = chosen.length === 1 && (kinds.has("migrate") || kinds.has("release"));
  if (chosen.length < 2 && !oneStepWorthIt) return hookRecipe(input);
  const purpose = purposeOf(kinds);
  // One recipe per purpose: variants of the verify flow (test+lint, fmt+lint+test) meet on one key,
  // and the update step keeps the most complete one (a subset refreshes it).
  const sequence = chosen.map((s) => `\`${clip(s.text, 80)}\``).join(" → ");
  // A complete flow (three or more kinds of check, a migration, a release) is a recipe at once;
  // a shorter one must pass in a second episode first.
  const complete = kinds.size >= 3 || purpose.key !== "recipe:verify";
  const recipe: Candidate = {
    type: "recipe",
    key: purpose.key,
    content: `${purpose.label}: ${sequence}.`,
    tags: ["recipe", ...kinds],
    importance: 0.65,
    confidence: 0.8,
    scope: "project",
    file_paths: [],
    source_episode_id: input.episodeId,
    source_event_ids: tail.map((r) => r.ev.id),
    value: chosen.map((s) => s.base).join(" && "),
    rule: "recipes",
    ...(complete
      ? {}
      : { gate: { kind: "recipe" as const, signature: `${purpose.key}:${[...kinds].sort().join("+")}` } }),
  };
  return [recipe, ...hookRecipe(input)];
};

/** What a commit's hook ran, from the task-runner echo lines (`$ bun test src/`) in the output of a commit that landed. */
export function hookRecipe(input: {
  episodeId: string;
  events: readonly import("../../events/event-view.ts").EngineEvent[];
}): Candidate[] {
  for (const ev of input.events) {
    if ((ev.type !== "command_run" && ev.type !== "test_run") || !GIT_COMMIT.test(ev.command)) continue;
    if (!/^\[[\w./-]+(?: \([^)]*\))? [0-9a-f]{7,}\]/m.test(ev.output)) continue; // the commit landed
    const ran = [...ev.output.matchAll(/^\$ (.{2,80})$/gm)]
      .map((m) => m[1]!.trim())
      .filter((c, i, a) => a.indexOf(c) === i);
    if (ran.length === 0) continue;
    return [
      {
        type: "recipe",
        key: "recipe:pre-commit",
        content: `The pre-commit hook runs ${ran.map((c) => `\`${c}\``).join(" → ")}; a commit lands only when all pass.`,
        tags: ["recipe", "pre-commit", "hook"],
        importance: 0.7,
        confidence: 0.8,
        scope: "project",
        file_paths: [],
        source_episode_id: input.episodeId,
        source_event_ids: [ev.id],
        value: ran.join(" && "),
        rule: "recipes:hook",
      },
    ];
  }
  return [];
}
