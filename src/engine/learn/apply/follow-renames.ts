/**
 * Names the later sessions use instead (issue 14: a memory checked against later sessions). A memory
 * that cites a path — "the skills should be in `.agent/skills`" — goes stale when the project renames
 * it: a reviewer rejected that very rule because every session after it, the same day, used
 * `.agents/skills`. Code anchors (follow-moves.ts) cannot see it when the path is not a file of the
 * repository (a generated layout, a target directory), but the sessions can: when the memory's path
 * is no longer used (it appears later only beside its new name, in the edit or diff that renamed it)
 * while a path one edit away from it appears in two or more later episodes, the
 * memory gets a new version with that name (the old one kept as history, linked to it; a memory a
 * person pinned or wrote is their choice and is left alone). An identifier the memory names (`summarise`) follows
 * the edit of a later session that renamed it where it is declared (`func summarise(` → `func
 * summarize(`), or spelled it one letter apart, unless a later event still uses the old name after
 * that edit. Run where memory is written, after extraction,
 * over the episodes just extracted: what each showed is kept as observations (`name_change`,
 * `name_use`), so no pass reads more than its own batch.
 */
import type { Database } from "bun:sqlite";
import { newId } from "../../../shared/ids.ts";
import { log } from "../../../shared/log.ts";
import { nowIso } from "../../../shared/time.ts";
import { pinnedIds } from "../../../sql/memory-marks.ts";
import { observationsOf, recordObservation } from "../../../sql/observations.ts";
import { currentItems, replaceWithVersion, supersedeMemoryItem, type MemoryItem } from "../../../sql/memory-items.ts";
import { renamedOnLine } from "../../anchors/check.ts";
import { citedIdentifiers } from "../../anchors/cite.ts";
import { wordRe } from "../../anchors/source-file.ts";

/** What a name_change observation made from an edit that renamed an identifier carries. */
const EDIT = '{"edit":true}';

/** Later episodes that must use the new name before the memory follows it. */
export const RENAME_EPISODES = 2;

/** A quoted or backticked path in a memory's text: `.agent/skills`, "src/db/tx.ts". */
const QUOTED_PATH = /[`"']([\w.@~-]*\/[\w.@~/-]*\w)\/?[`"']/g;
/** Any path in an event's text. */
const ANY_PATH = /[\w.@~-]*\/[\w.@~/-]*\w/g;

/**
 * A dot-folder path written bare: "skills go in the .agent/skills/ directory". Models write paths without
 * backticks; a reviewer found that very rule (stand-in answers, session 8) still served after the rename
 * because only quoted paths were followed. Bare paths are taken only when they start with a dot-folder,
 * so prose like "pass/fail" or "and/or" is never watched.
 */
const BARE_DOT_PATH = /(?<![\w./-])(\.[\w-]+(?:\/[\w.@~-]*\w)+)\/?/g;

export function citedPaths(content: string): string[] {
  const quoted = [...content.matchAll(QUOTED_PATH)].map((m) => m[1]!);
  const bare = [...content.matchAll(BARE_DOT_PATH)].map((m) => m[1]!);
  return [...new Set([...quoted, ...bare])].filter((p) => p.length >= 5 && /[a-z]/i.test(p));
}

/**
 * Exactly one letter, digit, `-` or `_` inserted, deleted or changed (`.agent/skills` → `.agents/skills`);
 * a separator added or dropped (`/.agents/skills`, `skills/`) is the same name in another spelling.
 */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const name = (ch: string | undefined) => ch !== undefined && /[\w-]/.test(ch);
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1) && name(a[i]) && name(b[i]);
  return a.length > b.length
    ? a.slice(i + 1) === b.slice(i) && name(a[i])
    : a.slice(i) === b.slice(i + 1) && name(b[i]);
}

/** Keys of an edit that hold the text it replaced. */
const REPLACED = new Set(["old_string", "oldString", "originalFile", "original"]);

/** An event's text without what an edit replaced and without a diff's removed lines. */
export function currentText(body: string): string {
  const out: string[] = [];
  const walk = (v: unknown, key: string): void => {
    if (REPLACED.has(key)) return;
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, "");
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  try {
    walk(JSON.parse(body) as unknown, "");
  } catch {
    out.push(body);
  }
  return out
    .join("\n")
    .split("\n")
    .filter((l) => !/^\s*-(?!-)/.test(l))
    .join("\n");
}

interface Rename {
  item: MemoryItem;
  from: string;
  to: string;
  episodes: number;
  /** An identifier (replaced as a whole word), not a path. */
  identifier: boolean;
}

/** Identifiers a memory names (backticked or shaped like code) that a later edit may rename. */
export function citedNames(content: string): string[] {
  return citedIdentifiers(content)
    .map((i) => i.name)
    .filter((n) => n.length >= 4);
}

