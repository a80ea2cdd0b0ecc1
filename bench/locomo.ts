/**
 * `bun run bench locomo [path/to/locomo10.json] [--quick]`: retrieval quality of sqrl's lexical
 * ranker on LoCoMo (Maharana et al. 2024; CC BY-NC 4.0 — read from ../shared, never copied here).
 *
 * Each conversation's turns become the documents of an FTS5 table declared exactly like memory_fts
 * (DDL taken from the data.db schema) with bodies written by `searchBody` (the memory_fts body
 * function: code-aware token expansion); every question is ranked by `rankLexical`, the ranker
 * search_memory and task_context use. A turn's label is its speaker; its neighbours are the turns
 * around it in the same session (for memories: items of the same episode). Scored: turn-evidence
 * recall@{5,10,20} and session recall@{1,3,5} per official category (1 multi-hop, 2 temporal,
 * 3 open-domain, 4 single-hop, 5 adversarial); headline = categories 1–4. In the same run: a
 * plain FTS5 BM25 baseline (raw turn text, porter tokenizer, stop words removed, FTS5 bm25()).
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { rankLexical, RANKER_DEFAULTS, type LexicalOptions, type Neighbour } from "../src/ranker/lexical.ts";
import { analyzeQuery, bodyStems } from "../src/ranker/query.ts";
import { STOP_WORDS } from "../src/ranker/stop-words.ts";
import { expandCodeTokens } from "../src/shared/code-tokens.ts";
import dataSchema from "../src/sql/schema/data-v1.sql" with { type: "text" };
import { searchBody } from "../src/sql/memory-items.ts";
import { fmt, summarize, table, type Bench, type BenchReport } from "./report.ts";

const DEFAULT_PATH = "../shared/fixtures/benchmarks/locomo10.json";
const CATEGORY_NAMES: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
  5: "adversarial",
};
const HEADLINE_CATEGORIES = [1, 2, 3, 4];
const TURN_KS = [5, 10, 20] as const;
const SESSION_KS = [1, 3, 5] as const;
/** Turns retrieved per question (enough for recall@20 and the session ranking). */
const DEPTH = 50;

// ---- dataset ------------------------------------------------------------------------------------

const Turn = z.object({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
});
const Qa = z.object({ question: z.string(), evidence: z.array(z.string()).default([]), category: z.number().int() });
const Sample = z.object({
  sample_id: z.string().optional(),
  conversation: z.record(z.string(), z.unknown()),
  qa: z.array(Qa),
});
const Dataset = z.array(Sample);

interface Doc {
  id: string;
  session: number;
  index: number;
  speaker: string;
  text: string;
}

interface Question {
  text: string;
  category: number;
  evidence: string[];
}

interface Conversation {
  docs: Doc[];
  questions: Question[];
  /** Questions of categories 1–4 dropped for having no valid evidence id. */
  dropped: number;
}

/** Normalize evidence ids: `D8:6; D9:17` → two ids, `D:11:26` → `D11:26`, `D30:05` → `D30:5`. */
export function normalizeEvidence(raw: readonly string[], known: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const entry of raw) {
    for (const piece of entry.split(/[;,\s]+/)) {
      const m = piece.match(/^D:?(\d+):0*(\d+)$/);
      if (!m) continue;
      const id = `D${Number(m[1])}:${Number(m[2])}`;
      if (known.has(id)) out.add(id);
    }
  }
  return [...out];
}

function loadConversations(path: string): Conversation[] {
  const data = Dataset.parse(JSON.parse(readFileSync(path, "utf8")));
  return data.map((sample) => {
    const docs: Doc[] = [];
    for (const [key, value] of Object.entries(sample.conversation)) {
      const m = key.match(/^session_(\d+)$/);
      if (!m) continue;
      z.array(Turn)
        .parse(value)
        .forEach((t, index) => {
          const text = `${t.speaker}: ${t.text}${t.blip_caption ? ` ${t.blip_caption}` : ""}`;
          docs.push({ id: t.dia_id, session: Number(m[1]), index, speaker: t.speaker, text });
        });
    }
    const known = new Set(docs.map((d) => d.id));
    const questions: Question[] = [];
    let dropped = 0;
    for (const q of sample.qa) {
      const evidence = normalizeEvidence(q.evidence, known);
      if (evidence.length > 0) questions.push({ text: q.question, category: q.category, evidence });
      else if (HEADLINE_CATEGORIES.includes(q.category)) dropped++;
    }
    return { docs, questions, dropped };
  });
}

