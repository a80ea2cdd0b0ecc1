/**
 * Rule part `style-preferences:rejection`: a refused edit that added a lint-suppression directive
 * (`// eslint-disable`, `//nolint`, `//exhaustive:ignore`, `@ts-ignore` …), followed by the user's
 * instruction: don't silence the linter, fix the code. Other refusals are left to the episode and to
 * the rule the user states next (read by style-preferences).
 */
import type { Candidate, RuleInput } from "./candidate.ts";
import { clip, rejectedCalls, toolInput, userMessages, type EngineEvent } from "../../events/event-view.ts";

const SUPPRESSION =
  /(?:\/\/\s*nolint|eslint-disable|@ts-ignore|@ts-expect-error|@ts-nocheck|#\s*noqa|#\s*type:\s*ignore|\/\/\s*exhaustive:ignore|#\[allow\(|rubocop:disable|biome-ignore|istanbul ignore|@SuppressWarnings|#\s*pylint:\s*disable|\/\/\s*@?lint-ignore|credo:disable)/i;

function addedText(call: EngineEvent): { added: string; removed: string } {
  const inp = toolInput(call);
  const added = [inp.new_string, inp.content, inp.new_str, inp.patch]
    .filter((v): v is string => typeof v === "string")
    .join("\n");
  const removed = [inp.old_string, inp.old_str].filter((v): v is string => typeof v === "string").join("\n");
  return { added, removed };
}

/** A refused edit that added a lint-suppression directive, followed by the user's instruction: fix the code instead. */
export function rejectionCorrections(input: RuleInput): Candidate[] {
  const out: Candidate[] = [];
  const msgs = userMessages(input.events);
  for (const { call, result } of rejectedCalls(input.events)) {
    const next = msgs.find((m) => m.ev.ms >= result.ms && m.ev.id !== result.id);
    if (!next) continue;
    const instruction = clip(next.text, 200);
    const { added, removed } = addedText(call);
    const suppression = SUPPRESSION.exec(added);
    if (suppression && !SUPPRESSION.test(removed)) {
      out.push({
        type: "user_style",
        key: "no_lint_suppression",
        content: `Don't add \`${suppression[0].trim()}\` to silence the linter; fix the code instead${/\binstead\b/i.test(instruction) && !instruction.includes("?") ? ` ("${instruction}")` : ""}.`,
        tags: ["preference", "dont", "lint", "correction"],
        importance: 0.75,
        confidence: 0.7,
        scope: "project",
        file_paths: call.filePaths,
        source_episode_id: input.episodeId,
        source_event_ids: [call.id, result.id, next.ev.id],
        polarity: -1,
        rule: "style-preferences:rejection",
      });
    }
    // Other refusals are left to the episode (and to the rule the user states next, which
    // explicitPreferences reads): "not as a comment, but as a document attached to the issue" has no
    // subject of its own, and a reviewer counted every such item as not standing alone.
  }
  return out;
}
