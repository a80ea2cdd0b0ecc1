import { describe, expect, test } from "bun:test";
import { defaultCounter } from "../../../src/shared/tokens.ts";
import { scrubPaths, settleFooter, forwardedText } from "../../../src/mcp/tools/tool-answer.ts";

describe("scrubPaths: no path of this machine reaches the model", () => {
  const root = "/home/ada/code/shop";
  test("files under the root become repo-relative; the root itself '.'; the home '~'", () => {
    expect(scrubPaths("see /home/ada/code/shop/src/a.ts and /home/ada/code/shop", root, "/home/ada")).toBe(
      "see src/a.ts and .",
    );
    expect(scrubPaths("Run `sqrl init /home/ada/code/shop` first.", root, "/home/ada")).toBe(
      "Run `sqrl init .` first.",
    );
    expect(scrubPaths("Episode ep_x is not in /home/ada/code/shop. List episodes.", root, "/home/ada")).toBe(
      "Episode ep_x is not in this project. List episodes.",
    );
    expect(scrubPaths("cache in /home/ada/.cache/x and /home/ada", root, "/home/ada")).toBe(
      "cache in ~/.cache/x and ~",
    );
  });
  test("a sibling that only starts like the root is not the root", () => {
    expect(scrubPaths("/home/ada/code/shop2/a.ts /home/ada/code/shop.old/b", root, "/nowhere")).toBe(
      "/home/ada/code/shop2/a.ts /home/ada/code/shop.old/b",
    );
    expect(scrubPaths("/home/adam/x", undefined, "/home/ada")).toBe("/home/adam/x");
  });
});

describe("settleFooter: the footer reports the forwarded JSON's own tokens", () => {
  test("the figure equals the count of the text the host forwards", () => {
    const { answer, tokens } = settleFooter(
      {
        project: "shop",
        has_relevant_memory: true,
        markdown: "## Memory\n\n- Use pnpm.\n\nBudget: ~12/400 tokens · 1 of 1 items shown",
      },
      400,
      defaultCounter,
    );
    expect(tokens).toBe(defaultCounter.count(forwardedText(answer)));
    expect(answer.markdown).toContain(`Budget: ~${tokens}/400 tokens · 1 of 1 items shown`);
  });
});