/** An edit's replaced and new text (Claude Code's Edit/MultiEdit input; other shapes give nothing). */
function editTexts(body: string): Array<{ before: string; after: string }> {
  try {
    const c = JSON.parse(body) as { input?: Record<string, unknown> };
    const inp = c.input ?? {};
    const pairs = Array.isArray(inp.edits) ? (inp.edits as Array<Record<string, unknown>>) : [inp];
    return pairs
      .map((e) => ({ before: e.old_string, after: e.new_string }))
      .filter(
        (e): e is { before: string; after: string } => typeof e.before === "string" && typeof e.after === "string",
      );
  } catch {
    return [];
  }
}

/** `name` declared on `line`: after a declaring keyword (a Go receiver allowed), or assigned at the line's start. */
function declares(line: string, name: string): boolean {
  const n = name.replace(/[$]/g, "\\$");
  return new RegExp(
    `\\b(?:func|function|def|class|interface|type|struct|enum|const|let|var|fn|trait|module)\\s+(?:\\([^)]*\\)\\s*)?${n}(?![\\w$])|^\\s*${n}\\s*(?::=|=(?!=)|:)`,
  ).test(line);
}

/** An event that names the old identifier beside a new name an edit gave it ("Renamed `a` to `b`") tells the rename. */
function tellsRename(db: Database, projectId: string, itemId: string, from: string, body: string): boolean {
  const rows = db
    .query(`SELECT signature FROM observations WHERE project_id = ? AND kind = 'name_change' AND signature LIKE ?`)
    .all(projectId, `${itemId}\u0000${from}\u0000%`) as Array<{ signature: string }>;
  return rows.some((r) => wordRe(r.signature.split("\u0000")[2]!).test(body));
}

/**
 * The new name an edit gave identifier `name`: the same line with another identifier where it was
 * (`func summarise(` → `func summarize(`), or a word one edit away that the new text has instead.
 */
export function renamedByEdit(name: string, before: string, after: string): string | null {
  const re = wordRe(name);
  if (!re.test(before) || re.test(after)) return null;
  for (const line of before.split("\n")) {
    // Only where it is declared: a call site changed to call something else is no rename.
    if (!re.test(line) || !declares(line, name)) continue;
    const to = renamedOnLine(line.replace(/\s+/g, " ").trim(), name, after);
    if (to) return to;
  }
  const words = new Set(after.match(/[A-Za-z_$][\w$]*/g) ?? []);
  for (const w of words)
    if (oneEditApart(w, name) && !new Set(before.match(/[A-Za-z_$][\w$]*/g) ?? []).has(w)) return w;
  return null;
}

/**
 * Record what the given episodes (just extracted) show of each cited path: the path itself in use, or
 * a name one edit away. The memory's own episodes and anything before its last confirmation don't count.
 */
export function observeNames(db: Database, projectId: string, episodeIds: readonly string[]): void {
  if (episodeIds.length === 0) return;
  const pinned = pinnedIds(db);
  const watched = currentItems(db, projectId)
    .filter((i) => i.scope === "project" && !pinned.has(i.id) && i.extractor !== "manual")
    .map((item) => ({ item, paths: citedPaths(item.content), names: citedNames(item.content) }))
    .filter((w) => w.paths.length > 0 || w.names.length > 0);
  if (watched.length === 0) return;
  const rows = db
    .query(
      `SELECT e.timestamp AS ts, e.content_json AS body, e.event_type AS type, ee.episode_id AS episode FROM events e
       JOIN episode_events ee ON ee.event_id = e.id
       WHERE ee.episode_id IN (SELECT value FROM json_each(?)) ORDER BY e.timestamp, e.id`,
    )
    .all(JSON.stringify(episodeIds)) as Row[];
  // What each event holds is read once, whatever the number of memories watched.
  const pathsOf = (r: Row) => (r.paths ??= [...new Set(r.body.match(ANY_PATH) ?? [])]);
  const currentOf = (r: Row) => (r.current ??= currentText(r.body));
  const editsOf = (r: Row) => (r.edits ??= r.type === "code_change" ? editTexts(r.body) : []);
  const renamedBefore = db.query(
    `SELECT signature FROM observations WHERE project_id = ? AND kind = 'name_change' AND candidate_json = '${EDIT}' AND signature LIKE ?`,
  );
  for (const { item, paths, names } of watched) {
    const own = new Set([item.source_episode_id, ...item.evidence_episode_ids]);
    // Identifiers an edit renamed already: from then on, a use of the old name says it lives on.
    const renamed = new Set(
      (renamedBefore.all(projectId, `${item.id}\u0000%`) as Array<{ signature: string }>).map(
        (r) => r.signature.split("\u0000")[1]!,
      ),
    );
    for (const r of rows) {
      if (r.ts <= item.updated_at || own.has(r.episode)) continue;
      for (const from of names) {
        if (!r.body.includes(from)) continue;
        // An identifier renamed by an edit of a later session: one such edit is the rename itself.
        const to = editsOf(r)
          .map((e) => renamedByEdit(from, e.before, e.after))
          .find((x) => x !== null);
        if (to) {
          recordObservation(db, projectId, "name_change", `${item.id}\u0000${from}\u0000${to}`, r.episode, r.ts, EDIT);
          renamed.add(from);
        } else if (
          renamed.has(from) &&
          wordRe(from).test(currentOf(r)) &&
          !tellsRename(db, projectId, item.id, from, r.body)
        )
          recordObservation(db, projectId, "name_use", `${item.id}\u0000${from}`, r.episode, r.ts, "{}");
      }
      for (const from of paths) {
        const variants = pathsOf(r).filter((p) => oneEditApart(p, from));
        for (const to of variants)
          recordObservation(db, projectId, "name_change", `${item.id}\u0000${from}\u0000${to}`, r.episode, r.ts, "{}");
        // Both names in one event is the rename itself; the old name in what an edit replaced or in a
        // diff's removed lines is the rename too. Anywhere else it is still in use.
        if (variants.length === 0 && r.body.includes(from) && currentOf(r).includes(from))
          recordObservation(db, projectId, "name_use", `${item.id}\u0000${from}`, r.episode, r.ts, "{}");
      }
    }
  }
}

