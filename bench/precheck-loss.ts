/**
 * What the LLM pre-check (src/engine/learn/extract/precheck.ts) would cost in recall, measured on a
 * labelled set (issue 25): each labelled memory is traced to the episodes that hold its evidence (the
 * label's `evidence` snippet found in an episode's event text), and counted as lost when the pre-check
 * keeps every one of those episodes from the model. Labels whose evidence is found in no episode are
 * counted apart. The episodes' verdicts also split the stand-in's request tokens into sent and saved.
 */
import { worthTheModel } from "../src/engine/learn/extract/precheck.ts";
import { toEngineEvent } from "../src/engine/events/event-view.ts";
import { episodeEvents, listEpisodes } from "../src/sql/episodes.ts";
import { openProjectDb } from "../src/sql/open.ts";
import type { Kind, LabelledSession } from "./memory-quality.ts";

export interface PrecheckLoss {
  episodes: number;
  /** Episodes the pre-check keeps from the model. */
  skipped: Set<string>;
  labels: number;
  /** Labels whose evidence was found in at least one episode. */
  traced: number;
  /** Labels whose every evidence episode the pre-check skips. */
  lost: Array<{ id: string; kind: Kind; ideal: string }>;
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/** Every string inside a parsed JSON value. */
function strings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) strings(x, out);
}

/** The label's evidence as a few distinctive probes (its longest lines, cut to 60 characters). */
function probes(evidence: string): string[] {
  return evidence
    .split("⏎")
    .map(norm)
    .filter((s) => s.length >= 15)
    .sort((a, b) => b.length - a.length)
    .slice(0, 3)
    .map((s) => s.slice(0, 60));
}

export function precheckLoss(
  projects: ReadonlyArray<{ name: string; root: string }>,
  labels: readonly LabelledSession[],
): PrecheckLoss {
  const skipped = new Set<string>();
  let episodes = 0;
  const out: PrecheckLoss = { episodes: 0, skipped, labels: 0, traced: 0, lost: [] };
  for (const p of projects) {
    const db = openProjectDb(p.root);
    const texts: Array<{ id: string; text: string }> = [];
    try {
      for (const ep of listEpisodes(db, p.root, 100_000)) {
        const dtos = episodeEvents(db, ep.id);
        episodes++;
        if (!worthTheModel(dtos.map(toEngineEvent))) skipped.add(ep.id);
        const parts: string[] = [];
        for (const d of dtos) {
          try {
            strings(JSON.parse(d.content_json), parts);
          } catch {
            parts.push(d.content_json);
          }
        }
        texts.push({ id: ep.id, text: norm(parts.join(" ")) });
      }
    } finally {
      db.close();
    }
    for (const l of labels.filter((x) => x.origin === p.name)) {
      for (const m of l.must) {
        out.labels++;
        const ps = probes(m.evidence);
        const where = texts.filter((t) => ps.some((q) => t.text.includes(q))).map((t) => t.id);
        if (where.length === 0) continue;
        out.traced++;
        if (where.every((id) => skipped.has(id))) out.lost.push({ id: m.id, kind: m.kind, ideal: m.ideal });
      }
    }
  }
  out.episodes = episodes;
  return out;
}
