/**
 * The report of `sqrl eval` as a person reads it: the headline figures, one line per session, and
 * the memories worth most (served when needed) and least (served, never needed).
 */
import type { EvalReport } from "../engine/retrieve/eval/replay-eval.ts";

const pct = (r: number | null) => (r === null ? "n/a" : `${Math.round(r * 100)} %`);

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function renderEvalReport(r: EvalReport): string {
  const out: string[] = [];
  out.push(
    `Replayed ${r.sessions_evaluated} of ${r.sessions_total} sessions (each against the memory that stood before it; budget ${r.budget} tokens).`,
    "",
    `  served recall of needed items  ${pct(r.served_recall)} (${r.needed_served} of ${r.needed_total}: ${r.needed_by_reason.met_by_extraction} met again by the session, ${r.needed_by_reason.anchor_touched} touched by its failures and fixes)`,
    `  per lesson                     ${pct(r.lesson_recall)} (${r.lessons_served} of ${r.lessons_total}: needed items that restate one another count once; a served restatement serves its lesson)`,
    ...(r.missed_by_cause && r.needed_total > r.needed_served
      ? [
          `  needed, not served             ${r.missed_by_cause.not_candidate} never a candidate (no shared word or file), ${r.missed_by_cause.below_gate} below the relevance gate, ${r.missed_by_cause.cut} cut by the cap or the budget`,
        ]
      : []),
    `  tokens served                  ${r.served_tokens}, of which never needed ${r.wasted_tokens}`,
    `  abstention (nothing needed)    ${pct(r.abstention.rate)} (${r.abstention.abstained} of ${r.abstention.sessions_nothing_needed} sessions served nothing)`,
  );
  if (r.sessions.length > 0) {
    out.push(
      "",
      table(
        ["started", "stood", "needed", "served", "hit", "wasted", "opening request"],
        r.sessions.map((s) => [
          s.started_at.slice(0, 16).replace("T", " "),
          String(s.standing),
          String(s.needed.length),
          String(s.served.length),
          String(s.needed_served),
          String(s.wasted_tokens),
          clip(s.request, 60),
        ]),
      ),
    );
  }
  const worth = r.items.filter((i) => i.served_needed > 0).slice(0, 5);
  const unused = [...r.items]
    .filter((i) => i.served_unused > 0)
    .sort((a, b) => b.served_unused - a.served_unused)
    .slice(0, 5);
  const missed = [...r.items]
    .filter((i) => i.needed > i.served_needed)
    .sort((a, b) => b.needed - b.served_needed - (a.needed - a.served_needed))
    .slice(0, 5);
  const list = (title: string, rows: typeof r.items, figure: (i: (typeof r.items)[number]) => string) => {
    if (rows.length === 0) return;
    out.push("", title);
    for (const i of rows)
      out.push(`  ${figure(i).padEnd(22)} ${i.memory_id}  ${clip(i.content.replace(/\s+/g, " "), 70)}`);
  };
  list("Worth most (served when needed):", worth, (i) => `${i.served_needed} of ${i.served} served`);
  list("Served, never needed:", unused, (i) => `${i.served_unused} time${i.served_unused === 1 ? "" : "s"} unused`);
  list("Needed, not served:", missed, (i) => `missed ${i.needed - i.served_needed} of ${i.needed}`);
  return out.join("\n");
}
