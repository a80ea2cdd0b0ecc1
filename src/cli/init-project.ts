/**
 * Registering a project: its `.ctx/` folder, data.db and projects.json entry (used by `sqrl init` and tests).
 */
import { existsSync, mkdirSync, readFileSync, statSync, appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { bootstrapConfig } from "../shared/config.ts";
import { UsageError } from "../shared/errors.ts";
import { writeJsonAtomic } from "../shared/fs-atomic.ts";
import { homePaths, projectPaths, sqrlHome } from "../shared/paths.ts";
import { addProject, listProjects } from "../shared/projects.ts";
import { openProjectDb, openStateDb, openUserDb } from "../sql/open.ts";

export interface InitResult {
  root: string;
  registered: boolean;
  createdCtx: boolean;
  isGitRepo: boolean;
  gitignoreHasCtx: boolean;
}

/** The absolute, existing directory `path` names, or a UsageError that says what is wrong. */
export function resolveProjectDir(path: string): string {
  const root = resolve(path);
  if (!existsSync(root))
    throw new UsageError(
      `${root} does not exist. Create it or pass the path of an existing project folder.`,
      "not_a_directory",
    );
  if (!statSync(root).isDirectory())
    throw new UsageError(`${root} is a file, not a directory. Pass the project's folder.`, "not_a_directory");
  return root;
}

/** Create ~/.sqrl with its files (config.toml, user.db, state.db, projects.json) if missing. */
export function bootstrapHome(): void {
  mkdirSync(sqrlHome(), { recursive: true, mode: 0o700 });
  bootstrapConfig();
  openUserDb().close();
  openStateDb().close();
  if (!existsSync(homePaths.projects())) writeJsonAtomic(homePaths.projects(), { projects: [] });
  else listProjects(); // fail early, untouched, on a corrupt file
}

/** Set up `<root>/.ctx` (data.db + views/) and register the project. Idempotent. */
export function initProject(path: string): InitResult {
  const root = resolveProjectDir(path);
  bootstrapHome();
  const createdCtx = !existsSync(projectPaths.db(root));
  mkdirSync(projectPaths.views(root), { recursive: true, mode: 0o700 }); // memory is private to this machine
  openProjectDb(root).close();
  const registered = addProject(root);
  const isGitRepo = existsSync(join(root, ".git"));
  return { root, registered, createdCtx, isGitRepo, gitignoreHasCtx: gitignoreHasCtx(root) };
}

function gitignoreLines(root: string): string[] {
  const file = join(root, ".gitignore");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split(/\r?\n/)
        .map((l) => l.trim())
    : [];
}

/** Does .gitignore already keep sqrl's local files (`.ctx/` or `.ctx/*`) out of git? */
export function gitignoreHasCtx(root: string): boolean {
  return gitignoreLines(root).some((line) => /^\/?\.ctx\/?(\*)?$/.test(line));
}

/** A plain `.ctx/` line also hides .ctx/shared/, the team memory `sqrl sync` writes for git. */
export function gitignoreHidesShared(root: string): boolean {
  return gitignoreLines(root).some((line) => /^\/?\.ctx\/?$/.test(line));
}

/** Ignore `.ctx/*` but keep `.ctx/shared/` (team memory) in the repo's .gitignore, unless already there. */
export function addCtxToGitignore(root: string): boolean {
  if (gitignoreHasCtx(root)) return false;
  const file = join(root, ".gitignore");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const prefix = text.length > 0 && !text.endsWith("\n") ? "\n" : "";
  appendFileSync(
    file,
    `${prefix}# sqrl's local memory (per machine); .ctx/shared/ is team memory for git (sqrl sync)\n.ctx/*\n!.ctx/shared/\n`,
  );
  return true;
}
