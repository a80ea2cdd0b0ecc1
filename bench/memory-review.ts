/**
 * The reviewer's packet of the memory-quality benchmark (`bun run bench memory-quality --review FILE`):
 * every item stored from the real sessions, with the events it was drawn from and the transcript they
 * are in, under the standard a fresh reader judges it by. The labels measure recall; this is how
 * precision is counted (docs/benchmarks.md, "what a reviewer keeps").
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { EventDTO } from "../src/shared/event.ts";
import { jsonlFiles, SHARED_CLAUDE } from "./replay.ts";

export interface Evidence {
  origin: string;
  session: string | null;
  type: string;
  text: string;
}

interface ReviewItem {
  project: string;
  type: string;
  content: string;
  tokens: number;
  evidence: Evidence[];
}

interface LabelledPath {
  origin: string;
  path: string;
  split: string;
}

const CLIP = 700;

function clipped(s: string): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length <= CLIP ? one : `${one.slice(0, CLIP)} …`;
}

/** What a reader needs of one event: its text, or the command and what it printed. */
export function toEvidence(origin: string, e: EventDTO): Evidence {
  let c: Record<string, unknown> = {};
  try {
    c = JSON.parse(e.content_json) as Record<string, unknown>;
  } catch {}
  const str = (k: string) => (typeof c[k] === "string" ? (c[k] as string) : "");
  const body = str("text") || [str("command") && `$ ${str("command")}`, str("output")].filter(Boolean).join("\n");
  const files = e.file_paths.length > 0 ? ` (${e.file_paths.join(", ")})` : "";
  return { origin, session: e.session_id, type: e.event_type, text: clipped(`${body || str("tool")}${files}`) };
}

/** Session id → transcript path (relative to the transcripts' root), read once. */
function sessionFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const origin of readdirSync(root)) {
    const dir = join(root, origin);
    if (!statSync(dir).isDirectory()) continue;
    for (const f of jsonlFiles(dir)) {
      const m = /"sessionId":"([^"]+)"/.exec(readFileSync(f, "utf8"));
      if (m && !out.has(m[1]!)) out.set(m[1]!, relative(root, f));
    }
  }
  return out;
}

const STANDARD = `A memory must read like a line a good teammate writes in the team wiki:
- true, with evidence (read the transcript around the evidence; later sessions of the project may change it);
- still useful next month (not a one-off task detail, not a changelog entry, not obvious from the code in a minute);
- one or two sentences that stand alone;
- worth its tokens (typically 60 or fewer).
For each item: keep or reject, with a one-line reason.`;

/** The packet as markdown: items of the real sessions only (the scenarios are written for the tests). */
export function reviewPacket(
  stored: readonly ReviewItem[],
  labels: readonly LabelledPath[],
  root = SHARED_CLAUDE,
): string {
  const files = sessionFiles(root);
  const splitOf = new Map(labels.map((l) => [`${l.origin}/${l.path}`, l.split]));
  const lines = [
    "# Memory review packet",
    "",
    `Transcripts: ${root === SHARED_CLAUDE ? "../shared/fixtures/transcripts/claude-code" : root}/<path below>.`,
    "",
    STANDARD,
    "",
  ];
  let n = 0;
  for (const it of stored) {
    if (it.project === "scenarios") continue;
    const own = it.evidence.filter((e) => e.origin !== "scenarios");
    if (it.project === "user.db" && own.length === 0) continue;
    n++;
    const where = [...new Set(own.map((e) => (e.session && files.get(e.session)) || "?"))];
    const split = where.map((w) => splitOf.get(w) ?? (w.startsWith("packmindhub") ? "unlabelled" : "other"));
    lines.push(`## ${n}. ${it.type} (${it.project}, ${it.tokens} tokens)`, "", `> ${it.content}`, "");
    lines.push(`Transcripts: ${where.map((w, i) => `${w} [${split[i]}]`).join(", ")}`, "");
    for (const e of own.slice(0, 4)) lines.push(`- ${e.type}: ${e.text}`);
    lines.push("");
  }
  return lines.join("\n");
}
