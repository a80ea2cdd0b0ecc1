/**
 * Recognise test commands in shell commands and read pass/fail counts from their output.
 */
import type { EventContent } from "../../shared/event.ts";

export interface TestRunInfo {
  runner: string;
  passed?: number;
  failed?: number;
}

/** Words that wrap a command without changing what runs (`timeout 60 go test`, `FOO=1 npm test`). */
const WRAPPERS = new Set(["sudo", "time", "timeout", "env", "nice", "command", "exec", "xvfb-run", "dotenv", "--"]);
const RUNNERS_VIA = new Set(["npx", "bunx", "pnpx", "uvx"]);
/** Runner binaries package managers start directly (`pnpm vitest run`, `yarn jest`, `bun x vitest`). */
const DIRECT_BINS = new Set(["vitest", "jest", "mocha", "playwright"]);

interface RunnerRule {
  runner: string;
  test: (words: string[]) => boolean;
}

const is = (w: string[], ...seq: string[]) => seq.every((s, i) => w[i] === s);
const scriptIsTest = (s: string | undefined) =>
  s !== undefined && /^(test|tests|unit|e2e|spec|check:test|test:[\w:-]+)$/.test(s);

const RULES: readonly RunnerRule[] = [
  { runner: "bun test", test: (w) => is(w, "bun", "test") || (is(w, "bun", "run") && scriptIsTest(w[2])) },
  {
    runner: "npm test",
    test: (w) =>
      (w[0] === "npm" && (w[1] === "test" || w[1] === "t" || w[1] === "tst")) ||
      (is(w, "npm", "run") && scriptIsTest(w[2])),
  },
  {
    runner: "pnpm test",
    test: (w) => (w[0] === "pnpm" && scriptIsTest(w[1])) || (is(w, "pnpm", "run") && scriptIsTest(w[2])),
  },
  {
    runner: "yarn test",
    test: (w) => (w[0] === "yarn" && scriptIsTest(w[1])) || (is(w, "yarn", "run") && scriptIsTest(w[2])),
  },
  { runner: "deno test", test: (w) => is(w, "deno", "test") },
  { runner: "vitest", test: (w) => w[0] === "vitest" },
  { runner: "jest", test: (w) => w[0] === "jest" },
  { runner: "mocha", test: (w) => w[0] === "mocha" },
  { runner: "playwright", test: (w) => is(w, "playwright", "test") },
  {
    runner: "pytest",
    test: (w) =>
      w[0] === "pytest" || w[0] === "py.test" || (/^python[\d.]*$/.test(w[0] ?? "") && is(w.slice(1), "-m", "pytest")),
  },
  { runner: "unittest", test: (w) => /^python[\d.]*$/.test(w[0] ?? "") && is(w.slice(1), "-m", "unittest") },
  { runner: "tox", test: (w) => w[0] === "tox" || w[0] === "nox" },
  { runner: "go test", test: (w) => is(w, "go", "test") },
  { runner: "cargo test", test: (w) => is(w, "cargo", "test") || is(w, "cargo", "nextest") },
  { runner: "mix test", test: (w) => is(w, "mix", "test") },
  { runner: "rspec", test: (w) => w[0] === "rspec" },
  { runner: "rake test", test: (w) => is(w, "rake", "test") || is(w, "rails", "test") },
  { runner: "phpunit", test: (w) => /(^|\/)phpunit$/.test(w[0] ?? "") || is(w, "php", "artisan", "test") },
  { runner: "dotnet test", test: (w) => is(w, "dotnet", "test") },
  {
    runner: "mvn test",
    test: (w) => /(^|\/)mvnw?$/.test(w[0] ?? "") && w.slice(1).some((x) => x === "test" || x === "verify"),
  },
  {
    runner: "gradle test",
    test: (w) => /(^|\/)gradlew?$/.test(w[0] ?? "") && w.slice(1).some((x) => x === "test" || x === "check"),
  },
  { runner: "swift test", test: (w) => is(w, "swift", "test") },
  { runner: "ctest", test: (w) => w[0] === "ctest" },
  { runner: "make test", test: (w) => w[0] === "make" && w.slice(1).some((x) => scriptIsTest(x) || x === "check") },
  { runner: "zig test", test: (w) => is(w, "zig", "build", "test") || is(w, "zig", "test") },
];

