import { describe, expect, test } from "bun:test";
import { isEnvFilePath, redactDeep, redactText } from "../../../src/shared/privacy/redact.ts";
import { REDACT_CORPUS } from "./redact-corpus.ts";

describe("redactText corpus", () => {
  for (const c of REDACT_CORPUS) {
    test(c.name, () => {
      const out = redactText(c.text, { envFile: c.envFile === true });
      for (const s of c.secrets) expect(out).not.toContain(s);
      for (const k of c.keep) expect(out).toContain(k);
      if (c.secrets.length === 0) expect(out).toBe(c.text);
    });
  }
});

describe("redactDeep", () => {
  test("walks nested objects and arrays, leaves non-strings alone", () => {
    const key = "sk-" + "ant-api03-" + "AAAABBBBCCCCDDDDEEEEFFFF1234";
    const value = { a: [`x ${key}`, 3, null, { b: `password=hunter22` }], n: 5, t: true };
    const out = redactDeep(value);
    expect(JSON.stringify(out)).not.toContain(key);
    expect(JSON.stringify(out)).not.toContain("hunter22");
    expect(out.n).toBe(5);
    expect(out.t).toBe(true);
    expect(out.a[1]).toBe(3);
    expect(out.a[2]).toBeNull();
  });
});

test("redactDeep: a secret-named key hides its string value, other keys stay", () => {
  const out = redactDeep({
    username: "bob",
    password: "correct-horse",
    db: { apiKey: "abcd1234efgh" },
    max_tokens: 4096,
    tokenizer: "cl100k",
  });
  expect(out).toEqual({
    username: "bob",
    password: "[REDACTED:password]",
    db: { apiKey: "[REDACTED:password]" },
    max_tokens: 4096,
    tokenizer: "cl100k",
  });
});

test("isEnvFilePath", () => {
  expect(isEnvFilePath("/repo/.env")).toBe(true);
  expect(isEnvFilePath(".env.local")).toBe(true);
  expect(isEnvFilePath("config/prod.env")).toBe(true);
  expect(isEnvFilePath(".env.example")).toBe(false);
  expect(isEnvFilePath("src/environment.ts")).toBe(false);
});
