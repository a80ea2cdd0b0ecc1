/** The host table: which MCP clients forward both parts of a result, and the text they forward. */
import { describe, expect, test } from "bun:test";
import { DEFAULT_FORWARDING, forwardedParts, forwardingOf } from "../../../src/mcp/hosts/forwarding.ts";
import { forwardedText, settleFooter } from "../../../src/mcp/tools/tool-answer.ts";
import { defaultCounter } from "../../../src/shared/tokens.ts";

describe("forwardingOf: the host by its initialize clientInfo", () => {
  test("Qwen Code (any server name it registered sqrl under) and Copilot CLI forward both parts", () => {
    expect(forwardingOf({ name: "qwen-cli-mcp-client-sqrl", version: "0.0.1" }).host).toBe("qwen");
    expect(forwardingOf({ name: "qwen-cli-mcp-client-memory" }).host).toBe("qwen");
    expect(forwardingOf({ name: "copilot-cli", version: "1.0.102" }).host).toBe("copilot");
  });
  test("any other client, or a clientInfo that is missing or malformed, keeps the default (the JSON alone)", () => {
    for (const info of [undefined, null, "copilot-cli", {}, { name: 7 }, { name: "copilot-cli-next" }, { name: "x" }])
      expect(forwardingOf(info)).toBe(DEFAULT_FORWARDING);
  });
});

describe("forwardedText: what the host hands the model", () => {
  const answer = { project: "shop", has_relevant_memory: true, markdown: "## Memory\n\n- Use pnpm." };
  const json = JSON.stringify(answer);
  test("default: the JSON; Qwen Code: JSON, newline, markdown; Copilot CLI: markdown, blank line, JSON", () => {
    expect(forwardedText(answer)).toBe(json);
    expect(forwardedText(answer, forwardingOf({ name: "qwen-cli-mcp-client-sqrl" }))).toBe(
      `${json}\n${answer.markdown}`,
    );
    expect(forwardedText(answer, forwardingOf({ name: "copilot-cli" }))).toBe(`${answer.markdown}\n\n${json}`);
    expect(forwardedParts({ json: "J", text: "T" }, DEFAULT_FORWARDING)).toBe("J");
  });
  test("the footer reports the count of both parts for such a host", () => {
    const copilot = forwardingOf({ name: "copilot-cli" });
    const { answer: settled, tokens } = settleFooter(
      { ...answer, markdown: `${answer.markdown}\n\nBudget: ~1/400 tokens · 1 of 1 items shown` },
      400,
      defaultCounter,
      copilot,
    );
    expect(tokens).toBe(defaultCounter.count(forwardedText(settled, copilot)));
    expect(tokens).toBeGreaterThan(defaultCounter.count(forwardedText(settled)));
    expect(settled.markdown).toContain(`Budget: ~${tokens}/400 tokens`);
  });
});