interface Row {
  ts: string;
  body: string;
  type: string;
  episode: string;
  paths?: string[];
  current?: string;
  edits?: Array<{ before: string; after: string }>;
}

/** The renames the observations show, one per memory (its most used new name). */
export function findRenames(db: Database, projectId: string): Rename[] {
  const rows = db
    .query(
      `SELECT signature, COUNT(DISTINCT episode_id) AS n, MAX(candidate_json = '${EDIT}') AS edit,
         MIN(CASE WHEN candidate_json = '${EDIT}' THEN observed_at END) AS renamed_at
       FROM observations WHERE project_id = ? AND kind = 'name_change' GROUP BY signature`,
    )
    .all(projectId) as Array<{ signature: string; n: number; edit: number; renamed_at: string | null }>;
  if (rows.length === 0) return [];
  const items = new Map(currentItems(db, projectId).map((i) => [i.id, i]));
  const pinned = pinnedIds(db);
  const best = new Map<string, Rename>();
  for (const { signature, n, edit, renamed_at } of rows) {
    const [id, from, to] = signature.split("\u0000") as [string, string, string];
    const item = items.get(id);
    const identifier = edit === 1;
    if (!item || pinned.has(id) || item.extractor === "manual" || (!identifier && n < RENAME_EPISODES)) continue;
    // Still in use: a path anywhere later; an identifier after the edit that renamed it.
    const uses = observationsOf(db, projectId, "name_use", `${id}\u0000${from}`);
    if (uses.some((u) => !identifier || (renamed_at !== null && u.observed_at > renamed_at))) continue;
    const prev = best.get(id);
    if (!prev || n > prev.episodes) best.set(id, { item, from, to, episodes: n, identifier });
  }
  return [...best.values()];
}

/** A memory that says what the person specified, asked or chose: its words are theirs, not to be renamed. */
const CREDITS_USER =
  /\b(?:the )?user(?:'s)?\b[^.;]{0,40}?\b(?:specified|asked|requested|chose|said|stated|wants|wanted|decided|insisted)\b/i;

/**
 * After `from` → `to` was written in, the text still names a part of the old name that the new one
 * changed (`.agent` of `.agent/skills` → `.agents/skills`) as a word of its own.
 */
export function stillNamesOld(content: string, from: string, to: string): boolean {
  const olds = from.split("/");
  const news = new Set(to.split("/"));
  return olds
    .filter((seg) => seg.length >= 2 && !news.has(seg))
    .some((seg) => new RegExp(`(?<![\\w.-])${seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`).test(content));
}

/**
 * Observe the episodes just extracted, then give each renamed memory a version with today's name;
 * returns the ids of the new versions.
 */
export function followRenames(db: Database, projectId: string, episodeIds: readonly string[], nowMs: number): string[] {
  try {
    const at = nowIso(nowMs);
    const made: string[] = [];
    db.transaction(() => {
      observeNames(db, projectId, episodeIds);
      for (const { item, from, to, identifier } of findRenames(db, projectId)) {
        const content = identifier ? item.content.replace(wordRe(from, "g"), to) : item.content.split(from).join(to);
        if (stillNamesOld(content, from, to) || CREDITS_USER.test(item.content)) {
          // It names the old spelling on purpose ("singular `.agent`, as the user specified"): a
          // rewrite would contradict itself, and what it says no longer holds. Or it credits the person
          // ("… in the .agent/skills/ directory, as the user specified"): the rewrite would put the new
          // name in their mouth (a reviewer marked exactly that wrong). History, not served.
          supersedeMemoryItem(db, item.id, null, null, at);
          continue;
        }
        const next = replaceWithVersion(db, item, newId("mem", nowMs), at, {
          content,
          file_paths: item.file_paths.map((p) => p.split(from).join(to)),
          tags: [...new Set([...item.tags, "renamed-later"])],
          decision: "UPDATE_EXISTING",
        });
        made.push(next.id);
      }
    }).immediate();
    return made;
  } catch (err) {
    log.warn(`could not follow renamed paths for memories of ${projectId}: ${(err as Error).message}`);
    return [];
  }
}