// ---- indexes ------------------------------------------------------------------------------------

/** The memory_fts declaration of the data.db schema, renamed, so the bench indexes like sqrl does. */
function memoryFtsDdl(name: string): string {
  const m = dataSchema.match(/CREATE VIRTUAL TABLE memory_fts USING fts5\(([^;]*)\);/);
  if (!m) throw new Error("memory_fts declaration not found in src/sql/schema/data-v1.sql");
  return `CREATE VIRTUAL TABLE ${name} USING fts5(${m[1]})`;
}

interface Indexed {
  db: Database;
  conv: Conversation;
  neighbours: (ids: readonly string[]) => ReadonlyMap<string, readonly Neighbour[]>;
  labels: (ids: readonly string[]) => ReadonlyMap<string, string>;
  sessionOf: Map<string, number>;
}

function indexConversation(conv: Conversation): Indexed {
  const db = new Database(":memory:");
  db.exec(memoryFtsDdl("memory_fts"));
  db.exec("CREATE VIRTUAL TABLE plain_fts USING fts5(turn_id UNINDEXED, body, tokenize = 'porter unicode61')");
  const insert = db.query("INSERT INTO memory_fts (memory_id, body) VALUES (?, ?)");
  const insertPlain = db.query("INSERT INTO plain_fts (turn_id, body) VALUES (?, ?)");
  db.transaction(() => {
    for (const d of conv.docs) {
      insert.run(d.id, searchBody({ content: d.text, key: "", tags: [], file_paths: [], type: "project_fact" }));
      insertPlain.run(d.id, d.text);
    }
  })();
  const bySession = new Map<number, Doc[]>();
  for (const d of conv.docs) bySession.set(d.session, [...(bySession.get(d.session) ?? []), d]);
  const around = new Map<string, Neighbour[]>();
  for (const turns of bySession.values()) {
    turns.sort((a, b) => a.index - b.index);
    turns.forEach((d, i) => {
      const list: Neighbour[] = [];
      for (const [offset, weight] of [
        [-1, 1],
        [1, 1],
        [-2, 0.5],
        [2, 0.5],
      ] as const) {
        const n = turns[i + offset];
        if (n) list.push({ id: n.id, weight });
      }
      around.set(d.id, list);
    });
  }
  const speaker = new Map(conv.docs.map((d) => [d.id, d.speaker]));
  return {
    db,
    conv,
    neighbours: (ids) => new Map(ids.map((id) => [id, around.get(id) ?? []])),
    labels: (ids) => new Map(ids.flatMap((id) => (speaker.has(id) ? [[id, speaker.get(id)!] as const] : []))),
    sessionOf: new Map(conv.docs.map((d) => [d.id, d.session])),
  };
}

// ---- rankers ------------------------------------------------------------------------------------

type Ranker = (ix: Indexed, question: string) => string[];

/** Plain FTS5 BM25: raw turn text, porter tokenizer, the question's words minus stop words, bm25(). */
const baseline: Ranker = (ix, question) => {
  const words = [...new Set((question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w)))];
  if (words.length === 0) return [];
  const match = words.map((w) => `"${w}"`).join(" OR ");
  const rows = ix.db
    .query("SELECT turn_id AS id FROM plain_fts WHERE plain_fts MATCH ? ORDER BY bm25(plain_fts) LIMIT ?")
    .all(match, DEPTH) as Array<{ id: string }>;
  return rows.map((r) => r.id);
};

function sqrl(extra: (ix: Indexed) => Partial<LexicalOptions>): Ranker {
  return (ix, question) =>
    rankLexical(ix.db, question, { table: "memory_fts", idColumn: "memory_id", limit: DEPTH, ...extra(ix) }).map(
      (h) => h.id,
    );
}

