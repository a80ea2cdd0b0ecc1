/**
 * Rule `style-habits`: what the sessions actually RUN — package manager, test command and its flags,
 * linter, formatter, type checker, build and dev-server commands — and how commits are written.
 * These are repo conventions (scope `project`): the same person uses npm in one repo and pnpm in another.
 */
import type { Candidate, Rule, RuleInput } from "./candidate.ts";
import { commandRuns, type CommandKind, type CommandRun, type CommandStep } from "../../events/commands.ts";
import { clip, type EngineEvent } from "../../events/event-view.ts";

const JS_MANAGERS = new Set(["npm", "pnpm", "yarn", "bun"]);
const PY_MANAGERS = new Set(["pip", "uv", "poetry", "pipenv"]);
const MANAGER_USE =
  /^(?:npm|pnpm|yarn|bun)\s+(?:install|i|add|ci|run|test|exec|x|dlx|remove|rm|update|up|build|dev|start|lint|create)\b|^(?:pnpm|yarn|bun)\s*$|^bunx?\s|^(?:uv|poetry|pipenv)\s+\w+|^(?:pip3?|python3?\s+-m\s+pip)\s+install/;

function base(
  partial: Omit<Candidate, "rule" | "source_episode_id" | "file_paths"> & { file_paths?: string[] },
  input: RuleInput,
  rule: string,
): Candidate {
  return { file_paths: [], ...partial, source_episode_id: input.episodeId, rule };
}

function usableRuns(events: readonly EngineEvent[]): CommandRun[] {
  return commandRuns(events).filter((r) => r.outcome !== "rejected");
}

function managerCandidate(input: RuleInput, runs: CommandRun[], family: Set<string>, key: string): Candidate | null {
  const counts = new Map<string, { n: number; ok: number; ids: string[]; examples: string[] }>();
  for (const r of runs) {
    for (const s of r.steps) {
      if (!s.manager || !family.has(s.manager) || !MANAGER_USE.test(s.text)) continue;
      const c = counts.get(s.manager) ?? { n: 0, ok: 0, ids: [], examples: [] };
      c.n++;
      if (r.outcome === "pass") c.ok++;
      c.ids.push(r.ev.id);
      if (c.examples.length < 2 && !c.examples.includes(s.base)) c.examples.push(clip(s.base, 60));
      counts.set(s.manager, c);
    }
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1].n - a[1].n);
  const [top, second] = ranked;
  if (!top) return null;
  const [name, c] = top;
  if (second && second[1].n * 2 >= c.n) return null; // mixed use: no habit to state
  if (c.n < 2 && c.ok < 1) return null;
  return base(
    {
      type: "user_style",
      key,
      content: `Uses ${name} as the package manager (e.g. ${c.examples.map((e) => `\`${e}\``).join(", ")}).`,
      tags: ["tooling", "package-manager", name],
      importance: 0.6,
      confidence: Math.min(0.8, 0.5 + 0.1 * c.n),
      scope: "project",
      source_event_ids: [...new Set(c.ids)].slice(0, 20),
      value: name,
    },
    input,
    "style-habits:package-manager",
  );
}

const FLAG = /(?:^|\s)(-{1,2}[A-Za-z][\w-]*(?:=\S+)?)/g;
const TARGET_FLAGS = /^(?:-run|-{1,2}(?:k|t|grep|g|testNamePattern|test-name-pattern|filter|p|package|only))(?:=|$)/;

interface KindSpec {
  kind: CommandKind;
  key: string;
  label: string;
}
const KIND_SPECS: KindSpec[] = [
  { kind: "test", key: "test_command", label: "Runs tests with" },
  { kind: "lint", key: "lint_command", label: "Lints with" },
  { kind: "format", key: "format_command", label: "Formats with" },
  { kind: "typecheck", key: "typecheck_command", label: "Type-checks with" },
  { kind: "build", key: "build_command", label: "Builds with" },
  { kind: "dev", key: "dev_command", label: "Starts the app with" },
];

/**
 * The reusable part of a command: its leading words up to the first flag or path argument
 * (`go test ./... -count=1 -v` → `go test ./...`, `mise run test ./pkg/x/...` → `mise run test`).
 */
export function commandHead(step: CommandStep): string {
  const out: string[] = [];
  for (const t of step.base.split(/\s+/)) {
    if (t === "./..." || t === "...") {
      out.push(t);
      break;
    }
    if (t.startsWith("-") || /[/\\]|\.\w{1,5}$|^["']/.test(t)) break;
    out.push(t);
  }
  return out.join(" ") || step.base;
}

function kindCandidate(input: RuleInput, runs: CommandRun[], spec: KindSpec): Candidate | null {
  const heads = new Map<string, { n: number; ids: string[] }>();
  const flags = new Set<string>();
  const targeted: string[] = [];
  for (const r of runs) {
    for (const s of r.steps) {
      if (s.kind !== spec.kind) continue;
      const head = commandHead(s);
      const h = heads.get(head) ?? { n: 0, ids: [] };
      h.n += s.targeted ? 0.5 : 1;
      h.ids.push(r.ev.id);
      heads.set(head, h);
      for (const m of s.text.matchAll(FLAG)) if (!TARGET_FLAGS.test(m[1]!)) flags.add(m[1]!);
      if (s.targeted && targeted.length < 1) targeted.push(clip(s.text, 100));
    }
  }
  const ranked = [...heads.entries()].sort((a, b) => b[1].n - a[1].n);
  const top = ranked[0];
  if (!top) return null;
  const [head, h] = top;
  const parts = [`${spec.label} \`${head}\``];
  if (flags.size > 0) parts.push(`flags used: \`${[...flags].slice(0, 6).join(" ")}\``);
  if (targeted.length > 0 && spec.kind === "test") parts.push(`single tests: \`${targeted[0]}\``);
  const cand = base(
    {
      type: "user_style",
      key: spec.key,
      content: `${parts.join("; ")}.`,
      tags: ["tooling", spec.kind],
      importance: spec.kind === "test" ? 0.65 : 0.55,
      confidence: Math.min(0.8, 0.55 + 0.1 * h.n),
      scope: "project",
      source_event_ids: [...new Set(h.ids)].slice(0, 20),
      value: head,
    },
    input,
    `style-habits:${spec.kind}`,
  );
  // How an app is started is worth telling only when sessions do it again (one background run of a
  // framework's default server tells an agent nothing new).
  return cand && spec.kind === "dev" ? { ...cand, gate: { kind: "recipe", signature: `dev:${head}` } } : cand;
}

