/**
 * `sqrl eval` on real sessions (issue 27): the packmind project's first sessions ingested into a temp
 * project and distilled offline, then replayed. The time cut is checked item by item — nothing a
 * session or a later one made is ever served for it — and the command runs through the compiled
 * binary: valid JSON on stdout, a progress line on stderr, a table for a person, data.db unchanged,
 * the report kept as the project's last eval (for `sqrl ui`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processEvents } from "../../src/engine/learn/process-events.ts";
import { EvalReport, evaluateProject } from "../../src/engine/retrieve/eval/replay-eval.ts";
import { projectSessions } from "../../src/engine/retrieve/eval/sessions.ts";
import { retrievalContext } from "../../src/engine/retrieve/retrieval-context.ts";
import { taskContext } from "../../src/engine/retrieve/task-context.ts";
import { TaskContextRequest } from "../../src/shared/api.ts";
import { StoredEval } from "../../src/shared/eval-report.ts";
import { isoToMs } from "../../src/shared/time.ts";
import { listEpisodes } from "../../src/sql/episodes.ts";
import { getMemoryItem } from "../../src/sql/memory-items.ts";
import { jsonlFiles } from "../../bench/replay.ts";
import {
  HAVE_PACKMIND,
  PACKMIND_DIR,
  request,
  sandbox,
  transcriptEvents,
  type Sandbox,
} from "../engine/learn/helpers.ts";
import { isolatedEnv, runSqrl, SQRL_BIN } from "../helpers/sqrl.ts";

/** The first sessions of the project in time order: enough for memory to build up and be served. */
const SESSIONS = 14;

if (!HAVE_PACKMIND) console.log("(sqrl eval on real sessions skipped: ../shared is not beside the repo)");

