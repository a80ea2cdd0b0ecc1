/**
 * The parts of an approved plan ("Implement the following plan: …") a lesson may come from: its
 * root-cause sections (the rest describes the change, true only once made), never a section that calls
 * itself a guess ("Root Cause Hypothesis", "Possible Causes"), and the flag its change section passes.
 */

/** Plan headings whose section is a root-cause explanation ("Root Cause Hypothesis", "Possible Causes" are guesses). */
const PLAN_CAUSE_HEADING = /^#{1,4}\s+.*\b(?:root cause|cause|why|problem|context|background|diagnos\w*)\b/i;
const PLAN_GUESS_HEADING = /\b(?:hypothes[ie]s|possible|potential|suspected|candidate|likely)\b/i;

/** A plan's root-cause sections only (the rest describes the change, true only once made); their sub-headings are statements too. */
export function planCauseText(text: string): string {
  const out: string[] = [];
  let level = 0; // heading level of the cause section being read, 0 when outside one
  for (const line of text.split(/\r?\n/)) {
    const h = /^\s*(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const depth = h[1]!.length;
      if (level > 0 && depth > level) {
        out.push(`${h[2]!.replace(/^part\s+\w+\s*[—–:-]\s*/i, "").trim()}.`);
        continue;
      }
      level = PLAN_CAUSE_HEADING.test(line.trim()) && !PLAN_GUESS_HEADING.test(line) ? depth : 0;
      continue;
    }
    if (level > 0) out.push(line);
  }
  return out.join("\n");
}

/** The first backticked CLI flag of a plan's change/fix section: what "requires …" is answered with. */
export function planFlag(text: string): string | undefined {
  let inFix = false;
  for (const line of text.replace(/```[\s\S]*?```/g, "").split(/\r?\n/)) {
    const h = /^\s*#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      inFix = /\b(?:change|fix|solution|implementation)\b/i.test(h[1]!);
      continue;
    }
    const flag = inFix ? /`(--[a-z][\w-]*)`/.exec(line) : null;
    if (flag) return flag[1];
  }
  return undefined;
}