const FTS5_LIKE = { k1: 1.2, b: 0.75, coordination: 0 };
const TUNED = { ...RANKER_DEFAULTS.bm25, coordination: 0 };

/** The steps from the baseline to sqrl's ranker, each adding one idea to the previous one. */
const STEPS: Array<{ name: string; ranker: Ranker }> = [
  { name: "baseline: plain FTS5 BM25 (porter, stop words removed)", ranker: baseline },
  {
    name: "sqrl query processing + code-aware bodies, BM25 k1 1.2 b 0.75 (= FTS5)",
    ranker: sqrl(() => ({ bm25: FTS5_LIKE, lengthPrior: 0 })),
  },
  { name: "+ BM25 k1 0.9, b 0.4", ranker: sqrl(() => ({ bm25: TUNED, lengthPrior: 0 })) },
  { name: "+ coordination (share of query IDF covered)", ranker: sqrl(() => ({ lengthPrior: 0 })) },
  {
    name: "+ neighbourhood smoothing (±2 turns of the session)",
    ranker: sqrl((ix) => ({ neighbours: ix.neighbours, lengthPrior: 0 })),
  },
  {
    name: "+ label weighting (speaker)",
    ranker: sqrl((ix) => ({ neighbours: ix.neighbours, labels: ix.labels, lengthPrior: 0 })),
  },
  { name: "+ length prior (γ 0.1)", ranker: sqrl((ix) => ({ neighbours: ix.neighbours, labels: ix.labels })) },
  {
    name: "+ pseudo-relevance feedback (RM3, 5 docs, 10 terms)",
    ranker: sqrl((ix) => ({ neighbours: ix.neighbours, labels: ix.labels, feedback: RANKER_DEFAULTS.feedback })),
  },
];
const BASELINE = STEPS[0]!;
/** What search_memory runs: the defaults plus neighbours and labels (feedback off: see the step table). */
const SQRL = STEPS[6]!;

// ---- scoring ------------------------------------------------------------------------------------

interface Tally {
  n: number;
  turn: Record<number, number>;
  session: Record<number, number>;
}

const emptyTally = (): Tally => ({ n: 0, turn: { 5: 0, 10: 0, 20: 0 }, session: { 1: 0, 3: 0, 5: 0 } });

function recall(found: readonly string[], wanted: readonly string[], k: number): number {
  const top = new Set(found.slice(0, k));
  return wanted.filter((w) => top.has(w)).length / wanted.length;
}

