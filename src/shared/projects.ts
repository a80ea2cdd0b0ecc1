/**
 * The registered projects (projects.json): listing, adding, removing, and mapping a path to its project.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, resolve, sep } from "node:path";
import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { checkoutRoot, gitDirs } from "./git.ts";
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

/** What to say of a registered project whose folder is gone (doctor, daemon status, the page). */
export function missingProjectNote(root: string): string {
  return `missing: the folder is gone; run \`sqrl forget-project ${root}\` to unregister it (or put the folder back)`;
}

/** Is `child` the same path as `parent` or inside it? */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

/** The longest registered project root that contains `cwd`, or undefined. */
function registeredFor(cwd: string, projects: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const p of projects) if (isWithin(cwd, p) && (!best || p.length > best.length)) best = p;
  return best;
}

/** Checkout → the repository's main work tree (or null), memoized: capture asks once per event. */
const mainTrees = new Map<string, string | null>();

/**
 * The project a path belongs to: the longest registered root that contains it; else, for a path in
 * a linked git worktree (`git worktree add`), the repository it belongs to — a project is keyed on
 * its git common directory, so every worktree of one repository shares the one data.db in the main
 * work tree. Two clones have two common directories and stay two projects.
 */
export function projectForPath(cwd: string, projects: readonly string[]): string | undefined {
  const direct = registeredFor(cwd, projects);
  if (direct || projects.length === 0) return direct;
  const top = checkoutRoot(cwd);
  if (!top) return undefined;
  let main = mainTrees.get(top);
  if (main === undefined) {
    const dirs = gitDirs(top);
    main =
      dirs && dirs.commonDir !== dirs.gitDir && basename(dirs.commonDir) === ".git" ? dirname(dirs.commonDir) : null;
    if (mainTrees.size > 1000) mainTrees.clear();
    mainTrees.set(top, main);
  }
  return main && projects.includes(main) ? main : undefined;
}

/** The top of the checkout that `path` is in, when it is a linked worktree of a registered project (else null). */
export function linkedWorkTree(path: string, projects: readonly string[]): string | null {
  if (registeredFor(path, projects)) return null;
  const top = checkoutRoot(path);
  return top && projectForPath(path, projects) ? top : null;
}
