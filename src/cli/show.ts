/**
 * `sqrl show <memory-id>`: one memory item with its lineage (the rows it replaced, the row that
 * replaced it) and its evidence (episodes and the events they came from). Reads the project's
 * data.db (and user.db for global style items) read-only: no daemon needed.
 */
import { memoryEvidence } from "../engine/retrieve/event-text.ts";
import { memoryOutcome, outcomeNotes } from "../engine/retrieve/memory-outcome.ts";
import { summaryWithOutcome } from "../engine/retrieve/render/markdown.ts";
import { plural } from "../shared/plural.ts";
import type { Database } from "bun:sqlite";
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { NotFoundError, ProjectNotRegisteredError } from "../shared/errors.ts";
import { homePaths, projectPaths } from "../shared/paths.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { relativeTime } from "../shared/time.ts";
import { resolveProjectDir } from "./init-project.ts";

export interface ShownEvent {
  id: string;
  timestamp: string;
  event_type: string;
  text: string;
}

export interface ShownVersion {
  id: string;
  content: string;
  decision: string;
  valid_from: string;
  valid_to: string | null;
  deleted: boolean;
  superseded_by_episode?: string | null;
}

export interface ShowResult {
  scope: "project" | "user";
  item: Record<string, unknown>;
  /** Older versions this item replaced, newest first. */
  predecessors: ShownVersion[];
  /** Newer versions that replaced it, oldest first (empty when it is current). */
  successors: ShownVersion[];
  episodes: Array<{ id: string; start_ts: string; end_ts: string; summary: string; outcome: string }>;
  events: ShownEvent[];
  /** The item checked against today's code (current project items only). */
  verification?: { status: string; reason: string };
  /** What grading did to it: a flag with its reason, decay steps for disuse. */
  outcome?: { flag: string | null; flag_reason: string | null; decay_steps: number; decayed_at: string | null };
}

async function showProjectItem(db: Database, id: string): Promise<ShowResult | null> {
  const { getMemoryItem, predecessors } = await import("../sql/memory-items.ts");
  const item = getMemoryItem(db, id);
  if (!item) return null;
  const version = (m: NonNullable<ReturnType<typeof getMemoryItem>>): ShownVersion => ({
    id: m.id,
    content: m.content,
    decision: m.decision,
    valid_from: m.valid_from,
    valid_to: m.valid_to,
    deleted: m.deleted,
    superseded_by_episode: m.superseded_by_episode,
  });
  const successors: ShownVersion[] = [];
  let next = item.superseded_by;
  for (let i = 0; next && i < 1000; i++) {
    const s = getMemoryItem(db, next);
    if (!s) break;
    successors.push(version(s));
    next = s.superseded_by;
  }
  const { episodes, events } = memoryEvidence(db, item, 160);
  const { embedding: _e, ...plain } = item;
  const shown: ShowResult = {
    scope: "project",
    item: plain,
    predecessors: predecessors(db, id).map(version),
    successors,
    episodes,
    events,
  };
  const outcome = memoryOutcome(db, id);
  if (outcome) shown.outcome = outcome;
  if (!item.deleted) {
    const { verifyItems } = await import("../engine/retrieve/verify/verify.ts");
    const v = verifyItems(item.project_id, db, [item]).get(item.id);
    if (v) shown.verification = { status: v.status, reason: v.reason };
  }
  return shown;
}

async function showUserItem(id: string): Promise<ShowResult | null> {
  if (!existsSync(homePaths.userDb())) return null;
  const { openUserDb } = await import("../sql/open.ts");
  const { getUserStyleById, userStyleHistory } = await import("../sql/user-style.ts");
  const db = openUserDb({ readonly: true });
  try {
    let item: Record<string, unknown> | undefined = getUserStyleById(db, id) as Record<string, unknown> | undefined;
    if (!item)
      item = db.query(`SELECT * FROM user_style_history WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    if (!item) return null;
    const current = db
      .query(`SELECT id, content, updated_at FROM user_style_items WHERE user_id = ? AND key = ?`)
      .get(item.user_id as string, item.key as string) as { id: string; content: string; updated_at: string } | null;
    const history = userStyleHistory(db, item.user_id as string, item.key as string);
    const idx = history.findIndex((h) => h.id === id);
    const older = idx >= 0 ? history.slice(idx + 1) : history;
    const newer = idx >= 0 ? history.slice(0, idx).reverse() : [];
    const asVersion = (h: (typeof history)[number]): ShownVersion => ({
      id: h.id,
      content: h.content,
      decision: h.decision,
      valid_from: h.created_at,
      valid_to: h.valid_to,
      deleted: true,
      superseded_by_episode: h.superseded_by_episode,
    });
    const successors = [...newer.map(asVersion)];
    if (idx >= 0 && current)
      successors.push({
        id: current.id,
        content: current.content,
        decision: "current",
        valid_from: current.updated_at,
        valid_to: null,
        deleted: false,
      });
    return { scope: "user", item, predecessors: older.map(asVersion), successors, episodes: [], events: [] };
  } finally {
    db.close();
  }
}

/** The item with lineage and evidence; NotFoundError names where it looked. */
export async function showMemory(root: string, id: string): Promise<ShowResult> {
  const { openProjectDb } = await import("../sql/open.ts");
  const db = openProjectDb(root, { readonly: true });
  try {
    const found = (await showProjectItem(db, id)) ?? (await showUserItem(id));
    if (!found)
      throw new NotFoundError(
        `No memory item ${id} in ${root} or in the global user.db. Ids appear in \`sqrl search\`, \`sqrl context\` and \`sqrl log\` output.`,
        "memory_not_found",
      );
    return found;
  } finally {
    db.close();
  }
}