describe.skipIf(!HAVE_PACKMIND)("sqrl eval on the packmind sessions", () => {
  let sb: Sandbox;
  let report: EvalReport;

  beforeAll(async () => {
    sb = sandbox();
    const sessions = jsonlFiles(PACKMIND_DIR)
      .map((f) => transcriptEvents(f.slice(f.indexOf("claude-code/")), "claude", sb.root))
      .filter((evs) => evs.length > 0)
      .sort((a, b) => a[0]!.timestamp.localeCompare(b[0]!.timestamp))
      .slice(0, SESSIONS);
    const last = sessions.flat().reduce((m, e) => (e.timestamp > m ? e.timestamp : m), "");
    for (const evs of sessions)
      await processEvents(request(sb.root, evs), sb.deps({ summaryLimit: 0, now: () => isoToMs(last) + 86_400_000 }));
    report = await evaluateProject(sb.db, sb.root);
  });
  afterAll(() => sb?.cleanup());

  test("the report validates and replays every later session that has an opening request", () => {
    expect(EvalReport.safeParse(report).success).toBe(true);
    expect(report.sessions_total).toBeGreaterThanOrEqual(SESSIONS - 1);
    expect(report.sessions_evaluated).toBeGreaterThan(5);
    expect(report.sessions_evaluated).toBeLessThan(report.sessions_total);
    // Something was needed and something was served: the checks below are not vacuous.
    expect(report.needed_total).toBeGreaterThan(0);
    expect(report.sessions.filter((s) => s.served.length > 0).length).toBeGreaterThan(2);
    expect(report.served_recall).toBe(report.needed_served / report.needed_total);
    expect(report.needed_by_reason.met_by_extraction + report.needed_by_reason.anchor_touched).toBe(
      report.needed_total,
    );
    // Every needed item left out has a cause, read from the same candidate ranking.
    const m = report.missed_by_cause!;
    expect(m.not_candidate + m.below_gate + m.cut).toBe(report.needed_total - report.needed_served);
    const waste = report.sessions.reduce((n, s) => n + s.wasted_tokens, 0);
    expect(report.wasted_tokens).toBe(waste);
    expect(report.wasted_tokens).toBeLessThanOrEqual(report.served_tokens);
  });

  test("the time cut: no item made by session k or a later one is served or counted as needed for k", () => {
    const sessionOfEpisode = new Map(listEpisodes(sb.db, sb.root, 100_000).map((e) => [e.id, e.session_id]));
    const order = new Map(projectSessions(sb.db, sb.root).map((s, i) => [s.sessionId, i]));
    let checked = 0;
    for (const s of report.sessions) {
      const k = order.get(s.session_id)!;
      for (const id of [...s.served, ...s.needed]) {
        const item = getMemoryItem(sb.db, id)!;
        expect(item.created_at < s.started_at).toBe(true);
        expect(isoToMs(item.valid_from)).toBeLessThan(isoToMs(s.started_at));
        const maker = item.source_episode_id ? sessionOfEpisode.get(item.source_episode_id) : undefined;
        if (maker) expect(order.get(maker)!).toBeLessThan(k);
        // Not ended before k started either (superseded or forgotten earlier).
        if (item.valid_to) expect(isoToMs(item.valid_to)).toBeGreaterThan(isoToMs(s.started_at));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  test("without the cut, today's memory would serve items from session k or later: the cut is what keeps them out", async () => {
    let leaks = 0;
    for (const s of report.sessions) {
      const ctx = retrievalContext(sb.db, sb.root, { nowMs: isoToMs(s.started_at), verify: false });
      const res = await taskContext(
        ctx,
        TaskContextRequest.parse({
          project_id: sb.root,
          task_description: s.request,
          active_file_paths: s.files,
        }),
      );
      for (const id of res.memory_ids) if (getMemoryItem(sb.db, id)!.created_at >= s.started_at) leaks++;
    }
    expect(leaks).toBeGreaterThan(0);
  });

  test("baselines on the same items: serving nothing abstains everywhere; plain BM25 serves within the budget", async () => {
    const none = await evaluateProject(sb.db, sb.root, { ranker: "none" });
    expect(none.served_tokens).toBe(0);
    expect(none.needed_total).toBe(report.needed_total);
    expect(none.served_recall).toBe(0);
    expect(none.missed_by_cause).toBeNull();
    const bm25 = await evaluateProject(sb.db, sb.root, { ranker: "bm25" });
    expect(bm25.needed_total).toBe(report.needed_total);
    expect(bm25.served_tokens).toBeGreaterThan(0);
    for (const s of bm25.sessions) expect(s.served_tokens).toBeLessThanOrEqual(400);
  });

  test("--sessions keeps the last N", async () => {
    const two = await evaluateProject(sb.db, sb.root, { sessions: 2 });
    expect(two.sessions.map((s) => s.session_id)).toEqual(report.sessions.slice(-2).map((s) => s.session_id));
  });

  test.skipIf(!existsSync(SQRL_BIN))(
    "dist/sqrl eval: JSON that validates, a progress line on stderr, a table, data.db unchanged",
    () => {
      const home = join(sb.home, "sqrl-home");
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, "projects.json"), JSON.stringify({ projects: [sb.root] }));
      const env = isolatedEnv(sb.home, { SQRL_HOME: home });
      sb.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const dbFile = join(sb.root, ".ctx", "data.db");
      const digest = () => createHash("sha256").update(readFileSync(dbFile)).digest("hex");
      const before = digest();
      const json = runSqrl(["eval", "--project", sb.root, "--json"], { env, cwd: sb.root });
      expect(json.code).toBe(0);
      const parsed = EvalReport.parse(JSON.parse(json.stdout));
      expect(parsed.sessions_evaluated).toBe(report.sessions_evaluated);
      expect(parsed.needed_total).toBe(report.needed_total);
      expect(json.stderr).toMatch(
        new RegExp(`eval: ${parsed.sessions_evaluated}/${parsed.sessions_evaluated} sessions`),
      );
      // Kept as the project's last eval for `sqrl ui`: one 0600 file under SQRL_HOME/evals, outside data.db.
      expect(json.stderr).toContain("kept as the project's last eval");
      const kept = readdirSync(join(home, "evals"));
      expect(kept).toHaveLength(1);
      const keptFile = join(home, "evals", kept[0]!);
      expect(statSync(keptFile).mode & 0o777).toBe(0o600);
      const stored = StoredEval.parse(JSON.parse(readFileSync(keptFile, "utf8")));
      expect(stored.by).toBe("cli");
      expect(stored.project_id).toBe(sb.root);
      expect(stored.report).toEqual(parsed);
      const text = runSqrl(["eval", "--project", sb.root, "--sessions", "3", "--budget", "300"], { env, cwd: sb.root });
      expect(text.code).toBe(0);
      expect(text.stdout).toContain("served recall of needed items");
      expect(text.stdout).toContain("Replayed 3 of");
      expect(text.stdout).toContain("budget 300 tokens");
      expect(digest()).toBe(before);
      const bad = runSqrl(["eval", "--project", sb.root, "--sessions", "zero"], { env, cwd: sb.root });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--sessions");
    },
    60_000,
  );
});