function sessionsInOrder(turns: readonly string[], sessionOf: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const t of turns) {
    const s = String(sessionOf.get(t));
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

interface RunResult {
  byCategory: Map<number, Tally>;
  headline: Tally;
  latencies: number[];
}

function run(indexes: readonly Indexed[], ranker: Ranker): RunResult {
  const byCategory = new Map<number, Tally>();
  const headline = emptyTally();
  const latencies: number[] = [];
  for (const ix of indexes) {
    for (const q of ix.conv.questions) {
      const t0 = performance.now();
      const ranked = ranker(ix, q.text);
      latencies.push(performance.now() - t0);
      const sessions = sessionsInOrder(ranked, ix.sessionOf);
      const wantedSessions = [...new Set(q.evidence.map((e) => String(ix.sessionOf.get(e))))];
      const tallies = [byCategory.get(q.category) ?? emptyTally()];
      byCategory.set(q.category, tallies[0]!);
      if (HEADLINE_CATEGORIES.includes(q.category)) tallies.push(headline);
      for (const t of tallies) {
        t.n++;
        for (const k of TURN_KS) t.turn[k]! += recall(ranked, q.evidence, k);
        for (const k of SESSION_KS) t.session[k]! += recall(sessions, wantedSessions, k);
      }
    }
  }
  return { byCategory, headline, latencies };
}

const avg = (t: Tally | undefined, v: number | undefined) =>
  t && t.n > 0 && v !== undefined ? fmt(v / t.n, 3) : "n/a";

function categoryRows(label: string, r: RunResult): Array<Array<string | number>> {
  const rows: Array<Array<string | number>> = [];
  const line = (name: string, t: Tally | undefined) => [
    label,
    name,
    t?.n ?? 0,
    ...TURN_KS.map((k) => avg(t, t?.turn[k])),
    ...SESSION_KS.map((k) => avg(t, t?.session[k])),
  ];
  rows.push(line("**overall 1–4**", r.headline));
  for (const c of [1, 2, 3, 4, 5]) rows.push(line(`${c} ${CATEGORY_NAMES[c]}`, r.byCategory.get(c)));
  return rows;
}

// ---- diagnostics --------------------------------------------------------------------------------

/**
 * Evidence turns of one category that share no query word with their question other than a
 * speaker's name: no lexical ranker can find them by content (they need semantics, e.g.
 * "martial arts" → "kickboxing").
 */
function nameOnlyEvidence(convs: readonly Conversation[], category: number): { nameOnly: number; total: number } {
  let nameOnly = 0;
  let total = 0;
  for (const conv of convs) {
    const names = new Set(conv.docs.flatMap((d) => bodyStems(expandCodeTokens(d.speaker))));
    const byId = new Map(
      conv.docs.map((d) => [
        d.id,
        new Set(bodyStems(searchBody({ content: d.text, key: "", tags: [], file_paths: [], type: "project_fact" }))),
      ]),
    );
    for (const q of conv.questions) {
      if (q.category !== category) continue;
      const content = analyzeQuery(q.text)
        .map((t) => t.stem)
        .filter((s) => !names.has(s));
      for (const e of q.evidence) {
        total++;
        const stems = byId.get(e)!;
        if (!content.some((s) => stems.has(s))) nameOnly++;
      }
    }
  }
  return { nameOnly, total };
}

// ---- bench --------------------------------------------------------------------------------------

export default (async (opts): Promise<BenchReport> => {
  const path = opts.args[0] ?? DEFAULT_PATH;
  if (!existsSync(path)) {
    const msg = `LoCoMo dataset not found at ${path}: skipped (pass the path to locomo10.json; it lives in ../shared/fixtures/benchmarks/).`;
    console.error(msg);
    return { title: "LoCoMo retrieval (turn evidence)", markdown: msg, headline: [msg] };
  }
  const all = loadConversations(path);
  const convs = opts.quick ? all.slice(0, 1) : all;
  const indexes = convs.map(indexConversation);
  const headlineQuestions = convs.reduce(
    (a, c) => a + c.questions.filter((q) => HEADLINE_CATEGORIES.includes(q.category)).length,
    0,
  );
  const dropped = convs.reduce((a, c) => a + c.dropped, 0);

  // Three identical passes per ranker (the ranking is deterministic): a query's latency is the
  // median of its three timings, which keeps other processes' bursts on a shared machine out of p95.
  const results = new Map<string, RunResult>();
  for (const step of STEPS) {
    const passes = [run(indexes, step.ranker), run(indexes, step.ranker), run(indexes, step.ranker)];
    const latencies = passes[0]!.latencies.map((_, i) => passes.map((p) => p.latencies[i]!).sort((a, b) => a - b)[1]!);
    results.set(step.name, { ...passes[0]!, latencies });
  }
  const r10 = (r: RunResult, c?: number) => {
    const t = c === undefined ? r.headline : r.byCategory.get(c);
    return t && t.n > 0 ? t.turn[10]! / t.n : NaN;
  };
  // Stability: the same rankers on each half of the conversations (parameters are global, chosen on all ten).
  const halves =
    indexes.length > 1
      ? [indexes.slice(0, Math.ceil(indexes.length / 2)), indexes.slice(Math.ceil(indexes.length / 2))]
      : [];
  const halfRows = halves.map((part) => {
    const b = run(part, BASELINE.ranker);
    const o = run(part, SQRL.ranker);
    const first = indexes.indexOf(part[0]!) + 1;
    const label = `conversations ${first}–${first + part.length - 1}`;
    return [label, o.headline.n, fmt(r10(b), 3), fmt(r10(b, 1), 3), fmt(r10(o), 3), fmt(r10(o, 1), 3)];
  });
  for (const ix of indexes) ix.db.close();

  const mh = nameOnlyEvidence(convs, 1);
  const base = results.get(BASELINE.name)!;
  const ours = results.get(SQRL.name)!;

  const stepRows = STEPS.map((s, i) => {
    const r = results.get(s.name)!;
    const prev = i > 0 ? results.get(STEPS[i - 1]!.name)! : undefined;
    const lat = summarize(r.latencies);
    return [
      s === SQRL ? `**${s.name}** (sqrl)` : s.name,
      fmt(r10(r), 3),
      prev ? `${r10(r) - r10(prev) >= 0 ? "+" : ""}${fmt(r10(r) - r10(prev), 3)}` : "",
      ...[1, 2, 3, 4].map((c) => fmt(r10(r, c), 3)),
      fmt(lat.p50, 2),
      fmt(lat.p95, 2),
    ];
  });

  const header = [
    "ranker",
    "category",
    "questions",
    ...TURN_KS.map((k) => `turn R@${k}`),
    ...SESSION_KS.map((k) => `session R@${k}`),
  ];
  const baseLat = summarize(base.latencies);
  const ourLat = summarize(ours.latencies);
  const markdown = [
    `Dataset: \`${path}\` (CC BY-NC 4.0, read in place), ${convs.length} conversation(s), ${convs.reduce((a, c) => a + c.docs.length, 0)} turns, ` +
      `${headlineQuestions} questions of categories 1–4 with valid evidence (${dropped} without any valid evidence id skipped; ` +
      "malformed ids such as `D8:6; D9:17` normalized, ids absent from the conversation dropped). Offline: no embeddings, no network.",
    "",
    "Each conversation's turns (`speaker: text` plus the image caption when there is one) are indexed as memory_fts rows " +
      "(same DDL, bodies from `searchBody`) and ranked by `rankLexical`, the ranker behind search_memory and task_context. " +
      "Turn recall@k = share of a question's evidence turns in the top k; session recall@k = share of its evidence sessions among " +
      "the first k distinct sessions of the ranking. Latency = one query end to end in-process (median of three passes per query).",
    "",
    "### Step by step (turn recall@10; each row adds one idea to the row above)",
    "",
    table(
      ["ranker", "R@10 overall", "Δ", "1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop", "p50 ms", "p95 ms"],
      stepRows,
    ),
    "",
    "### Baseline vs sqrl, per category",
    "",
    table(header, [...categoryRows("plain FTS5 BM25", base), ...categoryRows("sqrl", ours)]),
    "",
    ...(halfRows.length > 0
      ? [
          "### Stability across conversations (turn recall@10, categories 1–4)",
          "",
          table(
            ["subset", "questions", "baseline overall", "baseline multi-hop", "sqrl overall", "sqrl multi-hop"],
            halfRows,
          ),
          "",
        ]
      : []),
    `Multi-hop diagnostic: ${mh.nameOnly} of ${mh.total} multi-hop evidence turns share no word with their question except a speaker's name ` +
      '(they need semantic matching, e.g. "martial arts" → "kickboxing"; sqrl reaches them only through neighbours and the speaker label).',
    "",
    `Query latency: sqrl p50 ${fmt(ourLat.p50, 2)} ms, p95 ${fmt(ourLat.p95, 2)} ms; baseline p50 ${fmt(baseLat.p50, 2)} ms, p95 ${fmt(baseLat.p95, 2)} ms ` +
      `(${ourLat.n} queries incl. category 5). Goal: turn R@10 ≥ 0.70 overall and ≥ 0.50 multi-hop, p95 ≤ 5 ms ` +
      "(anchor for the baseline on a 2-core machine: 0.607 overall, 0.345 multi-hop).",
  ].join("\n");

  return {
    title: "LoCoMo retrieval (turn evidence)",
    markdown,
    headline: [
      `turn recall@10 ${fmt(r10(ours), 3)} overall / ${fmt(r10(ours, 1), 3)} multi-hop (plain FTS5 BM25 ${fmt(r10(base), 3)} / ${fmt(r10(base, 1), 3)}), ` +
        `p95 ${fmt(ourLat.p95, 2)} ms, ${headlineQuestions} questions`,
    ],
  };
}) satisfies Bench;
