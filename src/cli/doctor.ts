/**
 * `sqrl doctor [path]`: checks every registered project's data.db (or the one given) with SQLite's
 * own `quick_check` and says what to do with a damaged one. A damaged file stops nothing else (the
 * daemon isolates it), but its project captures and learns nothing until it is replaced. A healthy
 * one has every current memory checked against today's code afresh (issue 15): counts per status,
 * each stale item with its reason, and the moved ones.
 */
import { Database } from "bun:sqlite";
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, missingProjectNote, projectForPath } from "../shared/projects.ts";
import { resolveProjectDir } from "./init-project.ts";
import type { CliAccount } from "../engine/llm/cli-account.ts";
import type { LlmUsageReport } from "../engine/llm/usage-report.ts";

export interface DbCheck {
  project_id: string;
  /** The configured LLM (the same for every project): provider, model, tokens today, tokens per session, account. */
  llm?: LlmUsageReport & { account: CliAccount | null };
  file: string;
  ok: boolean;
  /** The registered folder itself is gone (nothing is damaged; unregister it or put it back). */
  missing?: boolean;
  problem: string | null;
  /** A healthy database's memories checked against the code (absent when the file is damaged). */
  memory?: MemoryChecks;
}

export interface MemoryChecks {
  items: number;
  counts: { verified: number; moved: number; stale: number; unverifiable: number };
  stale: Array<{ memory_id: string; type: string; key: string; content: string; reason: string }>;
  moved: Array<{ memory_id: string; key: string; reason: string }>;
}

/** Every current memory of a healthy project checked against today's code, no cached result. */
export async function checkProjectMemory(root: string): Promise<MemoryChecks> {
  const [{ openProjectDb }, { currentItems }, { clearVerificationCache, verifyItems }] = await Promise.all([
    import("../sql/open.ts"),
    import("../sql/memory-items.ts"),
    import("../engine/retrieve/verify/verify.ts"),
  ]);
  const db = openProjectDb(root, { readonly: true });
  try {
    clearVerificationCache();
    const items = currentItems(db, root);
    const checks = verifyItems(root, db, items);
    const out: MemoryChecks = {
      items: items.length,
      counts: { verified: 0, moved: 0, stale: 0, unverifiable: 0 },
      stale: [],
      moved: [],
    };
    for (const i of items) {
      const v = checks.get(i.id);
      if (!v) continue;
      out.counts[v.status]++;
      if (v.status === "stale")
        out.stale.push({ memory_id: i.id, type: i.type, key: i.key, content: i.content, reason: v.reason });
      if (v.status === "moved") out.moved.push({ memory_id: i.id, key: i.key, reason: v.reason });
    }
    return out;
  } finally {
    db.close();
  }
}

function memoryReport(m: MemoryChecks): string {
  const c = m.counts;
  const lines = [
    `  ${m.items} memories checked against the code: ${c.verified} verified, ${c.moved} moved, ${c.stale} stale, ${c.unverifiable} unverifiable.`,
  ];
  if (m.stale.length > 0) {
    lines.push("  Stale (held back from task context and the session hook):");
    for (const s of m.stale)
      lines.push(
        `    ${s.memory_id}  [${s.type}] ${s.key}: ${s.reason}`,
        `      ${s.content.replace(/\s+/g, " ").slice(0, 160)}`,
      );
    lines.push("  `sqrl show <id>` shows one with its evidence; `sqrl forget <id>` retires it.");
  }
  if (m.moved.length > 0) {
    lines.push("  Moved (served with today's names):");
    for (const x of m.moved) lines.push(`    ${x.memory_id}  ${x.key}: ${x.reason}`);
  }
  return lines.join("\n");
}

/** `PRAGMA quick_check` of one project's data.db (read-only). */
export function checkProjectDb(root: string): DbCheck {
  const file = projectPaths.db(root);
  if (!existsSync(root)) return { project_id: root, file, ok: false, missing: true, problem: missingProjectNote(root) };
  if (!existsSync(file))
    return {
      project_id: root,
      file,
      ok: false,
      problem: `no ${file}: run \`sqrl init ${root}\` to create it, or \`sqrl forget-project ${root}\` to unregister the project`,
    };
  let db: Database | undefined;
  try {
    db = new Database(file, { readonly: true });
    const rows = db.query("PRAGMA quick_check(5)").all() as Array<Record<string, string>>;
    const lines = rows.map((r) => Object.values(r)[0] ?? "");
    if (lines.length === 1 && lines[0] === "ok") return { project_id: root, file, ok: true, problem: null };
    return { project_id: root, file, ok: false, problem: lines.join("; ") };
  } catch (err) {
    return { project_id: root, file, ok: false, problem: (err as Error).message };
  } finally {
    db?.close();
  }
}

function advice(c: DbCheck): string {
  if (c.missing || !existsSync(c.file)) return `  ${c.problem}`;
  return `  ${c.file} is damaged (${c.problem}).\n  Move it aside (mv "${c.file}" "${c.file}.damaged"), run \`sqrl init ${c.project_id}\`, then \`sqrl ingest --backfill\` to capture the transcripts again.`;
}

function label(c: DbCheck): string {
  if (c.missing) return "MISSING  ";
  return existsSync(c.file) ? "DAMAGED  " : "NO DB    ";
}

export default defineCommand({
  meta: {
    name: "doctor",
    description:
      "Check each registered project's data.db (what to do with a damaged one) and its memories against today's code (stale items with their reasons)",
  },
  args: {
    path: { type: "positional", required: false, description: "Project folder (default: every registered project)" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  async run({ args }) {
    let roots = listProjects();
    if (args.path && roots.includes(resolve(args.path)) && !existsSync(resolve(args.path))) {
      roots = [resolve(args.path)]; // a registered folder that is gone: say so, not "does not exist"
    } else if (args.path) {
      const dir = resolveProjectDir(args.path);
      roots = [existsSync(projectPaths.db(dir)) ? dir : (projectForPath(dir, roots) ?? dir)];
    }
    const checks = roots.map(checkProjectDb);
    for (const c of checks) if (c.ok) c.memory = await checkProjectMemory(c.project_id);
    const [{ loadConfig }, { llmUsageReport, describeUsage }, { llmAccount }] = await Promise.all([
      import("../shared/config.ts"),
      import("../engine/llm/usage-report.ts"),
      import("./llm-account.ts"),
    ]);
    const cfg = loadConfig();
    const report = llmUsageReport(cfg, { nowMs: Date.now(), projects: listProjects() });
    const account = await llmAccount(cfg);
    for (const c of checks) c.llm = { ...report, account: account?.json ?? null };
    if (args.json) process.stdout.write(`${JSON.stringify(checks, null, 2)}\n`);
    else if (checks.length === 0) process.stdout.write("No registered projects: run `sqrl init` in a repository.\n");
    else
      for (const c of checks)
        process.stdout.write(
          c.ok
            ? `ok       ${c.project_id}\n${c.memory ? `${memoryReport(c.memory)}\n` : ""}`
            : `${label(c)}${c.project_id}\n${advice(c)}\n`,
        );
    if (!args.json) {
      const usable = !account || (account.json.signedIn && account.json.bin);
      process.stdout.write(
        `LLM      ${describeUsage(report)}\n${account ? `         ${usable ? "" : "NOT USABLE: "}${account.line}\n` : ""}`,
      );
    }
    // A folder that is gone damages nothing (the other projects are fine): said, not a failure.
    if (checks.some((c) => !c.ok && !c.missing)) process.exitCode = 1;
  },
});
