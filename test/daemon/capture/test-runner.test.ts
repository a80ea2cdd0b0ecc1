import { describe, expect, test } from "bun:test";
import { detectTestRunner, parseTestCounts } from "../../../src/daemon/normalize/test-runner.ts";

describe("detectTestRunner", () => {
  const cases: Array<[string, string | undefined]> = [
    ["bun test", "bun test"],
    ["bun test test/capture --timeout 5000", "bun test"],
    ["npm test", "npm test"],
    ["npm run test -- --watch=false", "npm test"],
    ["pnpm test", "pnpm test"],
    ["pnpm run test:unit", "pnpm test"],
    ["yarn test", "yarn test"],
    ["npx vitest run src/a.test.ts", "vitest"],
    ["npx jest --ci", "jest"],
    ["pnpm vitest run test/auth.test.ts", "vitest"],
    ["yarn jest --ci", "jest"],
    ["bun x vitest run", "vitest"],
    ["pnpm vite build", undefined],
    ["CI=1 pytest -q tests/", "pytest"],
    ["python -m pytest -x", "pytest"],
    ["uv run pytest", "pytest"],
    ["cd app && go test ./... 2>&1 | tail -20", "go test"],
    ["timeout 120 cargo test --workspace", "cargo test"],
    ["mix test test/foo_test.exs", "mix test"],
    ["bundle exec rspec spec/models", "rspec"],
    ["./gradlew test", "gradle test"],
    ["dotnet test", "dotnet test"],
    ["make test", "make test"],
    ["ls -la", undefined],
    ["git commit -m 'add test'", undefined],
    ["npm install", undefined],
    ["cat test/foo.ts", undefined],
    ["bun run build", undefined],
  ];
  for (const [cmd, runner] of cases) test(cmd, () => expect(detectTestRunner(cmd)).toBe(runner));
});

describe("parseTestCounts", () => {
  test("node --test (TAP and spec reporters)", () => {
    expect(parseTestCounts("1..1\n# tests 1\n# suites 0\n# pass 0\n# fail 1\n# cancelled 0")).toEqual({
      passed: 0,
      failed: 1,
    });
    expect(parseTestCounts("ℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ cancelled 0")).toEqual({
      passed: 3,
      failed: 0,
    });
  });
  test("jest", () =>
    expect(parseTestCounts("Tests:       1 failed, 2 skipped, 5 passed, 8 total")).toEqual({ passed: 5, failed: 1 }));
  test("vitest", () =>
    expect(parseTestCounts(" Test Files  1 failed (3)\n      Tests  2 failed | 10 passed (12)")).toEqual({
      passed: 10,
      failed: 2,
    }));
  test("pytest", () =>
    expect(parseTestCounts("===== 3 failed, 10 passed, 1 skipped in 0.52s =====")).toEqual({ passed: 10, failed: 3 }));
  test("bun test", () =>
    expect(parseTestCounts(" 12 pass\n 1 fail\n 30 expect() calls")).toEqual({ passed: 12, failed: 1 }));
  test("cargo sums crates", () =>
    expect(
      parseTestCounts("test result: ok. 3 passed; 0 failed; 0 ignored\ntest result: FAILED. 2 passed; 1 failed;"),
    ).toEqual({ passed: 5, failed: 1 }));
  test("go -v", () =>
    expect(parseTestCounts("=== RUN TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\n--- PASS: TestC")).toEqual(
      { passed: 2, failed: 1 },
    ));
  test("mix", () =>
    expect(parseTestCounts("Finished in 0.1 seconds\n10 tests, 2 failures")).toEqual({ passed: 8, failed: 2 }));
  test("mocha", () => expect(parseTestCounts("  5 passing (20ms)\n  1 failing")).toEqual({ passed: 5, failed: 1 }));
  test("ansi colours", () =>
    expect(parseTestCounts("\u001b[32m 4 pass\u001b[0m\n\u001b[31m 0 fail\u001b[0m")).toEqual({
      passed: 4,
      failed: 0,
    }));
  test("unreadable output gives no counts", () => expect(parseTestCounts("something happened")).toEqual({}));
});
