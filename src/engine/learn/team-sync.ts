/**
 * Team memory through git (`sqrl sync`): the project's valid, project-scoped memory is written as
 * one reviewable JSON file per item under `.ctx/shared/<type>/`, named by a hash of what it says;
 * teammates' files found there are merged through the same update rules as extracted memory.
 * Files whose item was superseded here (after being merged or exported) are removed, so the
 * folder converges on what is true now. Personal (user-scope) style never leaves the machine.
 */
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { projectPaths } from "../../shared/paths.ts";
import { nowIso } from "../../shared/time.ts";
import { currentItems } from "../../sql/memory-items.ts";
import { importMemory, portableHash, PortableMemory, toPortable, type ImportOutcome } from "./memory-transfer.ts";

export interface SyncReport {
  dir: string;
  imported: ImportOutcome[];
  exported: string[];
  pruned: string[];
  invalid: string[];
}

interface SharedFile {
  path: string;
  rel: string;
  hash: string;
  item: PortableMemory;
}

function slug(key: string): string {
  return (
    key
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || "item"
  );
}

function listJson(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".json"))
    .map((e) => join(e.parentPath, e.name));
}

function readShared(root: string, invalid: string[]): SharedFile[] {
  const out: SharedFile[] = [];
  for (const path of listJson(projectPaths.shared(root))) {
    const rel = relative(root, path);
    try {
      const parsed = PortableMemory.safeParse(JSON.parse(readFileSync(path, "utf8")));
      if (!parsed.success || parsed.data.scope !== "project") {
        invalid.push(rel);
        continue;
      }
      out.push({ path, rel, hash: portableHash(parsed.data), item: parsed.data });
    } catch {
      invalid.push(rel);
    }
  }
  return out;
}

function seenHashes(db: Database): Set<string> {
  return new Set((db.query("SELECT hash FROM shared_sync").all() as Array<{ hash: string }>).map((r) => r.hash));
}

function record(
  db: Database,
  hash: string,
  direction: "import" | "export",
  memoryId: string | null,
  rel: string,
  at: string,
): void {
  db.query("INSERT OR REPLACE INTO shared_sync (hash, direction, memory_id, path, at) VALUES (?, ?, ?, ?, ?)").run(
    hash,
    direction,
    memoryId,
    rel,
    at,
  );
}

export function syncProject(db: Database, root: string, opts: { userId: string; nowMs?: number }): SyncReport {
  const nowMs = opts.nowMs ?? Date.now();
  const at = nowIso(nowMs);
  const report: SyncReport = { dir: projectPaths.shared(root), imported: [], exported: [], pruned: [], invalid: [] };
  const files = readShared(root, report.invalid);

  // 1. Merge teammates' files not seen before.
  const seen = seenHashes(db);
  for (const f of files) {
    if (seen.has(f.hash)) continue;
    const [outcome] = importMemory(db, root, [f.item], { userId: opts.userId, nowMs, extractor: "import" });
    if (outcome) report.imported.push(outcome);
    record(db, f.hash, "import", outcome?.memory_id ?? null, f.rel, at);
  }

  // 2. Write every valid project-scoped item that has no file yet.
  const valid = currentItems(db, root).filter((i) => i.scope === "project");
  const validHashes = new Set<string>();
  const onDisk = new Set(files.map((f) => f.hash));
  for (const item of valid) {
    const portable = toPortable(item);
    const hash = portableHash(portable);
    validHashes.add(hash);
    if (onDisk.has(hash)) continue;
    const path = join(projectPaths.shared(root), item.type, `${slug(item.key)}-${hash.slice(0, 12)}.json`);
    mkdirSync(join(projectPaths.shared(root), item.type), { recursive: true });
    writeFileSync(path, `${JSON.stringify(portable, null, 2)}\n`);
    record(db, hash, "export", item.id, relative(root, path), at);
    report.exported.push(relative(root, path));
  }

  // 3. Remove files already merged here whose statement is no longer valid here.
  for (const f of files) {
    if (validHashes.has(f.hash)) continue;
    rmSync(f.path, { force: true });
    report.pruned.push(f.rel);
  }
  return report;
}
