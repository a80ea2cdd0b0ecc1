/**
 * A real git repository in a temp dir for the memory-check tests: files, commits, branches, renames,
 * reverts. Git runs with a fixed identity and no user or system config.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const GIT_ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

export function git(root: string, ...args: string[]): string {
  const res = Bun.spawnSync(["git", "-C", root, ...args], { env: GIT_ENV, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${res.stderr.toString()}`);
  return res.stdout.toString().trim();
}

export function writeFile(root: string, rel: string, text: string | Uint8Array): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/** `git init` on branch main with .ctx ignored (sqrl's own folder never goes into git). */
export function initRepo(root: string): void {
  mkdirSync(root, { recursive: true });
  git(root, "init", "-q", "-b", "main");
  writeFile(root, ".gitignore", ".ctx/\n");
}

export function commitAll(root: string, message: string): string {
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", message);
  return git(root, "rev-parse", "HEAD");
}

export const JWT_TS = `import type { Token } from "./types";

/** A token without exp never expires. */
export function isExpired(token: Token, now: number): boolean {
  return token.exp !== undefined && token.exp * 1000 < now;
}

export const clockTolerance = 5;
`;

export const JWT_TS_BUGGY = `import type { Token } from "./types";

/** A token without exp never expires. */
export function isExpired(token: Token, now: number): boolean {
  return token.exp * 1000 < now;
}

export const clockTolerance = 5;
`;