const CONVENTIONAL = /^(?:feat|fix|chore|docs|refactor|test|tests|perf|build|ci|style|revert)(?:\([^)]*\))?!?:\s/;
const TICKET = /^\[?[A-Z][A-Z0-9]+-\d+\]?[:\s]/;
const IMPERATIVE =
  /^(?:Add|Fix|Update|Remove|Refactor|Move|Make|Use|Implement|Improve|Rename|Bump|Support|Allow|Handle|Introduce|Drop|Replace|Simplify|Extract|Clean|Document|Set|Create|Delete|Enable|Disable|Avoid|Ensure|Show|Change)\b/;

function commitMessages(input: RuleInput, runs: CommandRun[]): Array<{ msg: string; id: string }> {
  const out: Array<{ msg: string; id: string }> = [];
  for (const e of input.events) {
    const m = e.type === "git_commit" ? e.content.commit?.message : undefined;
    if (m) out.push({ msg: m.split("\n")[0]!.trim(), id: e.id });
  }
  for (const r of runs) {
    for (const s of r.steps) {
      const m = /^git\s+(?:-[Cc]\s+\S+\s+)*commit\b.*?\s-(?:a?m)\s+(?:"([^"]+)"|'([^']+)')/.exec(s.text);
      const msg = m?.[1] ?? m?.[2];
      if (msg && r.outcome !== "fail") out.push({ msg: msg.split("\n")[0]!.trim(), id: r.ev.id });
    }
  }
  return out;
}

function commitStyle(input: RuleInput, runs: CommandRun[]): Candidate | null {
  const msgs = commitMessages(input, runs);
  if (msgs.length < 2) return null;
  const share = (re: RegExp) => msgs.filter((m) => re.test(m.msg)).length / msgs.length;
  const examples = msgs
    .slice(0, 2)
    .map((m) => `"${clip(m.msg, 60)}"`)
    .join(", ");
  let content: string | null = null;
  let value = "";
  if (share(CONVENTIONAL) >= 0.6) {
    content = `Commit messages follow Conventional Commits (type(scope): summary), e.g. ${examples}.`;
    value = "conventional";
  } else if (share(TICKET) >= 0.6) {
    content = `Commit messages start with the ticket id, e.g. ${examples}.`;
    value = "ticket-prefix";
  } else if (share(IMPERATIVE) >= 0.6) {
    content = `Commit subjects are short imperative sentences ("Add…", "Fix…"), e.g. ${examples}.`;
    value = "imperative";
  }
  if (!content) return null;
  return base(
    {
      type: "user_style",
      key: "commit_style",
      content,
      tags: ["git", "commits"],
      importance: 0.5,
      confidence: Math.min(0.8, 0.4 + 0.1 * msgs.length),
      scope: "project",
      source_event_ids: msgs.map((m) => m.id).slice(0, 20),
      value,
    },
    input,
    "style-habits:commits",
  );
}

export const styleHabits: Rule = (input) => {
  const runs = usableRuns(input.events);
  const out: Array<Candidate | null> = [
    managerCandidate(input, runs, JS_MANAGERS, "package_manager"),
    managerCandidate(input, runs, PY_MANAGERS, "python_package_manager"),
    ...KIND_SPECS.map((spec) => kindCandidate(input, runs, spec)),
    commitStyle(input, runs),
  ];
  return out.filter((c): c is Candidate => c !== null);
};
