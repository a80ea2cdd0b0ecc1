/**
 * The portable form of a memory item (`sqrl export`, `sqrl import`, `sqrl sync`): what it says and
 * how sure we are, plus where it came from. Event ids point into the origin machine's data.db, so
 * they travel only as provenance; on import the item is merged through the same update rules as
 * freshly extracted memory (near-duplicate → NOOP, contradiction → DELETE_AND_ADD, …).
 */
import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { z } from "zod";
import { MemoryType } from "../../shared/api.ts";
import { SqrlError } from "../../shared/errors.ts";
import { scrubLocalPaths } from "../../shared/privacy/local-paths.ts";
import { currentItems, type MemoryItem } from "../../sql/memory-items.ts";
import { listUserStyle } from "../../sql/user-style.ts";
import type { Candidate } from "./extract/candidate.ts";
import { applyProjectDecision, projectAnchorItems, ruleDecision, type ExistingItem } from "./apply/update.ts";
import { applyUserDecision, userAnchorItems } from "./apply/user-style-store.ts";

export const PORTABLE_FORMAT = "sqrl-memory/1";

export const PortableMemory = z.object({
  format: z.literal(PORTABLE_FORMAT),
  type: MemoryType,
  key: z.string().min(1).max(200),
  scope: z.enum(["project", "user"]),
  content: z.string().min(1).max(4000),
  tags: z.array(z.string()).default([]),
  importance: z.number().min(0).max(1),
  confidence: z.number().min(0).max(1).default(0.5),
  file_paths: z.array(z.string()).default([]),
  created_at: z.string(),
  updated_at: z.string(),
  origin: z.object({
    item_id: z.string(),
    project_id: z.string().nullable(),
    user_id: z.string().nullable(),
    episode_ids: z.array(z.string()).default([]),
    event_ids: z.array(z.string()).default([]),
  }),
});
export type PortableMemory = z.infer<typeof PortableMemory>;

/**
 * The portable form travels (exports, .ctx/shared/ in git): paths inside the project become
 * repo-relative, home folders `~`, and the project is named by its folder, never its absolute path.
 */
export function toPortable(item: MemoryItem): PortableMemory {
  const root = item.project_id;
  const scrub = (s: string) => scrubLocalPaths(s, root);
  return {
    format: PORTABLE_FORMAT,
    type: item.type,
    key: scrub(item.key),
    scope: item.scope,
    content: scrub(item.content),
    tags: item.tags.map(scrub),
    importance: item.importance,
    confidence: item.confidence,
    file_paths: item.file_paths.map(scrub),
    created_at: item.created_at,
    // Never before created_at, whatever the origin store says.
    updated_at: item.updated_at < item.created_at ? item.created_at : item.updated_at,
    origin: {
      item_id: item.id,
      project_id: portableProjectId(root),
      user_id: item.user_id,
      episode_ids: item.evidence_episode_ids,
      event_ids: item.source_event_ids,
    },
  };
}

/** A project named for other machines: its folder name, not where it lives here. */
export function portableProjectId(root: string | null): string | null {
  return root ? basename(root.replace(/[\\/]+$/, "")) || null : null;
}

/** Content address of a portable item: what it says, not when or where it was said. */
export function portableHash(m: Pick<PortableMemory, "type" | "key" | "scope" | "content">): string {
  return createHash("sha256")
    .update(JSON.stringify([m.type, m.key, m.scope, m.content]))
    .digest("hex");
}

/** Valid project items, plus (optionally) the user's global style items. */
export function exportMemory(
  db: Database,
  projectId: string,
  opts: { userDb?: Database; userId?: string } = {},
): PortableMemory[] {
  const out = currentItems(db, projectId).map(toPortable);
  if (opts.userDb && opts.userId) {
    for (const s of listUserStyle(opts.userDb, opts.userId)) {
      out.push({
        format: PORTABLE_FORMAT,
        type: "user_style",
        key: s.key,
        scope: "user",
        content: scrubLocalPaths(s.content, projectId),
        tags: s.tags,
        importance: s.importance,
        confidence: s.confidence,
        file_paths: [],
        created_at: s.created_at,
        updated_at: s.updated_at < s.created_at ? s.created_at : s.updated_at,
        origin: {
          item_id: s.id,
          project_id: null,
          user_id: s.user_id,
          episode_ids: s.evidence.map((e) => e.episode_id),
          event_ids: [],
        },
      });
    }
  }
  return out;
}

export interface ImportOutcome {
  memory_id: string;
  verb: string;
  key: string;
  type: string;
}

function toCandidate(m: PortableMemory): Candidate {
  return {
    type: m.type,
    key: m.key,
    content: m.content,
    tags: m.tags,
    importance: m.importance,
    confidence: m.confidence,
    scope: m.scope,
    file_paths: m.file_paths,
    source_episode_id: m.origin.episode_ids[0] ?? `import:${m.origin.item_id}`,
    source_event_ids: [],
    rule: "import",
  };
}

/**
 * Merge portable items into a project (and the user's global style) through the update rules.
 * Each item is applied in its own step so the decision sees what the previous ones wrote.
 */
export function importMemory(
  db: Database,
  projectId: string,
  items: readonly PortableMemory[],
  opts: { userDb?: Database; userId: string; nowMs?: number; extractor?: string },
): ImportOutcome[] {
  const ctx = { projectId, extractor: opts.extractor ?? "import", nowMs: opts.nowMs ?? Date.now() };
  const out: ImportOutcome[] = [];
  for (const m of items) {
    const c = toCandidate(m);
    if (c.scope === "user") {
      if (!opts.userDb) continue;
      const userDb = opts.userDb;
      const existing = userAnchorItems(userDb, opts.userId, c.key) as ExistingItem[];
      const d = ruleDecision(c, existing);
      const id = userDb.transaction(() => applyUserDecision(userDb, opts.userId, c, d, ctx)).immediate();
      out.push({ memory_id: id, verb: existing.length === 0 ? "ADD_NEW" : d.verb, key: c.key, type: c.type });
      continue;
    }
    const existing = projectAnchorItems(db, projectId, c) as ExistingItem[];
    const d = ruleDecision(c, existing);
    const id = db.transaction(() => applyProjectDecision(db, c, d, ctx)).immediate();
    out.push({ memory_id: id, verb: existing.length === 0 ? "ADD_NEW" : d.verb, key: c.key, type: c.type });
  }
  return out;
}

/** Parse JSON Lines of portable items; a bad line is reported with its number, nothing is half-read. */
export function parsePortableLines(text: string, source: string): PortableMemory[] {
  const items: PortableMemory[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      throw new SqrlError(
        "bad_import_file",
        `${source}:${i + 1} is not valid JSON. Import files hold one exported memory per line (see \`sqrl export\`); nothing was imported.`,
      );
    }
    const parsed = PortableMemory.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SqrlError(
        "bad_import_file",
        `${source}:${i + 1}: field \`${issue?.path.join(".") || "item"}\`: ${issue?.message ?? "invalid"}. Nothing was imported.`,
      );
    }
    items.push(parsed.data);
  }
  return items;
}
