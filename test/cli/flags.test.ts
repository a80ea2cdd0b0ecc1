import { describe, expect, test } from "bun:test";
import type { ArgsDef } from "citty";
import { closestFlag, findUnknownFlag } from "../../src/cli/flags.ts";

const LOGS: ArgsDef = {
  follow: { type: "boolean", alias: "f" },
  lines: { type: "string", alias: "n" },
  json: { type: "boolean" },
  backfill: { type: "boolean", default: true },
  "top-k": { type: "string", alias: "top" },
  query: { type: "positional" },
};

describe("unknown flags", () => {
  test("every declared spelling is accepted: long, kebab, alias, --no-, =value, bundled short flags", () => {
    for (const argv of [
      ["--follow"],
      ["-f", "-n", "5"],
      ["-fn5"],
      ["-n5"],
      ["--lines=3"],
      ["--no-backfill"],
      ["--top-k", "1"],
      ["--top=2"],
      ["--json", "--debug"],
      ["x", "--", "--anything"],
      ["--lines", "-5"],
    ]) {
      expect({ argv, r: findUnknownFlag(argv, [LOGS]) }).toEqual({ argv, r: undefined });
    }
  });

  test("anything else is named, with the closest real flag when there is a plausible one", () => {
    expect(findUnknownFlag(["--bogus"], [LOGS])).toEqual({ flag: "--bogus", suggestion: undefined });
    expect(findUnknownFlag(["--folow"], [LOGS])!.suggestion).toBe("--follow");
    expect(findUnknownFlag(["--topk", "1"], [LOGS])!.suggestion).toBe("--top-k");
    expect(findUnknownFlag(["-fx"], [LOGS])!.flag).toBe("-fx");
    expect(closestFlag("--bduget", ["--budget", "--files", "--types"])).toBe("--budget");
  });
});
