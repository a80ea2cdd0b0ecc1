/**
 * `sqrl ingest`: import transcripts and git history into registered projects in the foreground (the daemon
 * does it live).
 */
import { defineCommand } from "citty";
import { plural } from "../shared/plural.ts";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import { confirm } from "./confirm.ts";

const SOURCES = ["claude", "codex", "gemini", "qwen", "copilot", "opencode", "git"] as const;
type SourceArg = (typeof SOURCES)[number];

export interface IngestSummary {
  files: number;
  lines: number;
  events: number;
  added: number;
  duplicates: number;
  skipped: number;
  malformed: number;
  commits: number;
  by_project: Record<string, number>;
  /** Skipped events per working directory that no registered project contains. */
  unmatched: Record<string, number>;
  /** Projects whose git history could not be read, with why. */
  git_errors: Array<{ project_id: string; error: string }>;
  /** Given files in which no record of any source was found. */
  unreadable: string[];
  per_file?: Array<{
    path: string;
    source: string;
    added: number;
    duplicates: number;
    malformed: number;
    skipped: number;
  }>;
}

export interface RunIngestOptions {
  files?: string[];
  backfill?: boolean;
  source?: SourceArg;
  /** Only these project roots receive events (init backfills just the new project). */
  only?: string[];
  /** Draw a progress bar on a terminal. */
  progress?: boolean;
}

function progressBar(done: number, total: number, added: number): void {
  if (!process.stderr.isTTY) return;
  const width = 24;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  process.stderr.write(
    `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} files, ${added} events added`,
  );
  if (done === total) process.stderr.write("\n");
}

/** Import transcripts (given files, or every file of the enabled sources) and git history into registered projects. */
export async function runIngest(opts: RunIngestOptions): Promise<IngestSummary> {
  const [{ processConfig }, { listProjects }, backfill, ingest, git, ts, { openStateDb }] = await Promise.all([
    import("../shared/config.ts"),
    import("../shared/projects.ts"),
    import("../daemon/backfill.ts"),
    import("../daemon/ingest.ts"),
    import("../daemon/watchers/git.ts"),
    import("../daemon/watchers/transcript-source.ts"),
    import("../sql/open.ts"),
  ]);
  const cfg = processConfig().get();
  const projects = listProjects();
  if (projects.length === 0)
    throw new UsageError(
      "No project is registered yet. Run `sqrl init` in a project first, then ingest.",
      "no_projects",
    );
  const pool = new ingest.ProjectDbPool();
  const ctx = {
    projects,
    userId: cfg.user_id,
    pool,
    only: opts.only ? new Set(opts.only.map((p) => resolve(p))) : undefined,
  };
  const summary: IngestSummary = {
    files: 0,
    lines: 0,
    events: 0,
    added: 0,
    duplicates: 0,
    skipped: 0,
    malformed: 0,
    commits: 0,
    by_project: {},
    unmatched: {},
    git_errors: [],
    unreadable: [],
    per_file: [],
  };
  const jobs: Array<{ path: string; source: "claude" | "codex" | "gemini" | "qwen" | "copilot"; document: boolean }> =
    [];
  for (const f of opts.files ?? []) {
    const path = resolve(f);
    if (!existsSync(path) || !statSync(path).isFile())
      throw new UsageError(
        `${path} is not a file. Pass transcript files (.jsonl/.json) or use --backfill.`,
        "not_a_file",
      );
    if (opts.source === "opencode")
      throw new UsageError("--source opencode takes no files: OpenCode's store is read with --backfill.");
    if (opts.source === "git")
      throw new UsageError(
        "--source git takes no files: git history is read from the registered repos with --backfill.",
      );
    const sniffed = backfill.sniffSource(path);
    const source = (opts.source as typeof sniffed.source | undefined) ?? sniffed.source;
    jobs.push({ path, source, document: source === "gemini" ? sniffed.document || path.endsWith(".json") : false });
  }
  if (opts.backfill) {
    const enabled = {
      claude: cfg["watch.claude"],
      codex: cfg["watch.codex"],
      gemini: cfg["watch.gemini"],
      qwen: cfg["watch.qwen"],
      copilot: cfg["watch.copilot"],
    };
    for (const name of ["claude", "codex", "gemini", "qwen", "copilot"] as const) {
      if (opts.source ? opts.source !== name : !enabled[name]) continue;
      const src = backfill.TRANSCRIPT_SOURCES[name];
      for (const path of ts.listSourceFiles(src)) jobs.push({ path, source: name, document: src.isDocument(path) });
    }
  }
  try {
    for (const job of jobs) {
      const res = await backfill.ingestFileOnce(job.path, job.source, job.document, ctx);
      summary.files++;
      summary.lines += res.lines;
      summary.events += res.events;
      summary.added += res.added;
      summary.duplicates += res.duplicates;
      summary.skipped += res.skipped;
      summary.malformed += res.malformed;
      ingest.mergeUnmatched(summary.unmatched, res.unmatched);
      if (res.events === 0 && (opts.files ?? []).length > 0 && !opts.backfill) summary.unreadable.push(job.path);
      for (const [root, n] of res.addedByProject) summary.by_project[root] = (summary.by_project[root] ?? 0) + n;
      summary.per_file!.push({
        path: job.path,
        source: job.source,
        added: res.added,
        duplicates: res.duplicates,
        malformed: res.malformed,
        skipped: res.skipped,
      });
      if (opts.progress) progressBar(summary.files, jobs.length, summary.added);
    }
    if (opts.backfill && (opts.source === undefined ? cfg["watch.opencode"] : opts.source === "opencode")) {
      const oc = await import("../daemon/watchers/opencode.ts");
      const path = oc.opencodeDbPath();
      if (existsSync(path)) {
        try {
          const { events } = oc.readOpenCode(path, 0);
          const res = ingest.ingestNormalized(events, ctx);
          summary.files++;
          summary.events += events.length;
          summary.added += res.added;
          summary.duplicates += res.duplicates;
          summary.skipped += res.skipped;
          ingest.mergeUnmatched(summary.unmatched, res.unmatched);
          for (const [r, n] of res.addedByProject) summary.by_project[r] = (summary.by_project[r] ?? 0) + n;
        } catch (err) {
          log.warn(`Cannot read OpenCode's store ${path} (${(err as Error).message}); its history was not imported.`);
        }
      }
    }
    if (opts.backfill && (opts.source === undefined ? cfg["watch.git"] : opts.source === "git")) {
      const state = openStateDb();
      try {
        for (const root of projects) {
          if (ctx.only && !ctx.only.has(root)) continue;
          const { events, head, error } = git.readGitCommits(root, undefined);
          if (error) summary.git_errors.push({ project_id: root, error });
          if (events.length > 0) {
            const res = ingest.ingestNormalized(events, { ...ctx, only: new Set([root]) });
            summary.commits += events.length;
            summary.events += events.length;
            summary.added += res.added;
            summary.duplicates += res.duplicates;
            for (const [r, n] of res.addedByProject) summary.by_project[r] = (summary.by_project[r] ?? 0) + n;
          }
          if (head) git.saveGitCursor(state, root, head);
        }
      } finally {
        state.close();
      }
    }
  } finally {
    pool.close();
  }
  return summary;
}

