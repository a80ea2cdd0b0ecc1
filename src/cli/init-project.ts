/**
 * Registering a project: its `.ctx/` folder, data.db and projects.json entry (used by `sqrl init` and tests).
 *
 * A data.db this machine did not make is never served (issue 30): one that git tracks (it came with
 * a clone) or that sits in a folder not registered here (a copy) is moved aside to
 * `.ctx/quarantine/`, and a fresh one takes its place. Memory from others arrives through the team
 * path (`sqrl sync`, reviewed); the user may still trust the file (`sqrl init --trust-db`).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, appendFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { bootstrapConfig } from "../shared/config.ts";
import { UsageError } from "../shared/errors.ts";
import { writeJsonAtomic } from "../shared/fs-atomic.ts";
import { gitStatus } from "../shared/git.ts";
import { homePaths, projectPaths, sqrlHome } from "../shared/paths.ts";
import { addProject, listProjects } from "../shared/projects.ts";
import { openProjectDb, openStateDb, openUserDb } from "../sql/open.ts";

export interface InitResult {
  root: string;
  registered: boolean;
  createdCtx: boolean;
  isGitRepo: boolean;
  gitignoreHasCtx: boolean;
  /** A data.db found that this machine did not make, moved here (repo-relative), or null. */
  quarantined: string | null;
  /** Why it was moved aside: "tracked by git" or "not registered on this machine". */
  quarantineReason: string | null;
  /** git tracks .ctx/data.db (after the move, the index still does until `git rm --cached`). */
  dbTrackedByGit: boolean;
}

export interface InitOptions {
  /** Keep a data.db found in the folder even though this machine did not make it. */
  trustDb?: boolean;
}

/** Does git track this project's data.db (it would travel with every clone)? */
export function gitTracksDb(root: string): boolean {
  return gitStatus(root, ["ls-files", "--error-unmatch", "--", relative(root, projectPaths.db(root))]) === 0;
}

/** Move a foreign data.db (and its WAL and shared-memory files) to .ctx/quarantine/; returns the new path. */
function quarantineDb(root: string): string {
  const dir = join(projectPaths.ctx(root), "quarantine");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const to = join(dir, `data-${stamp}.db`);
  for (const suffix of ["", "-wal", "-shm"]) {
    const from = `${projectPaths.db(root)}${suffix}`;
    if (existsSync(from)) renameSync(from, `${to}${suffix}`);
  }
  return to;
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
export function initProject(path: string, opts: InitOptions = {}): InitResult {
  const root = resolveProjectDir(path);
  bootstrapHome();
  const found = existsSync(projectPaths.db(root));
  const dbTrackedByGit = found && gitTracksDb(root);
  let quarantined: string | null = null;
  let quarantineReason: string | null = null;
  if (found && !opts.trustDb) {
    if (dbTrackedByGit) quarantineReason = "tracked by git: it came with the repository";
    else if (!listProjects().includes(root)) quarantineReason = "not registered on this machine: copied or cloned here";
    if (quarantineReason) quarantined = relative(root, quarantineDb(root));
  }
  const createdCtx = !existsSync(projectPaths.db(root));
  mkdirSync(projectPaths.views(root), { recursive: true, mode: 0o700 }); // memory is private to this machine
  openProjectDb(root).close();
  const registered = addProject(root);
  const isGitRepo = existsSync(join(root, ".git"));
  return {
    root,
    registered,
    createdCtx,
    isGitRepo,
    gitignoreHasCtx: gitignoreHasCtx(root),
    quarantined,
    quarantineReason,
    dbTrackedByGit,
  };
}

function gitignoreLines(root: string): string[] {
  const file = join(root, ".gitignore");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split(/\r?\n/)
        .map((l) => l.trim())
    : [];
}

/** Does .gitignore already keep sqrl's local files (`.ctx/`, `.ctx/*`, or at least `.ctx/data.db*`) out of git? */
export function gitignoreHasCtx(root: string): boolean {
  return gitignoreLines(root).some((line) => /^\/?\.ctx\/?(\*)?$|^\/?\.ctx\/data\.db\*?$/.test(line));
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
