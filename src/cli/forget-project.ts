/**
 * `sqrl forget-project <path>`: unregister a project (remove it from projects.json), for a folder that
 * was deleted, moved or is no longer wanted. The daemon stops watching it at once; the project's own
 * `.ctx/` (its memory) is left where it is, so `sqrl init` there registers it again with all it knew.
 */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { SqrlError } from "../shared/errors.ts";
import { projectPaths } from "../shared/paths.ts";
import { listProjects, removeProject } from "../shared/projects.ts";

export default defineCommand({
  meta: {
    name: "forget-project",
    description: "Unregister a project (e.g. a deleted folder): sqrl stops capturing it; its .ctx/ is left in place",
  },
  args: {
    path: { type: "positional", required: true, description: "The project folder as registered (it may be gone)" },
    json: { type: "boolean", description: "Print the result as JSON" },
  },
  run({ args }) {
    const root = resolve(args.path);
    if (!removeProject(root)) {
      const registered = listProjects();
      throw new SqrlError(
        "project_not_registered",
        `${root} is not a registered project. ${
          registered.length === 0
            ? "No project is registered."
            : `Registered: ${registered.slice(0, 10).join(", ")}${registered.length > 10 ? ", …" : ""}.`
        }`,
      );
    }
    const keptCtx = existsSync(projectPaths.ctx(root));
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ project_id: root, unregistered: true, ctx_kept: keptCtx })}\n`);
      return;
    }
    process.stdout.write(
      `Unregistered ${root}: sqrl no longer captures or serves it.${
        keptCtx
          ? ` Its memory is still in ${projectPaths.ctx(root)} (\`sqrl init ${root}\` registers it again; delete the folder to drop it).`
          : ""
      }\n`,
    );
  },
});
