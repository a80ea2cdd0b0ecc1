/**
 * `sqrl doctor [path]`: checks every registered project's data.db (or the one given) with SQLite's
 * own `quick_check` and says what to do with a damaged one. A damaged file stops nothing else (the
 * daemon isolates it), but its project captures and learns nothing until it is replaced.
 */
import { Database } from "bun:sqlite";
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { resolveProjectDir } from "./init-project.ts";

export interface DbCheck {
  project_id: string;
  file: string;
  ok: boolean;
  problem: string | null;
}

/** `PRAGMA quick_check` of one project's data.db (read-only). */
export function checkProjectDb(root: string): DbCheck {
  const file = projectPaths.db(root);
  if (!existsSync(file))
    return { project_id: root, file, ok: false, problem: "missing: run `sqrl init` in the project to create it" };
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
  return `  ${c.file} is damaged (${c.problem}).\n  Move it aside (mv "${c.file}" "${c.file}.damaged"), run \`sqrl init ${c.project_id}\`, then \`sqrl ingest --backfill\` to capture the transcripts again.`;
}

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check each registered project's data.db and say what to do with a damaged one",
  },
  args: {
    path: { type: "positional", required: false, description: "Project folder (default: every registered project)" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  run({ args }) {
    let roots = listProjects();
    if (args.path) {
      const dir = resolveProjectDir(args.path);
      roots = [existsSync(projectPaths.db(dir)) ? dir : (projectForPath(dir, roots) ?? dir)];
    }
    const checks = roots.map(checkProjectDb);
    if (args.json) process.stdout.write(`${JSON.stringify(checks, null, 2)}\n`);
    else if (checks.length === 0) process.stdout.write("No registered projects: run `sqrl init` in a repository.\n");
    else
      for (const c of checks)
        process.stdout.write(c.ok ? `ok       ${c.project_id}\n` : `DAMAGED  ${c.project_id}\n${advice(c)}\n`);
    if (checks.some((c) => !c.ok)) process.exitCode = 1;
  },
});