/** Split a shell line into simple commands (on `&&`, `||`, `;`, `|`, newlines) and words. */
function simpleCommands(command: string): string[][] {
  return command
    .split(/&&|\|\||;|\||\n/)
    .map((part) =>
      part
        .trim()
        .split(/\s+/)
        .filter((w) => w.length > 0)
        .map((w) => w.replace(/^["']|["']$/g, "")),
    )
    .filter((w) => w.length > 0);
}

function stripWrappers(words: string[]): string[] {
  let w = words;
  for (let guard = 0; guard < 8; guard++) {
    const first = w[0];
    if (first === undefined) return w;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) w = w.slice(1);
    else if (WRAPPERS.has(first)) w = w.slice(1).filter((x, i) => !(i === 0 && /^\d+[smh]?$/.test(x)));
    else if (RUNNERS_VIA.has(first)) w = w.slice(1).filter((x, i) => !(i === 0 && x.startsWith("-")));
    else if (
      (first === "uv" || first === "poetry" || first === "pipenv" || first === "hatch" || first === "pdm") &&
      w[1] === "run"
    )
      w = w.slice(2);
    else if (first === "bundle" && w[1] === "exec") w = w.slice(2);
    else if ((first === "pnpm" || first === "yarn") && (w[1] === "exec" || w[1] === "dlx")) w = w.slice(2);
    else if ((first === "pnpm" || first === "yarn" || first === "bun") && DIRECT_BINS.has(w[1] ?? "")) w = w.slice(1);
    else if (first === "bun" && w[1] === "x") w = w.slice(2);
    else if (first === "npm" && w[1] === "exec") w = w.slice(2).filter((x) => x !== "--");
    else return w.map((x) => x.replace(/^\.\//, "").replace(/^node_modules\/\.bin\//, ""));
  }
  return w;
}

/** The test runner a shell command invokes, or undefined when it is not a test command. */
/** Every runner rule needs one of these words; a command without any is not a test run. */
const RUNNER_HINT = /test|jest|mocha|rspec|tox|nox|spec|check|e2e|unit|phpunit/;

export function detectTestRunner(command: string): string | undefined {
  if (!RUNNER_HINT.test(command)) return undefined;
  // Long heredocs and scripts: only the first lines can be the command that runs.
  const head = command.length > 2000 ? command.slice(0, 2000) : command;
  for (const words of simpleCommands(head).slice(0, 40)) {
    const w = stripWrappers(words);
    if (w[0] === "cd") continue;
    for (const rule of RULES) if (rule.test(w)) return rule.runner;
  }
  return undefined;
}

function sumAll(output: string, re: RegExp): number | undefined {
  let total: number | undefined;
  for (const m of output.matchAll(re)) total = (total ?? 0) + Number(m[1]);
  return total;
}

function lastMatch(output: string, re: RegExp): RegExpMatchArray | undefined {
  let last: RegExpMatchArray | undefined;
  for (const m of output.matchAll(re)) last = m;
  return last;
}

/** Pass/fail counts from a test run's output, for the summary formats of common runners. */
export function parseTestCounts(output: string): { passed?: number; failed?: number } {
  // ANSI colours would split the numbers from their words.
  // biome-ignore lint: ANSI escape
  const out = output.replace(/\u001b\[[0-9;]*m/g, "");
  // jest: "Tests:       1 failed, 2 skipped, 5 passed, 8 total"
  const jest = lastMatch(out, /^\s*Tests:\s+(.*\d+ total)/gm);
  if (jest?.[1]) return { passed: num(jest[1], /(\d+) passed/), failed: num(jest[1], /(\d+) failed/) ?? 0 };
  // vitest: "Tests  2 failed | 10 passed (12)"
  const vitest = lastMatch(out, /^\s*Tests\s+(.*\(\d+\))/gm);
  if (vitest?.[1]) return { passed: num(vitest[1], /(\d+) passed/) ?? 0, failed: num(vitest[1], /(\d+) failed/) ?? 0 };
  // cargo: "test result: ok. 10 passed; 0 failed; ..."
  if (/test result: /.test(out))
    return {
      passed: sumAll(out, /test result: \w+\. (\d+) passed/g) ?? 0,
      failed: sumAll(out, /test result: \w+\. \d+ passed; (\d+) failed/g) ?? 0,
    };
  // pytest: "==== 2 failed, 10 passed, 1 skipped in 0.52s ===="
  const pytest = lastMatch(out, /^=+ (.*\bin [\d.]+s.*) =+$/gm);
  if (pytest?.[1] && /passed|failed|error/.test(pytest[1]))
    return {
      passed: num(pytest[1], /(\d+) passed/) ?? 0,
      failed: (num(pytest[1], /(\d+) failed/) ?? 0) + (num(pytest[1], /(\d+) errors?/) ?? 0),
    };
  // bun test: " 12 pass\n 1 fail"
  // node --test: "# pass 1" / "# fail 0" (TAP reporter), "ℹ pass 1" / "ℹ fail 0" (spec reporter)
  const nodePass = lastMatch(out, /^[#ℹ] pass (\d+)$/gm);
  const nodeFail = lastMatch(out, /^[#ℹ] fail (\d+)$/gm);
  if (nodePass && nodeFail) return { passed: Number(nodePass[1]), failed: Number(nodeFail[1]) };
  const bunPass = lastMatch(out, /^\s*(\d+) pass$/gm);
  const bunFail = lastMatch(out, /^\s*(\d+) fail$/gm);
  if (bunPass || bunFail) return { passed: Number(bunPass?.[1] ?? 0), failed: Number(bunFail?.[1] ?? 0) };
  // mocha: "5 passing (20ms)" / "1 failing"
  const mochaPass = lastMatch(out, /^\s*(\d+) passing\b/gm);
  if (mochaPass)
    return { passed: Number(mochaPass[1]), failed: Number(lastMatch(out, /^\s*(\d+) failing\b/gm)?.[1] ?? 0) };
  // mix / rspec: "10 tests, 2 failures" / "10 examples, 2 failures"
  const mix = lastMatch(out, /(\d+) (?:tests?|examples?|doctests?), (\d+) failures?/g);
  if (mix) return { passed: Number(mix[1]) - Number(mix[2]), failed: Number(mix[2]) };
  // go test -v: "--- PASS: TestX" / "--- FAIL: TestY"
  const goPass = out.match(/^\s*--- PASS: /gm)?.length;
  const goFail = out.match(/^\s*--- FAIL: /gm)?.length;
  if (goPass || goFail) return { passed: goPass ?? 0, failed: goFail ?? 0 };
  // phpunit: "OK (5 tests, 10 assertions)" / "Tests: 5, Assertions: 9, Failures: 1"
  const phpOk = lastMatch(out, /OK \((\d+) tests?/g);
  if (phpOk) return { passed: Number(phpOk[1]), failed: 0 };
  const php = lastMatch(
    out,
    /Tests: (\d+), Assertions: \d+(?:, (?:Errors|Failures): (\d+))?(?:, (?:Errors|Failures): (\d+))?/g,
  );
  if (php) {
    const failed = Number(php[2] ?? 0) + Number(php[3] ?? 0);
    return { passed: Number(php[1]) - failed, failed };
  }
  // dotnet: "Failed: 1, Passed: 5"
  const dotnet = lastMatch(out, /Failed:\s+(\d+), Passed:\s+(\d+)/g);
  if (dotnet) return { passed: Number(dotnet[2]), failed: Number(dotnet[1]) };
  // python unittest: "Ran 5 tests" + "OK" / "FAILED (failures=2)"
  const ran = lastMatch(out, /^Ran (\d+) tests? in/gm);
  if (ran) {
    const f = lastMatch(out, /FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?/g);
    const failed = f ? Number(f[1] ?? 0) + Number(f[2] ?? 0) : 0;
    return { passed: Number(ran[1]) - failed, failed };
  }
  return {};
}

function num(s: string, re: RegExp): number | undefined {
  const m = re.exec(s);
  return m ? Number(m[1]) : undefined;
}

/** Runner and counts for a shell command, or undefined when it is not a test command. */
export function testRunInfo(command: string, output: string): TestRunInfo | undefined {
  const runner = detectTestRunner(command);
  if (!runner) return undefined;
  const counts = parseTestCounts(output);
  const info: TestRunInfo = { runner };
  if (counts.passed !== undefined && counts.passed >= 0) info.passed = counts.passed;
  if (counts.failed !== undefined && counts.failed >= 0) info.failed = counts.failed;
  return info;
}

/** What every normalizer knows of a finished shell command. */
export interface ShellResult {
  tool: string;
  tool_use_id: string | undefined;
  command: string;
  exit_code: number | null;
  output: string;
  is_error: boolean;
  record_id: string | undefined;
  raw: unknown;
}

/** A finished shell command as an event: a `test_run` (with runner and counts) when it ran tests, else a `command_run`. */
export function shellEvent(r: ShellResult): { type: "test_run" | "command_run"; content: EventContent } {
  const test = r.command ? testRunInfo(r.command, r.output) : undefined;
  return test ? { type: "test_run", content: { ...r, ...test } } : { type: "command_run", content: { ...r } };
}
