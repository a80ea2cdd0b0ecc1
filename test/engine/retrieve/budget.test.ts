import { describe, expect, test } from "bun:test";
import { footerLine, packBlocks, refooter, type Block } from "../../../src/engine/retrieve/render/budget.ts";
import { packLimit } from "../../../src/shared/tokens.ts";
import { estimateTokens, tokenCounterSync } from "../../../src/shared/tokens.ts";

const counter = tokenCounterSync("accurate");
const FOOTER = /Budget: ~(\d+)\/(\d+) tokens · (\d+) of (\d+) (\w+) shown/;

function block(id: string, words: number, group?: string): Block {
  const text = `- ${Array.from({ length: words }, (_, i) => `word${i % 7} ${id}`).join(" ")}`;
  return group === undefined ? { id, text } : { id, text, group };
}

const BUDGETS = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2000];
const SIZES = [1, 3, 10, 40, 120, 400];

describe("packBlocks", () => {
  test("never exceeds the budget, for budgets 1..2000 and blocks of every size", () => {
    for (const budget of BUDGETS) {
      for (const size of SIZES) {
        const blocks = [
          block("a", size, "g1"),
          block("b", Math.ceil(size / 3), "g2"),
          block("c", size * 2, "g1"),
          block("d", 2, "g2"),
        ];
        const smallestAlone = Math.min(...blocks.map((b) => counter.count(b.text)));
        let p: ReturnType<typeof packBlocks>;
        try {
          p = packBlocks({
            header: "## Header line",
            groups: { g1: "### One", g2: "### Two" },
            blocks,
            budget,
            counter,
          });
        } catch (err) {
          expect((err as { code?: string }).code).toBe("budget_too_small");
          expect(smallestAlone).toBeGreaterThan(packLimit(budget, counter));
          continue;
        }
        const real = counter.count(p.markdown);
        expect(real).toBeLessThanOrEqual(packLimit(budget, counter));
        expect(p.tokens).toBe(real);
        if (smallestAlone <= packLimit(budget, counter)) expect(p.shown.length).toBeGreaterThan(0);
      }
    }
  });

  test("takes blocks in order; one that would cross the budget is left out and a smaller later one still fits", () => {
    const big = block("big", 200);
    const small1 = block("s1", 5);
    const small2 = block("s2", 5);
    const p = packBlocks({ header: "## H", blocks: [small1, big, small2], budget: 120, counter });
    expect(p.shown.map((b) => b.id)).toEqual(["s1", "s2"]);
    expect(p.markdown).toContain("2 of 3 items shown");
  });

  test("the footer is always there and its figure is the text's own token count", () => {
    const p = packBlocks({ header: "## H", blocks: [block("a", 3)], budget: 500, counter });
    const m = FOOTER.exec(p.markdown)!;
    expect(m).not.toBeNull();
    expect(Number(m[1])).toBe(counter.count(p.markdown));
    expect(m[2]).toBe("500");
    expect(`${m[3]} of ${m[4]}`).toBe("1 of 1");
  });

  test("groups render under their headings, in the groups' order", () => {
    const p = packBlocks({
      header: "## H",
      groups: { g1: "### One", g2: "### Two" },
      blocks: [block("b", 2, "g2"), block("a", 2, "g1")],
      budget: 500,
      counter,
    });
    expect(p.markdown.indexOf("### One")).toBeLessThan(p.markdown.indexOf("### Two"));
    expect(p.markdown.indexOf("### One")).toBeLessThan(p.markdown.indexOf("word0 a"));
  });

  test("a tight budget drops the header before the item, then the footer", () => {
    const b = block("a", 4);
    const own = counter.count(b.text);
    const header = "## A long header that costs quite a few tokens to show in the output";
    const limitFor = (n: number) => {
      let b = n;
      while (packLimit(b, counter) < n) b++;
      return b;
    };
    const p = packBlocks({
      header,
      blocks: [b],
      budget: limitFor(own + counter.count(footerLine(99, 99, 1, 1, "items", 0)) + 3),
      counter,
    });
    expect(p.shown).toHaveLength(1);
    expect(p.markdown).not.toContain(header);
    const tiny = packBlocks({ header, blocks: [b], budget: limitFor(own), counter });
    expect(tiny.shown).toHaveLength(1);
    expect(tiny.markdown).toBe(b.text);
  });

  test("nothing fits: the fullest frame that fits, or one line that says the budget is too small (never empty text)", () => {
    const p = packBlocks({ header: "## H", blocks: [block("a", 300)], budget: 40, counter });
    expect(p.shown).toHaveLength(0);
    expect(p.markdown).toContain("0 of 1 item shown");
    for (const budget of [1, 5, 10]) {
      expect(() => packBlocks({ header: "## H", blocks: [block("a", 300)], budget, counter })).toThrow(
        /^context_budget_tokens \d+ is too small for any answer here; the smallest needs \d+ tokens\.$/,
      );
      if (budget < 8)
        expect(() =>
          packBlocks({ header: "## H", blocks: [], budget, counter, emptyText: "No relevant memory for this task." }),
        ).toThrow("too small");
    }
  });

  test("empty input shows the empty text and a footer; omitted items are said", () => {
    const p = packBlocks({
      header: "## H",
      blocks: [],
      budget: 100,
      counter,
      emptyText: "Nothing here.",
      omittedSeen: 3,
    });
    expect(p.markdown).toContain("Nothing here.");
    expect(p.markdown).toContain("0 of 0 items shown · 3 omitted as already shown");
  });

  test("a shortenable block is cut to fit instead of dropped", () => {
    const long = "x ".repeat(2000);
    const b: Block = {
      id: "e",
      text: `- ${long}`,
      shorten: (max, c) => {
        let t = long;
        while (c.count(`- ${t}`) > max && t.length > 10) t = t.slice(0, Math.floor(t.length * 0.8));
        return `- ${t}`;
      },
    };
    const p = packBlocks({ header: "## H", blocks: [b], budget: 100, counter });
    expect(p.shown).toHaveLength(1);
    expect(counter.count(p.markdown)).toBeLessThanOrEqual(100);
  });

  test("refooter re-renders the footer for another budget and refuses when it would not fit", () => {
    const p = packBlocks({ header: "## H", blocks: [block("a", 20)], budget: 500, counter });
    const r = refooter(p.markdown, 300, counter)!;
    expect(r.markdown).toContain("/300 tokens");
    expect(counter.count(r.markdown)).toBe(r.tokens);
    expect(refooter(p.markdown, 10, counter)).toBeUndefined();
  });

  test("chars4 counter is ceil(chars/4)", () => {
    const c4 = tokenCounterSync("chars4");
    expect(c4.count("abcde")).toBe(2);
    expect(estimateTokens("")).toBe(0);
  });
});
