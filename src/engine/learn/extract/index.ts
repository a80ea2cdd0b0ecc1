/**
 * The offline extractor: every deterministic rule over one closed episode. (Module notes — "sessions
 * work on items.ts" — are no longer made: a reviewer kept none of them; the repository's own files
 * tell a newcomer more.)
 */
import type { EventDTO } from "../../../shared/event.ts";
import { log } from "../../../shared/log.ts";
import { dedupeCandidates, type Candidate, type Rule, type RuleInput } from "./candidate.ts";
import { commandCorrections } from "./command-corrections.ts";
import { decisions } from "./decisions.ts";
import { diagnoses, withoutRestatedDiagnoses } from "./diagnoses.ts";
import { distilCandidate } from "./distil.ts";
import { withConcepts } from "./concept-tags.ts";
import { toEngineEvent, type EngineEvent } from "../../events/event-view.ts";
import { portableText } from "../../../shared/portable-paths.ts";
import { pitfalls } from "./pitfalls.ts";
import { projectEndpoints } from "./project-endpoints.ts";
import { projectManifests } from "./project-manifests.ts";
import { recipes } from "./recipes.ts";
import { stepOrder } from "./step-order.ts";
import { repoHooks } from "./repo-hooks.ts";
import { styleHabits } from "./style-habits.ts";
import { stylePreferences } from "./style-preferences.ts";

export const EPISODE_RULES: ReadonlyArray<[string, Rule]> = [
  ["style-preferences", stylePreferences],
  ["style-habits", styleHabits],
  ["decisions", decisions],
  ["step-order", stepOrder],
  ["command-corrections", commandCorrections],
  ["project-endpoints", projectEndpoints],
  ["pitfalls", pitfalls],
  ["diagnoses", diagnoses],
  ["recipes", recipes],
];

export interface OfflineOptions {
  /** Also read the repo's manifests (done once per processing call, not per episode). */
  manifests: boolean;
}

/**
 * What the rules read. Texts are made portable first (the checkout's paths repo-relative, home folders
 * `~`), so that a rule that clips a command or a sentence never cuts through a machine's path.
 */
export function ruleInput(episodeId: string, projectRoot: string, events: readonly EventDTO[]): RuleInput {
  const roots = [projectRoot];
  const portable = (e: EngineEvent): EngineEvent => ({
    ...e,
    text: portableText(e.text, roots),
    command: portableText(e.command, roots),
    output: portableText(e.output, roots),
  });
  return {
    episodeId,
    projectRoot,
    events: events
      .map(toEngineEvent)
      .map(portable)
      .sort((a, b) => a.ms - b.ms || (a.id < b.id ? -1 : 1)),
  };
}

/** Run the rules; a rule that throws is logged and skipped so one bad record cannot stop the rest. */
export function extractOffline(input: RuleInput, opts: OfflineOptions = { manifests: false }): Candidate[] {
  const rules: Array<[string, Rule]> = [...EPISODE_RULES];
  if (opts.manifests) rules.push(["project-manifests", projectManifests], ["repo-hooks", repoHooks]);
  const out: Candidate[] = [];
  for (const [name, rule] of rules) {
    try {
      out.push(...rule(input));
    } catch (err) {
      log.warn(`extract rule ${name} failed on episode ${input.episodeId}: ${(err as Error).message}`);
    }
  }
  return finishCandidates(withoutRestatedDiagnoses(out), [input.projectRoot]);
}

/**
 * What every extractor's candidates go through before the update step, offline rules and the LLM
 * alike: one per (type, key, scope), distilled (portable paths, no narration, capped length),
 * concept tags added.
 */
export function finishCandidates(cands: readonly Candidate[], roots: readonly string[]): Candidate[] {
  return dedupeCandidates(cands)
    .map((c) => distilCandidate(c, roots))
    .filter((c) => c.content.length >= 12)
    .map((c) => ({ ...c, tags: withConcepts(c.key, c.tags) }));
}
