/**
 * `GET /recall`: one episode expanded back to its raw events (the full layer under the timeline's
 * summaries). The newest events win the budget and the text reads in time order; an event too long
 * for what is left is cut to the part that fits, keeping its first line (what ran) and the end of its
 * output (where errors and results are).
 */
import { plural } from "../../shared/plural.ts";
import { scrubLocalPaths } from "../../shared/privacy/local-paths.ts";
import { EpisodeRecall, type RecallQuery } from "../../shared/api.ts";
import { EventContent } from "../../shared/event.ts";
import { nowIso, relativeTime } from "../../shared/time.ts";
import { eventsByIds } from "../../sql/events.ts";
import { packBlocks, type Block } from "./render/budget.ts";
import { listItem, oneLine, shortPaths } from "./render/markdown.ts";
import type { RetrievalContext } from "./retrieval-context.ts";
import type { TokenCounter } from "../../shared/tokens.ts";
import { getEpisode } from "./timeline.ts";

/** Longest text one event contributes before budgeting (~500 tokens). */
export const MAX_EVENT_CHARS = 2000;

function short(value: unknown, max = 300): string {
  const s = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A readable one-event text from `content_json`, by event type. */
export function eventText(type: string, contentJson: string, filePaths: readonly string[]): string {
  let c: EventContent = {};
  try {
    const parsed = EventContent.safeParse(JSON.parse(contentJson));
    if (parsed.success) c = parsed.data;
  } catch {}
  const out = (c.output ?? "").trim();
  switch (type) {
    case "user_message":
      return `User: ${(c.text ?? "").trim()}`;
    case "assistant_response":
      return `Assistant: ${(c.text ?? "").trim()}`;
    case "tool_call":
      return `Tool ${c.tool ?? "?"}: ${short(c.input)}`;
    case "code_change":
      return `Edited ${shortPaths(filePaths, 3) || "files"}${c.tool ? ` (${c.tool})` : ""}${c.diff_summary ? `: ${c.diff_summary.trim()}` : ""}`;
    case "command_run":
    case "test_run": {
      const counts =
        c.passed !== undefined || c.failed !== undefined ? ` (${c.passed ?? 0} passed, ${c.failed ?? 0} failed)` : "";
      const exit = c.exit_code === undefined || c.exit_code === null ? "" : ` → exit ${c.exit_code}`;
      return `$ ${(c.command ?? "").trim()}${exit}${counts}${out ? `\n${out}` : ""}`;
    }
    case "tool_result":
      return `${c.tool ?? "Tool"} result${c.is_error ? " (error)" : ""}${out ? `:\n${out}` : ""}`;
    case "error":
      return `Error${c.tool ? ` in ${c.tool}` : ""}: ${(c.text ?? out).trim()}`;
    case "git_commit":
      return c.commit
        ? `Commit ${c.commit.hash.slice(0, 10)}: ${c.commit.message.trim()} (${plural(c.commit.files.length, "file")}, +${c.commit.insertions}/-${c.commit.deletions})`
        : "Commit";
    case "session_summary":
      return `Summary: ${(c.text ?? "").trim()}`;
    default:
      return `${type}: ${short(c.text ?? c.output ?? c.input ?? "")}`;
  }
}

/** Keep the first line and as much of the end as fits in `maxChars`. */
export function headAndTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const nl = text.indexOf("\n");
  const head = nl > 0 && nl < maxChars / 2 ? text.slice(0, nl) : text.slice(0, Math.floor(maxChars / 3));
  const room = Math.max(0, maxChars - head.length - 3);
  return `${head}\n…${room > 0 ? text.slice(text.length - room) : ""}`;
}

/** The longest head-and-tail cut of `text` whose list line fits `maxTokens`. */
function shortenTo(
  prefix: string,
  text: string,
  maxTokens: number,
  counter: TokenCounter,
): { line: string; cut: string } | undefined {
  let lo = 0;
  let hi = text.length;
  let best: { line: string; cut: string } | undefined;
  for (let i = 0; i < 16 && lo <= hi; i++) {
    const mid = Math.floor((lo + hi) / 2);
    const cut = headAndTail(text, mid);
    const line = listItem(`${prefix}${cut}`);
    if (counter.count(line) <= maxTokens) {
      best = { line, cut };
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best !== undefined && best.cut.length >= 8 ? best : undefined;
}

/** The event text as shown: whole, or the cut that made its line fit. */
function shownText(entry: { full: string; line: string; cut?: { line: string; cut: string } }, line: string): string {
  if (line === entry.line) return entry.full;
  return entry.cut && entry.cut.line === line ? entry.cut.cut : entry.full;
}

function hhmm(iso: string): string {
  return iso.length >= 16 ? iso.slice(11, 16) : iso;
}

export async function recall(ctx: RetrievalContext, q: RecallQuery): Promise<EpisodeRecall> {
  const budget = q.context_budget_tokens ?? ctx.budgets.search;
  const episode = getEpisode(ctx.db, ctx.projectId, q.episode_id);
  const ids = (
    ctx.db.query("SELECT event_id FROM episode_events WHERE episode_id = ?").all(q.episode_id) as Array<{
      event_id: string;
    }>
  ).map((r) => r.event_id);
  const events = eventsByIds(ctx.db, ids); // time order
  const texts = new Map<string, { full: string; line: string; cut?: { line: string; cut: string } }>();
  const blocks: Block[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i]!;
    const full = headAndTail(
      scrubLocalPaths(eventText(ev.event_type, ev.content_json, ev.file_paths), ctx.projectId),
      MAX_EVENT_CHARS,
    );
    const prefix = `${hhmm(ev.timestamp)} `;
    const entry: { full: string; line: string; cut?: { line: string; cut: string } } = {
      full,
      line: listItem(`${prefix}${full}`),
    };
    texts.set(ev.id, entry);
    blocks.push({
      id: ev.id,
      order: i,
      text: entry.line,
      shorten: (maxTokens, counter) => {
        const cut = shortenTo(prefix, full, maxTokens, counter);
        if (cut) entry.cut = cut;
        return cut?.line;
      },
    });
  }
  const summary = oneLine(episode.summary);
  const header = `## Episode ${episode.episode_id} (${relativeTime(episode.start_ts, ctx.nowMs)}, ${plural(episode.event_count, "event")})${summary ? `\n${summary}` : ""}`;
  const packed = packBlocks({
    header,
    blocks,
    budget,
    counter: ctx.counter,
    noun: "events",
    emptyText: "This episode has no stored events.",
  });
  const byId = new Map(events.map((e) => [e.id, e]));
  const shown = packed.shown
    .map((b) => ({ ev: byId.get(b.id)!, text: b.text }))
    .sort((a, b) => a.ev.timestamp.localeCompare(b.ev.timestamp) || a.ev.id.localeCompare(b.ev.id));
  return EpisodeRecall.parse({
    type: "episode_recall",
    project_id: ctx.projectId,
    episode_id: episode.episode_id,
    generated_at: nowIso(ctx.nowMs),
    token_estimate: packed.tokens,
    episode,
    events_total: events.length,
    events: shown.map(({ ev, text }) => ({
      event_id: ev.id,
      timestamp: ev.timestamp,
      event_type: ev.event_type,
      text: shownText(texts.get(ev.id)!, text),
      file_paths: ev.file_paths,
    })),
    markdown: packed.markdown,
  });
}
