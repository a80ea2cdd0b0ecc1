/**
 * The labelled secret set (issue 13 items 12–13, issue 17 prose secrets): every planted secret is
 * redacted whole (no 12-character piece survives), every look-alike comes out unchanged. The rates
 * over the same set are what `bun run bench faults` reports.
 */
import { describe, expect, test } from "bun:test";
import { redactText } from "../../../src/shared/privacy/redact.ts";
import { LOOK_ALIKES, SECRET_CASES } from "../../fixtures/secrets/labelled.ts";
import { leakedPiece } from "../../fixtures/secrets/score.ts";

describe("planted secrets are redacted whole", () => {
  for (const c of SECRET_CASES) {
    test(c.name, () => {
      const out = redactText(c.text, { envFile: c.envFile === true });
      expect(leakedPiece(out, c.secret)).toBeNull();
    });
  }
});

describe("look-alikes are left exactly as they are", () => {
  for (const c of LOOK_ALIKES) {
    test(c.name, () => {
      expect(redactText(c.text)).toBe(c.text);
    });
  }
});

test("the set is big enough to measure: at least 60 secrets and 60 look-alikes", () => {
  expect(SECRET_CASES.length).toBeGreaterThanOrEqual(60);
  expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(60);
});
