/**
 * The registered projects (projects.json): listing, adding, removing, and mapping a path to its project.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve, sep } from "node:path";
import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { writeJsonAtomic } from "./fs-atomic.ts";
import { homePaths } from "./paths.ts";

const ProjectsFile = z.object({ projects: z.array(z.string().min(1)) });

/** Registered project roots (absolute paths) from projects.json. A missing file means none. */
export function listProjects(path = homePaths.projects()): string[] {
  if (!existsSync(path)) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(
      `${path} is not valid JSON (${(err as Error).message}). It was left untouched: fix it by hand, or move it away and run \`sqrl init\` again.`,
      "bad_projects_file",
    );
  }
  const parsed = ProjectsFile.safeParse(data);
  if (!parsed.success) {
    throw new ConfigError(
      `${path} must look like {"projects": ["/abs/path", ...]}. It was left untouched: fix it by hand.`,
      "bad_projects_file",
    );
  }
  return parsed.data.projects;
}

/** Add a project root; returns false when it was already registered. */
export function addProject(root: string, path = homePaths.projects()): boolean {
  const abs = resolve(root);
  const projects = listProjects(path);
  if (projects.includes(abs)) return false;
  writeJsonAtomic(path, { projects: [...projects, abs] });
  return true;
}

export function removeProject(root: string, path = homePaths.projects()): boolean {
  const abs = resolve(root);
  const projects = listProjects(path);
  if (!projects.includes(abs)) return false;
  writeJsonAtomic(path, { projects: projects.filter((p) => p !== abs) });
  return true;
}

/** Is `child` the same path as `parent` or inside it? */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

/** The longest registered project root that contains `cwd`, or undefined. */
export function projectForPath(cwd: string, projects: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const p of projects) if (isWithin(cwd, p) && (!best || p.length > best.length)) best = p;
  return best;
}
