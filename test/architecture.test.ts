/**
 * The import map of docs/architecture.md, enforced: every import between folders of src/ must be
 * allowed by the table between the `import-map` markers, and the import graph has no cycle.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cycles, importGraph } from "../scripts/import-graph.ts";
import { REPO_ROOT } from "./helpers/sqrl.ts";

const SRC = join(REPO_ROOT, "src");

/**
 * Files being rewritten by other work in progress (capture internals, extraction and apply, the MCP
 * stdio server and tool outputs): they get their module comment there. Remove entries as they land.
 */

/** The folder a file belongs to in the map: `engine/<part>` inside the engine, else its top folder (or the file itself). */
function areaOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "engine" && parts.length > 2) return `engine/${parts[1]}`;
  return parts.length > 1 ? parts[0]! : file;
}

function importMap(): Map<string, Set<string>> {
  const doc = readFileSync(join(REPO_ROOT, "docs", "architecture.md"), "utf8");
  const table = doc.split("<!-- import-map:start -->")[1]?.split("<!-- import-map:end -->")[0];
  if (!table) throw new Error("docs/architecture.md has no import-map table");
  const map = new Map<string, Set<string>>();
  for (const line of table.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const folder = /^`([^`]+)`$/.exec(cells[1] ?? "")?.[1];
    if (!folder) continue;
    map.set(folder, new Set([...(cells[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
  }
  return map;
}

describe("architecture", () => {
  const { files, edges } = importGraph(SRC);
  const map = importMap();

  test("every file of src/ belongs to a folder of the map", () => {
    expect(files.map(areaOf).filter((a) => !map.has(a))).toEqual([]);
  });

  test("every import between folders is allowed by docs/architecture.md", () => {
    const broken = edges
      .filter((e) => !e.to.startsWith(".."))
      .filter((e) => areaOf(e.from) !== areaOf(e.to) && !map.get(areaOf(e.from))?.has(areaOf(e.to)))
      .map((e) => `${e.from} → ${e.to}`);
    expect(broken).toEqual([]);
  });

  test("nothing below the entry points imports the MCP face (src/mcp): only main.ts and cli/ do", () => {
    const into = edges.filter((e) => areaOf(e.to) === "mcp" && areaOf(e.from) !== "mcp");
    expect(into.filter((e) => !["main.ts", "cli"].includes(areaOf(e.from))).map((e) => `${e.from} → ${e.to}`)).toEqual(
      [],
    );
    expect(map.get("daemon")?.has("mcp")).toBe(false);
  });

  test("no import cycles", () => {
    expect(cycles(edges).map((c) => c.join(" → "))).toEqual([]);
  });

  test("every file of src/ opens with a module doc comment", () => {
    const missing = files.filter((f) => !/^(#![^\n]*\n)?\/\*\*/.test(readFileSync(join(SRC, f), "utf8")));
    expect(missing).toEqual([]);
  });

  test("the checker sees a forbidden import (retrieve → learn) and a cycle", () => {
    const fake = [
      { from: "engine/retrieve/search.ts", to: "engine/learn/forget.ts", typeOnly: false },
      { from: "engine/learn/forget.ts", to: "engine/retrieve/search.ts", typeOnly: true },
    ];
    expect(fake.filter((e) => !map.get(areaOf(e.from))?.has(areaOf(e.to)))).toHaveLength(2);
    expect(cycles(fake)).toHaveLength(1);
  });
});
