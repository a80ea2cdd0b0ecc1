/**
 * Budget packing: the one place that decides what fits in `context_budget_tokens`.
 *
 * Blocks (one per item, already rendered) arrive in priority (score) order and are taken one at a time;
 * a block that would cross the budget is left out and a smaller later one may still fit. The markdown
 * is header, then the shown blocks grouped under their group headings, then the footer
 * `Budget: ~N/M tokens · X of Y items shown` — always, truncated or not.
 *
 * Invariant: the tokens of the returned markdown never exceed the budget — counted by the real o200k
 * tokenizer, not only by the estimator: with the `accurate` estimator the packer fills to
 * packLimit(budget), which keeps ESTIMATOR_MARGIN in reserve for texts it undercounts. The markdown is
 * never empty when one block fits on its own. When the budget is too small for the full frame the
 * packer degrades step by step: header dropped first, then group headings, then the footer; when
 * nothing at all fits, it refuses with one line that says so and what budget would do (a
 * UsageError, code `budget_too_small`) instead of answering with empty text.
 */
import { UsageError } from "../../../shared/errors.ts";
import { singularOf } from "../../../shared/plural.ts";
import { packLimit, type TokenCounter } from "../../../shared/tokens.ts";

/** The smallest budget whose limit holds `tokens`. */
function budgetFor(tokens: number, counter: Pick<TokenCounter, "name">): number {
  let b = tokens;
  while (packLimit(b, counter) < tokens) b++;
  return b;
}
export interface Block {
  /** Id reported back for shown blocks (memory id, episode id, event id). */
  id: string;
  /** Group heading key; blocks of one group render together (see PackInput.groups). */
  group?: string;
  /** The block's markdown (one or more lines, no trailing newline). */
  text: string;
  /** Render position among shown blocks (default: priority order). */
  order?: number;
  /** A shorter version to use when the full text does not fit (e.g. an event cut to its tail). */
  shorten?: (maxTokens: number, counter: TokenCounter) => string | undefined;
  /** Ids of earlier blocks this one says again in other words: skipped when any of them is shown. */
  restates?: readonly string[];
}

export interface PackInput {
  /** Tokens the text may count (packLimit of the budget); set by packBlocks. */
  limit?: number;
  /** First line(s), e.g. `## Relevant memory for this task`. */
  header?: string;
  /** Group key → heading line (e.g. `### Pitfalls`); groups render in this object's key order. */
  groups?: Record<string, string>;
  blocks: readonly Block[];
  budget: number;
  counter: TokenCounter;
  /** Noun of the footer count: items (default), episodes, events. */
  noun?: string;
  /** Total of the footer's "X of Y" (default: blocks.length). */
  total?: number;
  /** Items skipped because the caller already saw them (session de-dup); said in the footer. */
  omittedSeen?: number;
  /** Text shown instead of blocks when there are none (abstention sentence, "no pitfalls"). */
  emptyText?: string;
}

export interface Packed {
  markdown: string;
  /** Counted tokens of `markdown` (the response's token_estimate). */
  tokens: number;
  /** Blocks shown, in priority order (text possibly shortened). */
  shown: Block[];
}

interface Frame {
  header: boolean;
  headings: boolean;
  footer: boolean;
}

const FRAMES: Frame[] = [
  { header: true, headings: true, footer: true },
  { header: false, headings: true, footer: true },
  { header: false, headings: false, footer: true },
  { header: false, headings: false, footer: false },
];

export function footerLine(
  n: number,
  budget: number,
  shown: number,
  total: number,
  noun: string,
  omittedSeen: number,
): string {
  const seen = omittedSeen > 0 ? ` · ${omittedSeen} omitted as already shown` : "";
  return `Budget: ~${n}/${budget} tokens · ${shown} of ${total} ${total === 1 ? singularOf(noun) : noun} shown${seen}`;
}

function render(input: PackInput, frame: Frame, shown: readonly Block[], footer: string | undefined): string {
  const parts: string[] = [];
  if (frame.header && input.header) parts.push(input.header);
  if (input.blocks.length === 0 && input.emptyText) parts.push(input.emptyText);
  const ordered = [...shown].map((b, i) => ({ b, i })).sort((x, y) => (x.b.order ?? x.i) - (y.b.order ?? y.i));
  const groupKeys = input.groups ? Object.keys(input.groups) : [];
  const grouped = new Map<string, string[]>();
  const loose: string[] = [];
  for (const { b } of ordered) {
    if (b.group !== undefined && groupKeys.includes(b.group)) {
      const list = grouped.get(b.group) ?? [];
      list.push(b.text);
      grouped.set(b.group, list);
    } else loose.push(b.text);
  }
  if (loose.length > 0) parts.push(loose.join("\n"));
  for (const key of groupKeys) {
    const lines = grouped.get(key);
    if (!lines) continue;
    parts.push(frame.headings ? `${input.groups![key]}\n${lines.join("\n")}` : lines.join("\n"));
  }
  if (footer !== undefined) parts.push(footer);
  return parts.join("\n\n");
}

/**
 * Render with a footer whose `~N` equals the counted tokens of the whole text. The text before the
 * footer is counted once; pieces never span the blank line before `Budget:`, so the total is that
 * count plus the footer's (up to rounding) — one full count then confirms the figure.
 */
