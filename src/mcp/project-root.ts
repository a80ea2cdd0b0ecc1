/**
 * The registered project a tool call is about: `project_root` (resolved against the server's cwd)
 * or the cwd itself, mapped to the longest registered root that contains it (a subfolder of a
 * project is that project). Symlinked paths are tried through their real path too.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { ProjectNotRegisteredError } from "../shared/errors.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";

export function resolveProjectRoot(
  given: string | undefined,
  cwd: string,
  projects: readonly string[] = listProjects(),
): string {
  const path = resolve(cwd, given ?? ".");
  const direct = projectForPath(path, projects);
  if (direct) return direct;
  if (existsSync(path)) {
    const real = realpathSync(path);
    const viaReal =
      projectForPath(real, projects) ??
      projectForPath(
        real,
        projects.map((p) => (existsSync(p) ? realpathSync(p) : p)),
      );
    if (viaReal)
      return projects.find((p) => p === viaReal || (existsSync(p) && realpathSync(p) === viaReal)) ?? viaReal;
  }
  throw new ProjectNotRegisteredError(path);
}
