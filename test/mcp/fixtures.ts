import type { MemoryType } from "../../src/shared/api.ts";
import { openProjectDb } from "../../src/sql/open.ts";
import { insertMemoryItem } from "../../src/sql/memory-items.ts";
import { insertEvents } from "../../src/sql/events.ts";
import { addEpisodeEvents, insertEpisode } from "../../src/sql/episodes.ts";
import type { EventDTO } from "../../src/shared/event.ts";

export const SEED_EPISODE_ID = "ep_seed_jwt";

/** A small, realistic memory of one project (what the engine would have extracted). */
export const SEED_MEMORIES: Array<{
  type: MemoryType;
  key: string;
  content: string;
  tags: string[];
  importance: number;
  file_paths: string[];
}> = [
  {
    type: "user_style",
    key: "package_manager",
    content: "Use pnpm, never npm or yarn, for installing and running scripts.",
    tags: ["tooling"],
    importance: 0.9,
    file_paths: [],
  },
  {
    type: "user_style",
    key: "test_command",
    content: "Run tests with `pnpm vitest run --bail 1` before committing.",
    tags: ["testing"],
    importance: 0.8,
    file_paths: [],
  },
  {
    type: "user_style",
    key: "style:named_exports",
    content: "Prefer named exports over default exports in TypeScript modules.",
    tags: ["style"],
    importance: 0.6,
    file_paths: [],
  },
  {
    type: "project_fact",
    key: "framework",
    content: "The API server is built with Hono on Node 20; routes live in src/routes/.",
    tags: ["framework"],
    importance: 0.8,
    file_paths: ["src/routes/index.ts"],
  },
  {
    type: "project_fact",
    key: "database",
    content: "PostgreSQL through drizzle-orm; migrations in drizzle/ are generated with `pnpm drizzle-kit generate`.",
    tags: ["database"],
    importance: 0.7,
    file_paths: ["drizzle.config.ts"],
  },
  {
    type: "project_fact",
    key: "endpoint:/inventory",
    content: "Inventory endpoints are in src/routes/inventory.ts and use the InventoryService for all writes.",
    tags: ["api"],
    importance: 0.6,
    file_paths: ["src/routes/inventory.ts"],
  },
  {
    type: "pitfall",
    key: "jwt_clock_skew",
    content:
      "JWT login tests failed with 'token not yet valid' because of clock skew; fixed by allowing clockTolerance: 5 in verifyToken (src/auth/jwt.ts).",
    tags: ["auth", "testing"],
    importance: 0.8,
    file_paths: ["src/auth/jwt.ts"],
  },
  {
    type: "pitfall",
    key: "inventory_soft_delete",
    content:
      "Deleting inventory items must be a soft delete (deleted_at) because orders reference them; a hard DELETE broke the orders page.",
    tags: ["inventory", "database"],
    importance: 0.7,
    file_paths: ["src/routes/inventory.ts"],
  },
  {
    type: "recipe",
    key: "recipe:new_migration",
    content:
      "To change the schema: edit src/db/schema.ts, run `pnpm drizzle-kit generate`, then `pnpm db:migrate`, then run the tests.",
    tags: ["database"],
    importance: 0.6,
    file_paths: ["src/db/schema.ts"],
  },
];

/** Write the seed memories (plus `extra` generated filler items) into a project's data.db. */
export function seedProject(root: string, opts: { userId?: string; extra?: number } = {}): string[] {
  const db = openProjectDb(root);
  const ids: string[] = [];
  const now = new Date();
  try {
    db.transaction(() => {
      const all = [...SEED_MEMORIES];
      for (let i = 0; i < (opts.extra ?? 0); i++) {
        all.push({
          type: "project_fact",
          key: `fact_${i}`,
          content: `Module m${i} in src/mod${i}/ handles feature ${i} (service ${i % 17}, queue ${i % 5}).`,
          tags: ["filler"],
          importance: 0.3,
          file_paths: [`src/mod${i}/index.ts`],
        });
      }
      seedEpisode(db, root, opts.userId ?? "alice", now);
      all.forEach((m, i) => {
        const at = new Date(now.getTime() - (i % 30) * 86_400_000).toISOString();
        const id = `mem_seed_${i}`;
        insertMemoryItem(db, {
          id,
          project_id: root,
          user_id: opts.userId ?? "alice",
          scope: "project",
          type: m.type,
          key: m.key,
          content: m.content,
          tags: m.tags,
          importance: m.importance,
          created_at: at,
          updated_at: at,
          source_episode_id: null,
          source_event_ids: [],
          confidence: 0.9,
          file_paths: m.file_paths,
          evidence_episode_ids: [],
          decision: "ADD_NEW",
          extractor: "manual",
        });
        ids.push(id);
      });
    })();
  } finally {
    db.close();
  }
  return ids;
}

/** One closed episode with its raw events (for timeline and recall). */
function seedEpisode(db: ReturnType<typeof openProjectDb>, root: string, userId: string, now: Date): void {
  const t = (min: number) => new Date(now.getTime() - 2 * 86_400_000 + min * 60_000).toISOString();
  const texts: Array<[EventDTO["event_type"], string, string[]]> = [
    ["user_message", "The JWT login tests fail with 'token not yet valid', please fix them.", []],
    ["command_run", JSON.stringify({ command: "pnpm vitest run src/auth", exit_code: 1 }), ["src/auth/jwt.ts"]],
    ["code_change", "Allow clockTolerance: 5 in verifyToken.", ["src/auth/jwt.ts"]],
    ["test_run", "pnpm vitest run src/auth: 12 passed", ["src/auth/jwt.test.ts"]],
    [
      "assistant_response",
      "Fixed: verifyToken now tolerates 5 s of clock skew; the auth tests pass.",
      ["src/auth/jwt.ts"],
    ],
  ];
  const events: EventDTO[] = texts.map(([type, text, paths], i) => ({
    id: `evt_seed_${i}`,
    project_id: root,
    user_id: userId,
    source_tool: "claude_code",
    session_id: "sess_seed",
    timestamp: t(i),
    event_type: type,
    content_json: JSON.stringify({ text }),
    file_paths: paths,
    hash: `hash_seed_${i}`,
    processed_at: t(10),
  }));
  insertEvents(db, events);
  insertEpisode(db, {
    id: SEED_EPISODE_ID,
    project_id: root,
    user_id: userId,
    session_id: "sess_seed",
    start_ts: t(0),
    end_ts: t(4),
    event_count: events.length,
    summary:
      "Fixed failing JWT login tests (token not yet valid) by allowing 5 s clock tolerance in verifyToken; auth tests green.",
    importance: 0.7,
    created_at: t(10),
    status: "closed",
    closed_at: t(30),
    extracted_at: t(30),
    extractor: "offline",
    summary_source: "offline",
    outcome: "tests passed",
    file_paths: ["src/auth/jwt.ts"],
  });
  addEpisodeEvents(
    db,
    SEED_EPISODE_ID,
    events.map((e) => e.id),
  );
}
