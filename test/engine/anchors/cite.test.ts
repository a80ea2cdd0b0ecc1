/**
 * What a memory's words cite before the repository confirms anything: repo-relative paths (not
 * versions, URLs or product names), code names (backticked, or code-shaped in prose; keywords never),
 * and package scripts run through a package manager (not its own commands).
 */
import { expect, test } from "bun:test";
import { citations, citedIdentifiers, citedPaths, citedScripts } from "../../../src/engine/anchors/cite.ts";

test("paths: repo-relative files, not versions, URLs or names like Node.js", () => {
  expect(
    citedPaths("Fixed in src/auth/jwt.ts (see ./README.md); Node.js 20.1.2 and https://x.dev/a.html are not files."),
  ).toEqual(["src/auth/jwt.ts", "README.md"]);
  expect(citedPaths("Config lives in `drizzle.config.ts`.")).toEqual(["drizzle.config.ts"]);
  expect(citedPaths("Outside: ../other/repo.ts")).toEqual([]);
});

test("identifiers: backticked code names first (the last part of a dotted one), then code-shaped prose words; keywords never", () => {
  const ids = citedIdentifiers(
    "Call `verifyToken()` with `jwt.clockTolerance`; `await` it. InventoryService and user_id matter, Stripe does not.",
  );
  expect(ids).toEqual([
    { name: "verifyToken", backticked: true },
    { name: "clockTolerance", backticked: true },
    { name: "InventoryService", backticked: false },
    { name: "user_id", backticked: false },
  ]);
  expect(citedIdentifiers("Run `pnpm vitest run --bail 1` first.")).toEqual([]);
});

test("scripts: run through a package manager, its own commands excluded", () => {
  expect(
    citedScripts(
      "Run `pnpm db:migrate`, then `npm run lint` and `bun run bench`; `pnpm install` and `yarn add x` are not scripts.",
    ),
  ).toEqual(["db:migrate", "lint", "bench"]);
});

test("citations join the item's file_paths with the paths its text names", () => {
  expect(citations("Edit src/db/schema.ts.", ["./drizzle.config.ts"]).paths).toEqual([
    "drizzle.config.ts",
    "src/db/schema.ts",
  ]);
});