function withFooter(input: PackInput, frame: Frame, shown: readonly Block[]): { text: string; tokens: number } {
  const { counter } = input;
  if (!frame.footer) {
    const text = render(input, frame, shown, undefined);
    return { text, tokens: counter.count(text) };
  }
  const total = input.total ?? input.blocks.length;
  const noun = input.noun ?? "items";
  const omitted = input.omittedSeen ?? 0;
  const footer = (n: number) => footerLine(n, input.budget, shown.length, total, noun, omitted);
  const body = render(input, frame, shown, undefined);
  const head = body.length > 0 ? counter.count(`${body}\n\n`) : 0;
  let n = head + counter.count(footer(input.budget));
  let text = "";
  for (let i = 0; i < 6; i++) {
    text = body.length > 0 ? `${body}\n\n${footer(n)}` : footer(n);
    const counted = counter.count(text);
    if (counted === n) return { text, tokens: n };
    n = counted;
  }
  // Never settled (a digit boundary): report the larger figure, the footer must not understate.
  return { text, tokens: Math.max(n, counter.count(text)) };
}

/**
 * Greedy fill for one frame. Sizes are added up piece by piece with one token per joint (an upper
 * bound: joining never costs more than a newline token), then the rendered text is counted exactly
 * and trailing blocks are dropped while it is over — so the budget holds for the real text.
 */
function fill(input: PackInput, frame: Frame): { shown: Block[]; text: string; tokens: number } {
  const { counter } = input;
  const budget = input.limit ?? input.budget;
  const total = input.total ?? input.blocks.length;
  const footerCost = frame.footer
    ? counter.count(
        footerLine(input.budget, input.budget, total, total, input.noun ?? "items", input.omittedSeen ?? 0),
      ) + 2
    : 0;
  const headerCost = frame.header && input.header ? counter.count(input.header) + 2 : 0;
  const headingCost = new Map<string, number>();
  const groupKeys = new Set(input.groups ? Object.keys(input.groups) : []);
  const opened = new Set<string>();
  const shown: Block[] = [];
  let used = footerCost + headerCost;
  for (const block of input.blocks) {
    if (block.restates?.some((id) => shown.some((b) => b.id === id))) continue;
    let heading = 0;
    if (frame.headings && block.group !== undefined && groupKeys.has(block.group) && !opened.has(block.group)) {
      if (!headingCost.has(block.group)) headingCost.set(block.group, counter.count(input.groups![block.group]!) + 2);
      heading = headingCost.get(block.group)!;
    }
    const joint = shown.length > 0 ? 1 : 0;
    const own = counter.countUpTo(block.text, Math.max(0, budget - used - heading - joint)) + joint;
    let chosen: Block | undefined;
    let cost = 0;
    if (used + heading + own <= budget) {
      chosen = block;
      cost = heading + own;
    } else if (block.shorten) {
      const room = budget - used - heading - joint;
      const short = room >= 8 ? block.shorten(room, counter) : undefined;
      if (short !== undefined) {
        const c = counter.count(short) + joint;
        if (used + heading + c <= budget) {
          chosen = { ...block, text: short };
          cost = heading + c;
        }
      }
    }
    if (!chosen) continue;
    shown.push(chosen);
    used += cost;
    if (block.group !== undefined) opened.add(block.group);
  }
  let out = withFooter(input, frame, shown);
  while (shown.length > 0 && out.tokens > budget) {
    shown.pop();
    out = withFooter(input, frame, shown);
  }
  return { shown, ...out };
}

/** Pack blocks into the budget (see the module comment for the rules). */
export function packBlocks(input: PackInput): Packed {
  const budget = Math.max(0, Math.floor(input.budget));
  const limit = packLimit(budget, input.counter);
  const inp = { ...input, budget, limit };
  for (const frame of FRAMES) {
    if (inp.blocks.length === 0) break;
    const { shown, text, tokens } = fill(inp, frame);
    if (shown.length > 0) return { markdown: text, tokens, shown };
  }
  // Nothing shown: the fullest frame that fits.
  const answers: number[] = [];
  for (const frame of FRAMES) {
    const { text, tokens } = withFooter(inp, frame, []);
    if (text.length === 0) continue;
    if (tokens <= limit) return { markdown: text, tokens, shown: [] };
    answers.push(tokens);
  }
  if (inp.blocks.length === 0 && inp.emptyText) {
    const tokens = inp.counter.count(inp.emptyText);
    if (tokens <= limit) return { markdown: inp.emptyText, tokens, shown: [] };
    answers.push(tokens);
  }
  for (const b of inp.blocks) answers.push(inp.counter.count(b.text));
  // Nothing fits at all: say so in one line instead of answering with empty text.
  const needed = budgetFor(Math.min(...answers, Number.POSITIVE_INFINITY), inp.counter);
  throw new UsageError(
    `context_budget_tokens ${budget} is too small for any answer here; the smallest needs ${Number.isFinite(needed) ? needed : "more"} tokens.`,
    "budget_too_small",
  );
}

/**
 * Re-render only the footer of a packed markdown for another budget (cached views). Undefined when
 * the text has no footer or no longer fits.
 */
export function refooter(
  markdown: string,
  budget: number,
  counter: TokenCounter,
): { markdown: string; tokens: number } | undefined {
  const re = /Budget: ~\d+\/\d+ tokens · (\d+) of (\d+) (\w+) shown( · (\d+) omitted as already shown)?$/;
  const m = re.exec(markdown);
  if (!m) return undefined;
  const [, shown, total, noun, , omitted] = m;
  const head = markdown.slice(0, m.index);
  let n = counter.count(head + footerLine(budget, budget, Number(shown), Number(total), noun!, Number(omitted ?? 0)));
  let text = "";
  for (let i = 0; i < 4; i++) {
    text = head + footerLine(n, budget, Number(shown), Number(total), noun!, Number(omitted ?? 0));
    const c = counter.count(text);
    if (c === n) break;
    n = c;
  }
  const tokens = Math.max(n, counter.count(text));
  return tokens <= packLimit(budget, counter) ? { markdown: text, tokens } : undefined;
}