function renderVersion(v: ShownVersion): string {
  return `  ${v.id}  ${v.decision}  ${v.valid_from}${v.valid_to ? ` → ${v.valid_to}` : " → now"}\n    ${v.content}`;
}

export function renderShow(r: ShowResult): string {
  const it = r.item;
  const lines = [
    `${String(it.id)}  [${String(it.type ?? "user_style")}] ${String(it.key)}  (${r.scope} scope${it.deleted === true || (r.scope === "user" && "valid_to" in it) ? ", superseded" : ""})`,
    `  ${String(it.content)}`,
    `  importance ${String(it.importance)}${it.confidence !== undefined ? `, confidence ${String(it.confidence)}` : ""}, updated ${String(it.updated_at)} (${relativeTime(String(it.updated_at))})`,
  ];
  if (Array.isArray(it.tags) && it.tags.length > 0) lines.push(`  tags: ${(it.tags as string[]).join(", ")}`);
  if (Array.isArray(it.file_paths) && it.file_paths.length > 0)
    lines.push(`  files: ${(it.file_paths as string[]).join(", ")}`);
  if (r.verification) lines.push(`  checked against the code: ${r.verification.status} (${r.verification.reason})`);
  // The same sentences as the page's memory screen.
  for (const note of outcomeNotes(r.outcome)) lines.push(`  ${note}`);
  lines.push(
    "",
    `Replaced (${r.predecessors.length}):`,
    ...(r.predecessors.length ? r.predecessors.map(renderVersion) : ["  nothing: this is the first version"]),
  );
  lines.push(
    "",
    `Replaced by (${r.successors.length}):`,
    ...(r.successors.length ? r.successors.map(renderVersion) : ["  nothing: this version is current"]),
  );
  if (r.scope === "project") {
    lines.push("", `Evidence: ${r.episodes.length} episode(s), ${r.events.length} event(s)`);
    for (const e of r.episodes)
      lines.push(
        `  episode ${e.id}  ${e.start_ts} → ${e.end_ts}`,
        `    ${summaryWithOutcome(e.summary, e.outcome ?? "")}`,
      );
    for (const e of r.events) lines.push(`  ${e.timestamp}  ${e.event_type.padEnd(18)} ${e.id}  ${e.text}`);
  } else if (Array.isArray(it.evidence)) {
    lines.push(
      "",
      "Evidence:",
      ...(it.evidence as Array<{ project_id: string; episode_id: string; event_ids: string[] }>).map(
        (e) => `  ${e.project_id}  episode ${e.episode_id}  (${plural(e.event_ids.length, "event")})`,
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

export default defineCommand({
  meta: {
    name: "show",
    description:
      "One memory item with its lineage (what it replaced, what replaced it) and its evidence (episodes, events)",
  },
  args: {
    id: { type: "positional", required: true, description: "Memory id, e.g. mem_… (or ust_… for global style)" },
    project: { type: "string", description: "Project folder (default: the project containing the current directory)" },
    json: { type: "boolean", description: "Print as JSON" },
  },
  async run({ args }) {
    const dir = resolveProjectDir(args.project ?? ".");
    const root = existsSync(projectPaths.db(dir)) ? dir : projectForPath(dir, listProjects());
    if (!root || !existsSync(projectPaths.db(root))) throw new ProjectNotRegisteredError(dir);
    const result = await showMemory(root, args.id);
    process.stdout.write(args.json ? `${JSON.stringify(result, null, 2)}\n` : renderShow(result));
  },
});
