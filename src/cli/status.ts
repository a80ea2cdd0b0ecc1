import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { resolveProjectDir } from "./init-project.ts";
import { readProjectStatus, type ProjectStatus } from "./project-status.ts";
import { ProjectNotRegisteredError } from "../shared/errors.ts";

function render(s: ProjectStatus): string {
  const lines = [
    `Project   ${s.project_id}`,
    `Events    ${s.events.total} stored, ${s.events.unprocessed} waiting for the engine`,
    `Episodes  ${s.episodes.total} (${s.episodes.open} open)`,
    `Memory    ${s.memory_items.total} items${s.memory_items.total > 0 ? `: ${Object.entries(s.memory_items.by_type).map(([t, n]) => `${n} ${t}`).join(", ")}` : ""}`,
    `Global    ${s.user_style_items} user-style items in user.db`,
    `LLM       ${s.llm.tokens_today} tokens used today`,
    `Views     ${s.views.length === 0 ? "none generated yet" : s.views.map((v) => `${v.name} (${v.stale ? "stale" : "fresh"}, ${v.generated_at})`).join(", ")}`,
  ];
  return `${lines.join("\n")}\n`;
}

export default defineCommand({
  meta: { name: "status", description: "What sqrl has stored for a project (works with the daemon down)" },
  args: {
    path: { type: "positional", required: false, default: ".", description: "Project folder or a path inside it" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  run({ args }) {
    const dir = resolveProjectDir(args.path);
    const root = existsSync(projectPaths.db(dir)) ? dir : projectForPath(dir, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(dir);
    const status = readProjectStatus(root);
    process.stdout.write(args.json ? `${JSON.stringify(status, null, 2)}\n` : render(status));
  },
});