export function summaryLines(s: IngestSummary): string[] {
  const lines = [
    `Files: ${s.files}${s.commits ? ` (+ ${s.commits} git commits)` : ""}`,
    `Events added: ${s.added}`,
    `Duplicates: ${s.duplicates}`,
    `Malformed lines skipped: ${s.malformed}`,
  ];
  if (s.skipped > 0) lines.push(`Events outside registered projects (skipped): ${s.skipped}`);
  for (const [root, n] of Object.entries(s.by_project)) lines.push(`  ${root}: +${n}`);
  return lines;
}

/**
 * What went wrong or was left out, one line each, with what to do: transcripts whose sessions ran in
 * folders no registered project contains, files with no record of any source, unreadable git history.
 */
export function problemLines(s: IngestSummary): string[] {
  const out: string[] = [];
  const unmatched = Object.entries(s.unmatched).sort((a, b) => b[1] - a[1]);
  if (unmatched.length > 0) {
    const shown = unmatched.slice(0, 5).map(([cwd, n]) => `${cwd} (${plural(n, "event")})`);
    const more = unmatched.length > 5 ? `, and ${unmatched.length - 5} more folders` : "";
    const total = unmatched.reduce((a, [, n]) => a + n, 0);
    out.push(
      `Skipped ${plural(total, "event")} of sessions run in folders that no registered project contains: ${shown.join(", ")}${more}. A session belongs to the registered project whose folder contains its working directory; run \`sqrl init <folder>\` to register one, then ingest again.`,
    );
  }
  for (const f of s.unreadable)
    out.push(
      `${f} holds no agent transcript record (Claude Code, Codex, Gemini, Qwen Code) (${s.files === 1 && s.malformed > 0 ? `${plural(s.malformed, "line")} not understood` : "nothing sqrl can read"}): pass the agent's own .jsonl/.json session files.`,
    );
  for (const g of s.git_errors)
    out.push(`The git history of ${g.project_id} could not be read (${g.error}); its commits were not imported.`);
  return out;
}

/** Did the run fail to do what it was asked: nothing imported or already there, or a problem said above? */
export function ingestFailed(s: IngestSummary): boolean {
  if (s.git_errors.length > 0 || s.unreadable.length > 0) return true;
  return s.added === 0 && s.duplicates === 0 && s.skipped > 0;
}

/**
 * `sqrl init` offers to import the project's existing history (Claude Code deletes transcripts after
 * 30 days). Returns the summary line, or undefined when declined.
 */
