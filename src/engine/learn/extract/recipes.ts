import type { Candidate, Rule } from "./candidate.ts";
import { commandRuns, sameCheck, type CommandKind, type CommandRun, type CommandStep } from "../../events/commands.ts";
import { appliedChanges, clip } from "../../events/event-view.ts";

/**
 * Rule `recipes`: the sequence of checks run after the episode's last change that ended green — how
 * this repo verifies a change, builds, migrates or releases. When a check failed after the change and
 * a later run of it passed, the recipe is the green sequence after the last failure (the failed
 * attempt and whatever was tried between are not part of it). Single commands are left to the
 * habits rule; a sequence that did not end green, or left a failure unresolved, is not a recipe.
 */

const RECIPE_KINDS: ReadonlySet<CommandKind> = new Set(["install", "format", "lint", "typecheck", "test", "build", "generate", "migrate", "release"]);

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
  if (!tail) return [];
  const steps: CommandStep[] = [];
  for (const r of tail) for (const s of r.steps) if (RECIPE_KINDS.has(s.kind)) steps.push(s);
  const fullKinds = new Set(steps.filter((s) => !s.targeted).map((s) => s.kind));
  const chosen: CommandStep[] = [];
  for (const s of steps) {
    if (s.targeted && fullKinds.has(s.kind)) continue;
    if (s.targeted) continue;
    if (!chosen.some((c) => c.base === s.base)) chosen.push(s);
  }
  const kinds = new Set(chosen.map((s) => s.kind));
  const oneStepWorthIt = chosen.length === 1 && (kinds.has("migrate") || kinds.has("release"));
  if (chosen.length < 2 && !oneStepWorthIt) return [];
  const purpose = purposeOf(kinds);
  // Different check sets are different recipes (fmt+lint+test vs test+lint); the same set meets itself again.
  const kindsKey = [...kinds].sort().join("+");
  const sequence = chosen.map((s) => `\`${clip(s.text, 80)}\``).join(" → ");
  const recipe: Candidate = {
    type: "recipe",
    key: purpose.key === "recipe:verify" ? `${purpose.key}:${kindsKey}` : purpose.key,
    content: `${purpose.label}: ${sequence} (all passed${changes.length > 0 ? " after the change" : ""}).`,
    tags: ["recipe", ...kinds],
    importance: 0.65,
    confidence: 0.8,
    scope: "project",
    file_paths: [],
    source_episode_id: input.episodeId,
    source_event_ids: tail.map((r) => r.ev.id),
    value: chosen.map((s) => s.base).join(" && "),
    rule: "recipes",
  };
  return [recipe];
};
