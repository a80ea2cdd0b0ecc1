/**
 * Rule `step-order`: what the user says must come BEFORE a recurring action — a release, a tag, a
 * commit, a push, a deploy ("Create a release release/0.3.0, for that update changelog.md first",
 * "so test the tag release/0.4.1, but update package.json and changelog.md before"). The action comes
 * back, so the step is a project rule, not a one-off request: stored as "Before a release, update
 * package.json and changelog.md.", keyed by the action so the same instruction in another session
 * meets itself.
 *
 * Held: the session then made the step (an applied edit of each file it names; a step that names no
 * file, "run the formatter first", is not stored), so a step the assistant never took, or misread, is
 * not stored. Not from plans (the assistant's text), questions, or long pasted messages.
 */
import { basename } from "node:path";
import type { Candidate, Rule } from "./candidate.ts";
import { appliedChanges, isPlanMessage, userMessages, type EngineEvent } from "../../events/event-view.ts";

/** The recurring action, as the stored rule names it. */
const ACTIONS: Array<{ re: RegExp; noun: string; key: string }> = [
  { re: /\b(?:releas(?:e|es|ing)|tag(?:s|ging)?)\b/i, noun: "a release", key: "release" },
  { re: /\b(?:deploy(?:s|ing|ment)?)\b/i, noun: "deploying", key: "deploy" },
  { re: /\b(?:publish(?:es|ing)?)\b/i, noun: "publishing", key: "publish" },
  { re: /\b(?:push(?:es|ing)?)\b/i, noun: "pushing", key: "push" },
  { re: /\bcommit(?:s|ting)?\b/i, noun: "committing", key: "commit" },
];

/** "update X and Y first", "but bump package.json before", "before tagging, regenerate docs". */
const STEP =
  /\b(update|bump|regenerate|run|add|build|write)\s+(?:also\s+)?((?:(?:the\s+)?[\w./@`-]+(?:\s*(?:,|and)\s*)?){1,4}?)\s+(?:first|before\b(?!\s+(?:i|we|you)\b))/i;
const FILE = /^[\w@.-]*[\w-]\.[a-z]{1,5}$|^[\w-]+\/[\w./-]+$/i;

/** The files a step names ("package.json and changelog.md" → two files). */
function namedFiles(objects: string): string[] {
  return objects
    .replace(/`/g, "")
    .split(/\s*(?:,|\band\b)\s*/)
    .map((w) => w.replace(/^the\s+/i, "").trim())
    .filter((w) => FILE.test(w));
}

/** Every named file was edited after the instruction (by base name, case aside: CHANGELOG.md is changelog.md). */
function stepTaken(files: readonly string[], changes: readonly EngineEvent[], at: number): EngineEvent[] | null {
  const proof: EngineEvent[] = [];
  for (const f of files) {
    const name = basename(f).toLowerCase();
    const edit = changes.find((c) => c.ms > at && c.filePaths.some((p) => basename(p).toLowerCase() === name));
    if (!edit) return null;
    proof.push(edit);
  }
  return proof;
}

export const stepOrder: Rule = (input) => {
  const out: Candidate[] = [];
  const changes = appliedChanges(input.events);
  for (const { ev, text } of userMessages(input.events)) {
    if (isPlanMessage(text) || text.length > 400 || /\?\s*$/.test(text)) continue;
    const step = STEP.exec(text);
    if (!step) continue;
    const action = ACTIONS.find((a) => a.re.test(text));
    const files = namedFiles(step[2]!);
    if (!action || files.length === 0) continue;
    const proof = stepTaken(files, changes, ev.ms);
    if (!proof) continue;
    const list = files.length === 1 ? files[0]! : `${files.slice(0, -1).join(", ")} and ${files.at(-1)}`;
    out.push({
      type: "user_style",
      key: `rule:before_${action.key}`,
      content: `Before ${action.noun}, ${step[1]!.toLowerCase()} ${list}.`,
      tags: ["preference", "do", "step-order"],
      importance: 0.8,
      confidence: 0.8,
      scope: "project",
      file_paths: files.filter((f) => f.includes("/")),
      source_episode_id: input.episodeId,
      source_event_ids: [ev.id, ...proof.map((p) => p.id)],
      rule: "step-order",
    });
  }
  return out;
};
