/**
 * Project identity keyed on the git common directory (issue 15 item 4): a linked worktree of a
 * registered repository is that project (and its transcripts' paths are made relative to the
 * worktree); a clone of the same repository is another project; a plain folder is none.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { repoRelativePaths } from "../../src/daemon/ingest.ts";
import { linkedWorkTree, projectForPath } from "../../src/shared/projects.ts";
import { commitAll, git, initRepo, writeFile } from "../engine/retrieve/git-repo.ts";
import { tempDir } from "../helpers/sqrl.ts";

const dir = tempDir("sqrl-identity-");
afterAll(() => dir.cleanup());

test("a worktree maps to its repository's project, a clone does not", () => {
  const main = join(dir.path, "main");
  initRepo(main);
  writeFile(main, "src/a.ts", "export const a = 1;\n");
  commitAll(main, "init");
  const tree = join(dir.path, "main-feature");
  git(main, "worktree", "add", "-q", "-b", "feature", tree);
  const clone = join(dir.path, "clone");
  Bun.spawnSync(["git", "clone", "-q", main, clone], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" },
  });
  const projects = [main];
  expect(projectForPath(join(tree, "src"), projects)).toBe(main);
  expect(linkedWorkTree(join(tree, "src"), projects)).toBe(tree);
  expect(linkedWorkTree(join(main, "src"), projects)).toBeNull();
  expect(projectForPath(clone, projects)).toBeUndefined();
  expect(projectForPath(dir.path, projects)).toBeUndefined();
  expect(repoRelativePaths([join(tree, "src/a.ts"), "src/b.ts"], main, join(tree, "src"))).toEqual([
    "src/a.ts",
    "src/src/b.ts",
  ]);
  expect(repoRelativePaths([join(clone, "src/a.ts")], main, clone)).toEqual([join(clone, "src/a.ts")]);
});
