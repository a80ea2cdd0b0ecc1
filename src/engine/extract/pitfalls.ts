import { isAbsolute, relative } from "node:path";
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { commandRuns, failureLines, type CommandRun, type CommandStep } from "./commands.ts";
import { appliedChanges, cleanUserText, clip, slug, type EngineEvent } from "./event-view.ts";

/**
 * Rule `pitfalls`: a check (test, lint, type check, build, migration, install) that FAILED and then,
 * in the same episode, PASSED after a change. Stores what failed, where, the cause as far as the
 * text shows it, and the fix. A failure never followed by a green run of the same check is not a
 * pitfall; explanations given before a later failed attempt were abandoned hypotheses and are not used.
 */

const PITFALL_KINDS = new Set(["test", "lint", "typecheck", "build", "migrate", "install", "format", "dev"]);
const CAUSAL = /\b(?:because|requires?|required|caused by|due to|the (?:issue|problem|error|cause|reason|culprit) (?:is|was|here is)|is failing (?:because|since)|fails? (?:because|since|when)|happens (?:because|when)|expects?|must be|needs? to be|is not (?:allowed|supported|defined|exported)|doesn't (?:exist|support|allow)|was (?:removed|renamed|missing))\b/i;
const HEDGE = /\b(?:maybe|might|possibly|perhaps|probably|i think|i suspect|could be|likely|not sure|seems? to|may be|guess|hypothes)/i;
const FILLER_SENTENCE = /^(?:good idea|great|perfect|ok(?:ay)?|sure|got it|you're right|right|yes|done|now\b|first,?\b)/i;
/** "Let me read the file", "I'll run the tests": narration of the next step, not the fix. */
const NARRATION = /^(?:now\s+)?(?:let me|let's|i'll|i will|i need to|i'm going to)\s+(?:\w+\s+){0,2}(?:read|look|check|run|verify|see|investigate|explore|search|find|open|examine|inspect|understand|start)\b/i;

function sentencesOf(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, " ")
    .split(/(?<=[.!?:])\s+|\n+/)
    .map((s) => s.trim().replace(/:$/, "."))
    .filter((s) => s.length > 8);
}

/** The check a step performs, for matching a later run of "the same" check. */
function checkIdentity(step: CommandStep): string {
  const words = step.base.split(/\s+/).filter((w) => !w.startsWith("-") && w !== "--");
  return `${step.kind}:${words.slice(0, 3).join(" ")}`;
}

function mainStep(run: CommandRun): CommandStep | undefined {
  return run.steps.find((s) => s.kind === run.kind) ?? run.steps[0];
}

function sameCheck(a: CommandRun, b: CommandRun): boolean {
  if (a.kind !== b.kind) return false;
  const sa = mainStep(a);
  const sb = mainStep(b);
  if (!sa || !sb) return false;
  if (checkIdentity(sa) === checkIdentity(sb)) return true;
  const ha = sa.base.split(/\s+/).slice(0, 2).join(" ");
  const hb = sb.base.split(/\s+/).slice(0, 2).join(" ");
  return ha === hb;
}

function causeSentence(events: readonly EngineEvent[], from: number, to: number): { text: string; id: string } | null {
  for (const e of events) {
    if (e.ms < from || e.ms > to) continue;
    const text = e.type === "assistant_response" ? e.text : e.type === "user_message" && !e.sidechain ? cleanUserText(e.text) : "";
    if (!text) continue;
    for (const s of sentencesOf(text)) {
      if (CAUSAL.test(s) && !HEDGE.test(s) && !/^(?:let me|i'll|i will|now)\b/i.test(s)) return { text: clip(s, 220), id: e.id };
    }
  }
  return null;
}

function fixDescription(events: readonly EngineEvent[], from: number, firstFix: EngineEvent, cause: string | null): { text: string; id: string } | null {
  let last: EngineEvent | null = null;
  for (const e of events) {
    if (e.ms < from || e.ms > firstFix.ms) continue;
    if (e.type === "assistant_response" && e.text.trim()) last = e;
  }
  const kept = last
    ? sentencesOf(last.text).filter((s) => !FILLER_SENTENCE.test(s) && !NARRATION.test(s) && !HEDGE.test(s) && s.split(/\s+/).length >= 4 && s !== cause)
    : [];
  if (last && kept.length > 0) return { text: clip(kept.slice(0, 2).join(" "), 240), id: last.id };
  const diff = firstFix.content.diff_summary;
  return diff ? { text: clip(diff, 200), id: firstFix.id } : null;
}

function toRepoPath(p: string, root: string): string | null {
  if (!isAbsolute(p)) return p.replace(/^\.\//, "");
  const rel = relative(root, p);
  return rel.startsWith("..") || isAbsolute(rel) ? null : rel;
}

function errorPaths(lines: readonly string[], root: string): string[] {
  const out: string[] = [];
  for (const l of lines) {
    for (const m of l.matchAll(/([\w@~./-]+\.[A-Za-z]{1,5}):\d+/g)) {
      const p = toRepoPath(m[1]!, root);
      if (p && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

function errorSignature(line: string): string {
  return line
    .replace(/[\w@~./-]+\.[A-Za-z]{1,5}:\d+(?::\d+)?:?/g, " ")
    .replace(/`[^`]*`|"[^"]*"|'[^']*'|\[[^\]]*\]|\([^)]*\)/g, " ")
    .replace(/\b\d+(?:\.\d+)?\b/g, " ")
    .replace(/^(?:error|fail(?:ed)?|---)\W*/i, "")
    .trim();
}

function describeCommand(run: CommandRun): string {
  const s = mainStep(run);
  return clip(s ? s.text : run.ev.command, 90);
}

interface Chain {
  first: CommandRun;
  lastFail: CommandRun;
  pass: CommandRun;
  attempts: number;
}

function findChains(runs: readonly CommandRun[]): { chains: Chain[]; unresolved: CommandRun[] } {
  const used = new Set<CommandRun>();
  const chains: Chain[] = [];
  const unresolved: CommandRun[] = [];
  for (let i = 0; i < runs.length; i++) {
    const f = runs[i]!;
    if (used.has(f) || f.outcome !== "fail" || !PITFALL_KINDS.has(f.kind)) continue;
    let lastFail = f;
    let attempts = 1;
    let pass: CommandRun | null = null;
    used.add(f);
    for (let j = i + 1; j < runs.length; j++) {
      const r = runs[j]!;
      if (!sameCheck(f, r)) continue;
      used.add(r);
      if (r.outcome === "fail") {
        lastFail = r;
        attempts++;
      } else if (r.outcome === "pass") {
        pass = r;
        break;
      }
    }
    if (pass) chains.push({ first: f, lastFail, pass, attempts });
    else unresolved.push(f);
  }
  return { chains, unresolved };
}

function chainCandidate(input: RuleInput, events: readonly EngineEvent[], changes: readonly EngineEvent[], runs: readonly CommandRun[], c: Chain): Candidate | null {
  const from = c.lastFail.ev.ms;
  const to = c.pass.ev.ms;
  const fixChanges = changes.filter((e) => e.ms >= from && e.ms <= to);
  const fixCommands = runs.filter((r) => r.ev.ms > from && r.ev.ms < to && (r.kind === "install" || r.kind === "migrate") && r.outcome === "pass");
  if (fixChanges.length === 0 && fixCommands.length === 0) return null; // passed without a change: flaky or environmental, not a lesson
  const lines = failureLines(c.first.ev.output, 2);
  const lastLines = lines.length > 0 ? lines : failureLines(c.lastFail.ev.output, 2);
  const firstFix = fixChanges[0] ?? fixCommands[0]!.ev;
  const cause = causeSentence(events, from, firstFix.ms);
  const fix = fixDescription(events, from, firstFix, cause?.text ?? null);
  const fixFiles = [...new Set(fixChanges.flatMap((e) => e.filePaths))];
  const where = [...new Set([...errorPaths(lastLines, input.projectRoot), ...fixFiles])].slice(0, 8);
  const cmd = describeCommand(c.first);
  const parts = [`\`${cmd}\` failed${lastLines.length > 0 ? `: ${lastLines.map((l) => clip(l, 160)).join(" / ")}` : ""}.`];
  if (cause) parts.push(`Cause: ${cause.text.replace(/[.!]?$/, ".")}`);
  const fixWhat = fix?.text ?? (fixCommands.length > 0 ? `ran \`${clip(fixCommands[0]!.ev.command, 60)}\`` : `changed ${fixFiles.slice(0, 3).join(", ")}`);
  parts.push(`Fix${fixFiles.length > 0 ? ` (${fixFiles.slice(0, 3).join(", ")})` : ""}: ${fixWhat.replace(/[.!]?$/, ".")}`);
  parts.push(`After the fix \`${describeCommand(c.pass)}\` passed.`);
  const sig = lastLines[0] ? errorSignature(lastLines[0]) : "";
  const keyTail = slug(sig, 5) || slug(fixFiles[0]?.split("/").pop() ?? cmd, 3) || "failure";
  const evidence = [c.first.ev.id, c.lastFail.ev.id, ...fixChanges.map((e) => e.id), ...fixCommands.map((r) => r.ev.id), c.pass.ev.id];
  if (cause) evidence.push(cause.id);
  if (fix) evidence.push(fix.id);
  return {
    type: "pitfall",
    key: `pitfall:${c.first.kind}:${keyTail}`.slice(0, 110),
    content: parts.join(" "),
    tags: ["pitfall", c.first.kind, ...new Set(where.map(languageOf).filter((l): l is string => l !== null))],
    importance: c.attempts > 1 ? 0.85 : 0.8,
    confidence: lastLines.length > 0 && fixChanges.length > 0 ? 0.8 : 0.65,
    scope: "project",
    file_paths: where,
    source_episode_id: input.episodeId,
    source_event_ids: [...new Set(evidence)],
    rule: "pitfalls",
  };
}

export function languageOf(path: string): string | null {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  const map: Record<string, string> = {
    ts: "typescript", tsx: "typescript", js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
    py: "python", go: "go", rs: "rust", rb: "ruby", ex: "elixir", exs: "elixir", java: "java", kt: "kotlin",
    swift: "swift", cs: "csharp", php: "php", c: "c", h: "c", cpp: "cpp", cc: "cpp", scala: "scala", sql: "sql",
    vue: "vue", svelte: "svelte", dart: "dart", zig: "zig", lua: "lua", sh: "shell",
  };
  return ext ? (map[ext] ?? null) : null;
}

export const pitfalls: Rule = (input) => {
  const events = input.events; // subagent runs count too: their failures and fixes are real
  const runs = commandRuns(events).filter((r) => r.outcome !== "rejected" && r.outcome !== "unknown");
  const changes = appliedChanges(events);
  const { chains } = findChains(runs);
  return chains.map((c) => chainCandidate(input, events, changes, runs, c)).filter((c): c is Candidate => c !== null);
};
