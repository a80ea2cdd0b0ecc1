import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/sqrl.ts";

/**
 * `npm install` from a clean clone: the lockfile is what a fresh install writes (npm rewrites the
 * root entry when it disagrees with package.json), and the declared Node engine satisfies every
 * package that gets installed (otherwise npm prints EBADENGINE warnings on a supported Node).
 */
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as Record<string, unknown> & {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<
    string,
    { engines?: { node?: string }; optional?: boolean; version?: string } & Record<string, unknown>
  >;
};

test("the lockfile's root entry matches package.json (a fresh npm install leaves it unchanged)", () => {
  const root = lock.packages[""]!;
  for (const field of ["name", "version", "dependencies", "devDependencies", "engines", "bin"])
    expect({ field, value: root[field] }).toEqual({ field, value: pkg[field] });
});

test("the declared Node engine is true: every installed package accepts it", () => {
  const min = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(pkg.engines.node)?.[1];
  expect(min).toBeDefined();
  const declared = [...min!.split("."), "0", "0"].slice(0, 3).join(".");
  const refused: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = entry.engines?.node;
    // Optional packages are per-platform builds npm skips when they do not fit.
    if (!path || !range || entry.optional) continue;
    for (const node of [declared, "24.0.0"])
      if (!Bun.semver.satisfies(node, range))
        refused.push(`${path.replace(/^node_modules\//, "")} (${range}) refuses Node ${node}`);
  }
  expect(refused).toEqual([]);
});