export async function offerBackfill(
  root: string,
  opts: { yes: boolean },
): Promise<{ line: string; summary: IngestSummary & { processed: ProcessedSummary } } | undefined> {
  if (!(await confirm("Import this project's existing agent transcripts and git history now?", { yes: opts.yes })))
    return undefined;
  const summary = await runIngest({ backfill: true, only: [root], progress: true });
  delete summary.per_file;
  // Distil what was imported now, so the first `sqrl status` and `sqrl context` already know it
  // instead of showing events "waiting for the engine".
  const processed = await processBackfill(root);
  return {
    line:
      `Imported history: ${summary.added} events added from ${summary.files} transcripts${summary.commits ? ` and ${summary.commits} commits` : ""} (${summary.duplicates} duplicates, ${summary.malformed} malformed lines skipped)` +
      (processed.events > 0
        ? `\nDistilled it: ${plural(processed.episodes, "episode")}, ${plural(processed.memories, "memory")}`
        : ""),
    summary: { ...summary, processed },
  };
}

export interface ProcessedSummary {
  events: number;
  episodes: number;
  memories: number;
}

/**
 * Run the engine's write path in this process over the project's unprocessed events (as the daemon's
 * batcher would, batch by batch, then once more to close quiet episodes), with a progress bar on a
 * terminal for long runs.
 */
export async function processBackfill(root: string): Promise<ProcessedSummary> {
  const [{ openProjectDb }, events, { processEvents }, { processConfig }, { nowIso }] = await Promise.all([
    import("../sql/open.ts"),
    import("../sql/events.ts"),
    import("../engine/learn/process-events.ts"),
    import("../shared/config.ts"),
    import("../shared/time.ts"),
  ]);
  const userId = processConfig().get().user_id;
  const db = openProjectDb(root);
  const out: ProcessedSummary = { events: 0, episodes: 0, memories: 0 };
  const episodes = new Set<string>();
  const memories = new Set<string>();
  try {
    const total = events.countEvents(db, root).unprocessed;
    const bar = process.stderr.isTTY === true && total >= 200;
    for (;;) {
      const batch = events.unprocessedEvents(db, root, 500);
      if (batch.length === 0) break;
      const byUser = new Map<string, typeof batch>();
      for (const e of batch) byUser.set(e.user_id, [...(byUser.get(e.user_id) ?? []), e]);
      for (const [user, group] of byUser) {
        const res = await processEvents({ project_id: root, user_id: user || userId, events: group });
        for (const id of res.episode_ids) episodes.add(id);
        for (const id of res.memory_item_ids) memories.add(id);
        events.markProcessed(
          db,
          group.map((e) => e.id),
          nowIso(),
        );
        out.events += group.length;
      }
      if (bar) process.stderr.write(`\rdistilling: ${out.events}/${total} events`);
    }
    if (out.events > 0) {
      const res = await processEvents({ project_id: root, user_id: userId, events: [] }); // closes quiet episodes
      for (const id of res.episode_ids) episodes.add(id);
      for (const id of res.memory_item_ids) memories.add(id);
    }
    if (bar) process.stderr.write("\n");
  } finally {
    db.close();
  }
  out.episodes = episodes.size;
  out.memories = memories.size;
  return out;
}

export default defineCommand({
  meta: {
    name: "ingest",
    description: "Import transcripts (files, or all existing history with --backfill) into registered projects",
  },
  args: {
    files: {
      type: "positional",
      required: false,
      description: "Transcript files (Claude Code / Codex / Qwen Code .jsonl, Gemini .json/.jsonl)",
    },
    backfill: {
      type: "boolean",
      description: "Import every existing transcript of the enabled sources and the git history of registered repos",
    },
    source: {
      type: "string",
      description: "Only this source (claude|codex|gemini|qwen|copilot|opencode|git); with files, forces their format",
    },
    json: { type: "boolean", description: "Print the summary as JSON" },
  },
  async run({ args }) {
    const files = (args._ as string[] | undefined)?.filter((a) => a.length > 0) ?? [];
    const source = args.source as string | undefined;
    if (source !== undefined && !(SOURCES as readonly string[]).includes(source))
      throw new UsageError(`--source must be one of ${SOURCES.join(", ")} (got "${source}").`);
    if (files.length === 0 && !args.backfill)
      throw new UsageError("Pass transcript files to import, or --backfill to import all existing history.");
    const summary = await runIngest({
      files,
      backfill: args.backfill === true,
      source: source as SourceArg | undefined,
      progress: !args.json,
    });
    if (args.json) {
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      if (ingestFailed(summary)) process.exitCode = 1;
      return;
    }
    delete summary.per_file;
    process.stdout.write(`${summaryLines(summary).join("\n")}\n`);
    const problems = problemLines(summary);
    if (problems.length > 0) process.stderr.write(`${problems.map((p) => `sqrl: ${p}`).join("\n")}\n`);
    if (ingestFailed(summary)) process.exitCode = 1;
  },
});
