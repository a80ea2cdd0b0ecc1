/**
 * `bun run bench verify [--quick]`: what checking memories against today's code (issue 15) adds to
 * task_context at 10,000 items. A synthetic project (the retrieval benchmark's corpus) becomes a real
 * git repository whose files hold what its memories cite; every item is anchored, then task_context
 * runs with the check off, on with a warm cache (the same task asked before) and on cold (caches
 * dropped before every call: every served item re-anchored from the files and git asked afresh).
 * The check alone is also timed on the candidates task_context passes it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { recordAnchors } from "../src/engine/learn/apply/record-anchors.ts";
import { retrievalContext } from "../src/engine/retrieve/retrieval-context.ts";
import { isRelevant, MAX_SELECTED, rankTaskCandidates, taskContext } from "../src/engine/retrieve/task-context.ts";
import { clearRepoMemos } from "../src/engine/anchors/repo-state.ts";
import { clearVerificationCache, verifyItems } from "../src/engine/retrieve/verify/verify.ts";
import { TaskContextRequest } from "../src/shared/api.ts";
import { currentItems } from "../src/sql/memory-items.ts";
import { commitAll, initRepo, writeFile } from "../test/engine/retrieve/git-repo.ts";
import { buildProjectAt } from "./retrieval.ts";
import { rng, synthQuery } from "./retrieval-corpus.ts";
import { fmt, machineLine, summarize, table, type Bench, type BenchReport } from "./report.ts";

const N = 10_000;

const bench: Bench = async (opts) => {
  const base = mkdtempSync(join(tmpdir(), "sqrl-bench-verify-"));
  const root = join(base, "repo");
  try {
    initRepo(root);
    const { db } = buildProjectAt(root, N, "realistic");
    const items = currentItems(db, root);
    // Every cited file exists and holds the words of the memories that cite it.
    const byFile = new Map<string, string[]>();
    for (const i of items)
      for (const f of i.file_paths) byFile.set(f, [...(byFile.get(f) ?? []), `// ${i.content.replace(/\s+/g, " ")}`]);
    for (const [f, lines] of byFile) writeFile(root, f, `${lines.join("\n")}\n`);
    commitAll(root, "synthetic project");
    let t = performance.now();
    recordAnchors(
      db,
      root,
      items.map((i) => i.id),
      [],
      "extract",
      Date.now(),
    );
    const anchorMs = performance.now() - t;
    const anchored = (db.query("SELECT COUNT(*) AS n FROM memory_anchors").get() as { n: number }).n;
    // The code moves on under the memories: 2 % of the cited files deleted (their items turn stale).
    const files = [...byFile.keys()];
    const dropped = files.filter((_, i) => i % 50 === 7);
    for (const f of dropped) rmSync(join(root, f));
    commitAll(root, "drop some files");

    const r = rng(7);
    const queries = Array.from({ length: opts.quick ? 60 : 300 }, () => synthQuery("realistic", r));
    const req = (q: { task: string; files: string[] }) =>
      TaskContextRequest.parse({ project_id: root, task_description: q.task, active_file_paths: q.files });
    const off = retrievalContext(db, root, { verify: false });
    const on = retrievalContext(db, root);
    for (const q of queries.slice(0, 30)) await taskContext(off, req(q)); // JIT and SQLite caches

    const time = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
      const s = performance.now();
      await fn();
      return performance.now() - s;
    };
    const samples = {
      off: [] as number[],
      warm: [] as number[],
      cold: [] as number[],
      checkWarm: [] as number[],
      checkCold: [] as number[],
    };
    let served = 0;
    const statuses = new Map<string, number>();
    for (const q of queries) {
      samples.off.push(await time(() => taskContext(off, req(q))));
      clearVerificationCache();
      clearRepoMemos();
      samples.cold.push(await time(() => taskContext(on, req(q))));
      samples.warm.push(await time(() => taskContext(on, req(q))));
      const candidates = (await rankTaskCandidates(on, req(q)))
        .filter((s) => isRelevant(s))
        .slice(0, MAX_SELECTED * 2)
        .map((s) => s.item);
      served += candidates.length;
      clearVerificationCache();
      clearRepoMemos();
      samples.checkCold.push(await time(() => verifyItems(root, db, candidates)));
      t = performance.now();
      const res = verifyItems(root, db, candidates);
      samples.checkWarm.push(performance.now() - t);
      for (const v of res.values()) statuses.set(v.status, (statuses.get(v.status) ?? 0) + 1);
    }
    db.close();
    const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarize(v)])) as Record<
      keyof typeof samples,
      ReturnType<typeof summarize>
    >;
    // Added cost per call, paired (the same task with the check off and on), then its p95.
    const paired = (on: number[]) => summarize(on.map((v, i) => v - samples.off[i]!));
    const added = { warm: paired(samples.warm).p95, cold: paired(samples.cold).p95 };
    const rows = [
      ["task_context, check off", s.off.n, fmt(s.off.p50), fmt(s.off.p95)],
      ["task_context, check on, warm cache", s.warm.n, fmt(s.warm.p50), fmt(s.warm.p95)],
      ["task_context, check on, cold", s.cold.n, fmt(s.cold.p50), fmt(s.cold.p95)],
      [
        "**the check alone, warm** (the candidates of one call)",
        s.checkWarm.n,
        fmt(s.checkWarm.p50),
        fmt(s.checkWarm.p95),
      ],
      ["**the check alone, cold**", s.checkCold.n, fmt(s.checkCold.p50), fmt(s.checkCold.p95)],
    ];
    const md = [
      machineLine(),
      "",
      `${N.toLocaleString("en")} memory items in a real git repository (the retrieval corpus; every cited file existed and held what its memories cite; then ${dropped.length} of ${files.length} files were deleted in a commit, so checks also take the slow path: renames, ancestry, a look through the files changed since); ${anchored.toLocaleString("en")} anchored in ${fmt(anchorMs / 1000, 1)} s (${fmt((anchorMs / anchored) * 1000, 0)} µs an item). ${queries.length} tasks; each checks up to ${MAX_SELECTED * 2} candidates (${fmt(served / queries.length, 1)} on average). Each task runs off, then cold, then warm, so the warm run also meets warmer SQLite caches and can come out faster than off. Git's answers come from files (HEAD) or one process each (ancestry, renames against the index), cached per HEAD and index. Goals: ≤ 2 ms added p95 warm, ≤ 15 ms cold.`,
      "",
      table(["run", "calls", "p50 ms", "p95 ms"], rows),
      "",
      `Added by the check, timed alone on exactly the candidates task_context passes it: p95 **${fmt(s.checkWarm.p95)} ms warm** (goal ≤ 2) and **${fmt(s.checkCold.p95)} ms cold** (goal ≤ 15). The paired difference of whole calls (on − off, same task) has p95 ${fmt(added.warm)} ms warm and ${fmt(added.cold)} ms cold: it also holds the run-to-run noise of two separate calls on a shared 2-core machine (load average ${loadavg()[0]!.toFixed(1)} at the end of this run).`,
      "",
      `Statuses of the checked candidates: ${[...statuses].map(([k, v]) => `${k} ${v}`).join(", ")}.`,
    ].join("\n");
    const headline = [
      `the check adds p95 ${fmt(s.checkWarm.p95)} ms warm, ${fmt(s.checkCold.p95)} ms cold at 10k items (paired whole-call difference ${fmt(added.warm)} / ${fmt(added.cold)} ms)`,
    ];
    return {
      title: "Memory check against the code: cost at 10,000 items",
      markdown: md,
      headline,
    } satisfies BenchReport;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
};

export default bench;
