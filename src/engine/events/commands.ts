/**
 * Shell commands as the rules see them: split into steps, wrappers stripped, each step classified
 * (test, lint, build…), and the outcome of a run read from exit code, error flag and output.
 */
import type { EngineEvent } from "./event-view.ts";

export type CommandKind =
  | "test"
  | "lint"
  | "format"
  | "typecheck"
  | "build"
  | "install"
  | "migrate"
  | "generate"
  | "dev"
  | "release"
  | "git"
  | "explore"
  | "other";

/** Kinds whose green run proves something about the code (pitfalls and recipes are built on them). */
/** `git commit`, also with the options git takes before its subcommand (`git -C <repo> commit`, `git -c k=v commit`). */
export const GIT_COMMIT = /\bgit\s+(?:-[Cc]\s+\S+\s+)*commit\b/;

export const CHECK_KINDS: ReadonlySet<CommandKind> = new Set([
  "test",
  "lint",
  "format",
  "typecheck",
  "build",
  "migrate",
  "generate",
  "install",
  "release",
]);

export interface CommandStep {
  /** The step as run, wrappers and redirections removed. */
  text: string;
  /** `text` without targeting arguments (a single test name, file filters): what a recipe would reuse. */
  base: string;
  kind: CommandKind;
  /** Whether it ran a subset (`-run X`, `-k`, a single test file…). */
  targeted: boolean;
  /** Package manager the step used, when it names one (npm, pnpm, yarn, bun, pip, uv, poetry, pipenv). */
  manager: string | null;
}

const TASK_RUNNER = String.raw`(?:(?:npm|pnpm|yarn|bun)(?:\s+run)?|mise\s+run|make|just|task|turbo(?:\s+run)?|nx(?:\s+run)?|deno\s+task|composer)`;
/** How a JS tool's binary is launched through a package manager: `npx vitest`, `pnpm vitest`, `pnpm exec eslint`, `yarn dlx`, `bunx`, `bun x`. */
const JS_BIN = String.raw`(?:npx\s+|bunx\s+|bun\s+x\s+|(?:pnpm|yarn)\s+(?:exec\s+|dlx\s+)?|npm\s+exec\s+(?:--\s+)?)?`;

const KIND_PATTERNS: Array<[CommandKind, RegExp]> = [
  ["test", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:test|tests|spec|e2e|test:[\w:-]+)\b`)],
  ["test", new RegExp(String.raw`^${JS_BIN}(?:vitest|jest|mocha|ava|playwright\s+test|cypress\s+run|karma)\b`)],
  ["test", /^(?:bun|deno|go|cargo|mix|dotnet|swift|zig|flutter|dart)\s+test\b/],
  ["test", /^cargo\s+nextest\b/],
  ["test", /^(?:python3?\s+-m\s+|uv\s+run\s+|poetry\s+run\s+|pipenv\s+run\s+)?(?:pytest|tox|nox|unittest)\b/],
  ["test", /^(?:bundle\s+exec\s+)?(?:rspec|rails\s+test|rake\s+test)\b/],
  ["test", /^(?:\.\/gradlew|gradle|mvn)\s+(?:test|check|verify)\b/],
  ["lint", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:lint|lint:[\w:-]+|check|vet)\b`)],
  ["lint", new RegExp(String.raw`^${JS_BIN}(?:eslint|biome\s+(?:check|lint)|oxlint|stylelint|xo|standard)\b`)],
  [
    "lint",
    /^(?:golangci-lint|staticcheck|shellcheck|hadolint|actionlint|rubocop|flake8|pylint|ruff\s+check|ruff(?!\s+format)|swiftlint|ktlint)\b/,
  ],
  ["lint", /^(?:go\s+vet|cargo\s+clippy|mix\s+credo)\b/],
  ["format", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:fmt|format|prettier|fmt:[\w:-]+|format:[\w:-]+)\b`)],
  ["format", new RegExp(String.raw`^${JS_BIN}(?:prettier|biome\s+format|dprint)\b`)],
  [
    "format",
    /^(?:gofmt|goimports|go\s+fmt|cargo\s+fmt|mix\s+format|ruff\s+format|black|isort|rustfmt|clang-format|swiftformat)\b/,
  ],
  ["typecheck", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:typecheck|type-check|check-types|tsc|types)\b`)],
  ["typecheck", new RegExp(String.raw`^${JS_BIN}(?:tsc|vue-tsc)\b`)],
  ["typecheck", /^(?:mypy|pyright|basedpyright|mix\s+dialyzer|cargo\s+check)\b/],
  // Code/SQL generation steps (migration files, ORM clients, protobuf/GraphQL code) — before "migrate": `makemigrations` generates.
  [
    "generate",
    new RegExp(
      String.raw`^${TASK_RUNNER}\s+(?:generate|gen|codegen|[\w-]+:(?:generate|gen|codegen)|(?:generate|gen|codegen):[\w:-]+)\b`,
    ),
  ],
  [
    "generate",
    new RegExp(
      String.raw`^${JS_BIN}(?:drizzle-kit\s+generate|prisma\s+generate|graphql-codegen|openapi-typescript|openapi-generator(?:-cli)?\s+generate)\b`,
    ),
  ],
  [
    "generate",
    /^(?:go\s+generate|buf\s+generate|sqlc\s+generate|protoc|python3?\s+manage\.py\s+makemigrations|alembic\s+revision\b.*--autogenerate|flask\s+db\s+migrate|rails\s+generate\s+migration|bin\/rails\s+generate\s+migration)\b/,
  ],
  [
    "migrate",
    /migrat|\bdb:(?:migrate|push)\b|\bprisma\s+(?:db\s+push|migrate)\b|\balembic\s+upgrade\b|\becto\.(?:migrate|rollback)\b|\bdrizzle-kit\s+(?:push|migrate)\b/,
  ],
  ["build", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:build|compile|bundle|package|build:[\w:-]+)\b`)],
  ["build", /^(?:go|cargo|bun|zig|swift|dotnet)\s+build\b/],
  [
    "build",
    /^(?:mix\s+compile|vite\s+build|next\s+build|docker\s+(?:build|compose\s+build)|\.\/gradlew\s+build|gradle\s+build|mvn\s+(?:package|install)|tsup|esbuild|webpack|rollup)\b/,
  ],
  ["build", /^make\s*$/],
  ["install", /^(?:npm|pnpm|yarn|bun)\s+(?:install|i|ci|add)\b/],
  ["install", /^(?:npm|pnpm|yarn|bun)\s*$/],
  ["install", /^(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b/],
  [
    "install",
    /^(?:uv\s+(?:sync|add)|poetry\s+(?:install|add)|pipenv\s+install|cargo\s+add|go\s+(?:get|mod\s+(?:tidy|download))|mix\s+deps\.get|bundle\s+install|composer\s+(?:install|require))\b/,
  ],
  ["dev", new RegExp(String.raw`^${TASK_RUNNER}\s+(?:dev|start|serve|preview|watch)\b`)],
  [
    "dev",
    /^(?:mix\s+phx\.server|iex\s+-S\s+mix|rails\s+s(?:erver)?|uvicorn|gunicorn|flask\s+run|python3?\s+manage\.py\s+runserver|cargo\s+run|go\s+run|bun\s+(?:--watch|--hot)|vite(?:\s+dev)?\s*$|next\s+dev|docker\s+compose\s+up)\b/,
  ],
  [
    "release",
    new RegExp(
      String.raw`^(?:(?:npm|pnpm|yarn)\s+publish|cargo\s+publish|gh\s+release|goreleaser|changeset\s+(?:version|publish)|${TASK_RUNNER}\s+release)\b`,
    ),
  ],
  ["git", /^git\s+/],
  [
    "explore",
    /^(?:ls|cat|sed|head|tail|grep|rg|find|fd|pwd|echo|wc|tree|which|file|stat|du|df|less|more|nl|awk|jq|cd|curl|open|printf|true|sleep|ps|kill|env)\b/,
  ],
];

const MANAGERS: Array<[string, RegExp]> = [
  ["pnpm", /^(?:pnpm|pnpx)\b/],
  ["yarn", /^yarn\b/],
  ["bun", /^(?:bun|bunx)\b/],
  ["npm", /^(?:npm|npx)\b/],
  ["uv", /^(?:uv|uvx)\b/],
  ["poetry", /^poetry\b/],
  ["pipenv", /^pipenv\b/],
  ["pip", /^(?:pip3?|python3?\s+-m\s+pip)\b/],
];

/** Targeting arguments: a subset of tests or files rather than the whole suite. */
const TARGETING =
  /\s(?:-run|-k|-t|--grep|-g|--testNamePattern|--test-name-pattern|--filter|-p|--package|--only)(?:[=\s]+(?:"[^"]*"|'[^']*'|\S+))|\s\S+(?:\.test|\.spec|_test)\.[a-z]+\b|\s\S+::\S+|\stest\/\S+\.exs?(?::\d+)?|\stests?\/\S+\.py\b/g;

function stripWrappers(step: string): string {
  let s = step.trim();
  s = s.replace(/^(?:bash|sh|zsh)\s+-l?c\s+(['"])([\s\S]*)\1$/, "$2").trim();
  s = s.replace(/^(?:[A-Z_][A-Z0-9_]*=(?:"[^"]*"|'[^']*'|\S*)\s+)+/, "");
  s = s.replace(/^(?:timeout\s+\d+[smh]?\s+|time\s+|nice\s+|command\s+|exec\s+|sudo\s+)+/, "");
  s = s.replace(/\s+\d?>>?\s*(?:&\d|\/dev\/null|\S+)/g, "").replace(/\s+2>&1/g, "");
  return s.trim();
}

function kindOf(text: string): CommandKind {
  for (const [kind, re] of KIND_PATTERNS) if (re.test(text)) return kind;
  return "other";
}

function managerOf(text: string): string | null {
  for (const [name, re] of MANAGERS) if (re.test(text)) return name;
  return null;
}

function baseOf(text: string, kind: CommandKind): { base: string; targeted: boolean } {
  if (kind !== "test" && kind !== "lint" && kind !== "typecheck") return { base: text, targeted: false };
  const base = ` ${text}`
    .replace(TARGETING, "")
    .replace(/\s+--\s*$/, "")
    .replace(/\s+/g, " ")
    .trim();
  return { base, targeted: base !== text.replace(/\s+/g, " ").trim() };
}

/** Split a command line into classified steps (`a && b; c | head` → a, b, c). */
export function parseCommand(command: string): CommandStep[] {
  const inner = command.replace(/^(?:bash|sh|zsh)\s+-l?c\s+(['"])([\s\S]*)\1$/, "$2");
  const steps: CommandStep[] = [];
  for (const rawLine of inner.split(/\n/)) {
    const line = rawLine.replace(/(^|\s)#.*$/, "").trim();
    if (!line || /^set\s+-/.test(line)) continue;
    for (const part of line.split(/\s*(?:&&|\|\||;)\s*/)) {
      const head = part.split(/\s\|\s?|\s?\|\s/)[0] ?? "";
      const text = stripWrappers(head);
      if (!text) continue;
      const kind = kindOf(text);
      const { base, targeted } = baseOf(text, kind);
      steps.push({ text, base, kind, targeted, manager: managerOf(text) });
    }
  }
  return steps;
}

/** The most meaningful kind of a whole command line (a check beats exploration). */
export function mainKind(steps: readonly CommandStep[]): CommandKind {
  const order: CommandKind[] = [
    "test",
    "lint",
    "typecheck",
    "build",
    "migrate",
    "generate",
    "format",
    "release",
    "install",
    "dev",
    "git",
    "other",
    "explore",
  ];
  for (const k of order) if (steps.some((s) => s.kind === k)) return k;
  return "other";
}

export type Outcome = "pass" | "fail" | "unknown" | "rejected";

const FAIL_LINE = [
  /^\s*(?:---\s*)?FAIL\b/,
  /^\s*FAILED\b/,
  /\b[1-9]\d*\s+(?:failed|failing|failures?|errors?)\b/i,
  /^\s*\S+\.[A-Za-z]{1,5}:\d+(?::\d+)?:?\s+\S/,
  /^\s*\S+\.[A-Za-z]{1,5}\(\d+,\d+\):\s+error\b/, // tsc: "src/a.ts(16,38): error TS2307: …"
  /^\s*(?:error|ERROR)(?:\[[\w-]+\])?:/,
  /^\s*\S*(?:Error|Exception):\s/,
  /Traceback \(most recent call last\)/,
  /^\s*panic:/,
  /npm ERR!|ERR_PNPM|error Command failed/,
  /(?:compilation|build|tests?) failed/i,
  /^\s*[✗✖×]\s/,
  /Found [1-9]\d* errors?/,
  /\*\*\s*\(\w*Error\)/,
];
const PASS_HINT = [
  /\b0 (?:issues|errors|problems|failures|failed)\b/i,
  /\ball (?:\d+ )?tests? passed\b/i,
  /^\s*ok\s+\S/m,
  /\b\d+ passed\b/,
  /^\s*PASS\b/m,
  /\bno issues\b/i,
  /\b0 failures\b/,
];

/** Output lines that show the failure, most telling first. */
export function failureLines(output: string, max = 2): string[] {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && l.length < 2000);
  const hits: string[] = [];
  for (const l of lines) {
    if (/^\s*\[[\w:-]+\]\s*\$/.test(l)) continue; // task-runner echo lines ("[lint:go] $ …")
    if (/\b0 (?:issues|errors|failures|failed)\b/i.test(l)) continue;
    if (FAIL_LINE.some((re) => re.test(l.replace(/^\[[\w:-]+\]\s*/, "")))) hits.push(l.replace(/^\[[\w:-]+\]\s*/, ""));
    if (hits.length >= max) break;
  }
  return hits;
}

/** Did this command/test run pass? Reads counts, exit code, the error flag, then (for checks) the output. */
export function commandOutcome(e: EngineEvent, kind: CommandKind = mainKind(parseCommand(e.command))): Outcome {
  if (e.rejected) return "rejected";
  const failed = typeof e.content.failed === "number" ? e.content.failed : undefined;
  const passed = typeof e.content.passed === "number" ? e.content.passed : undefined;
  if (failed !== undefined && failed > 0) return "fail";
  if (e.exitCode !== null && e.exitCode !== 0) return "fail";
  if (e.isError) return "fail";
  // A git hook that failed stopped the command, whatever the wrapper around git exited with.
  if (/^husky - [\w-]+ (?:script|hook) failed \(code [1-9]\d*\)/m.test(e.output)) return "fail";
  const checks = CHECK_KINDS.has(kind) || kind === "dev";
  if (checks && failureLines(e.output, 1).length > 0) {
    if (
      PASS_HINT.some((re) => re.test(e.output)) &&
      !/\bFAIL\b/.test(e.output) &&
      !/[1-9]\d*\s+(?:failed|errors?)\b/i.test(e.output)
    )
      return "pass";
    return "fail";
  }
  if (e.exitCode === 0) return "pass";
  if (passed !== undefined && passed > 0) return "pass";
  if (checks && e.output.trim().length > 0) return "pass";
  return "unknown";
}

/**
 * Kinds that act on the project as a whole (its one database, its generated code, its type check):
 * a later run of the same kind is the same check even through another command (`drizzle-kit migrate`
 * then `pnpm db:migrate`). Tests and linters are matched by command, since a run can target a subset.
 */
const PROJECT_WIDE: ReadonlySet<CommandKind> = new Set(["migrate", "generate", "typecheck"]);

/** The step of a run that gives it its kind. */
export function mainStep(run: CommandRun): CommandStep | undefined {
  return run.steps.find((s) => s.kind === run.kind) ?? run.steps[0];
}

/** The check a step performs, for matching a later run of "the same" check. */
function checkIdentity(step: CommandStep): string {
  const words = step.base.split(/\s+/).filter((w) => !w.startsWith("-") && w !== "--");
  return `${step.kind}:${words.slice(0, 3).join(" ")}`;
}

/** Is `b` a later run of the check `a` ran (same kind, and the same command unless the kind is project-wide)? */
export function sameCheck(a: CommandRun, b: CommandRun): boolean {
  if (a.kind !== b.kind) return false;
  if (PROJECT_WIDE.has(a.kind)) return true;
  const sa = mainStep(a);
  const sb = mainStep(b);
  if (!sa || !sb) return false;
  if (checkIdentity(sa) === checkIdentity(sb)) return true;
  const ha = sa.base.split(/\s+/).slice(0, 2).join(" ");
  const hb = sb.base.split(/\s+/).slice(0, 2).join(" ");
  return ha === hb;
}

/** A command event (command_run/test_run) with its parsed steps and outcome. */
export interface CommandRun {
  ev: EngineEvent;
  steps: CommandStep[];
  kind: CommandKind;
  outcome: Outcome;
}

export function commandRuns(events: readonly EngineEvent[]): CommandRun[] {
  const out: CommandRun[] = [];
  for (const ev of events) {
    if (ev.type !== "command_run" && ev.type !== "test_run") continue;
    if (!ev.command) continue;
    const steps = parseCommand(ev.command);
    if (steps.length === 0) continue;
    const kind = ev.type === "test_run" ? "test" : mainKind(steps);
    out.push({ ev, steps, kind, outcome: commandOutcome(ev, kind) });
  }
  return out;
}
