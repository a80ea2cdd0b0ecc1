/**
 * What a replayed session needed from the memory standing before it: the items it had to learn
 * again. An item is needed by session k when
 * - k's own extraction met it: one of k's episodes confirmed or updated it (its evidence, or the
 *   episode that superseded it, is k's), or k stored something on the same key (the same subject);
 * - or k's failures and fixes touched what it is anchored to: a file it cites, an identifier it
 *   names, a package script it runs (the anchor recorded in memory_anchors, else its citations).
 */
import type { Database } from "bun:sqlite";
import { Anchor } from "../../anchors/anchor.ts";
import { citations } from "../../anchors/cite.ts";
import { anchorJsonOf } from "../../../sql/memory-anchors.ts";
import type { VersionedItem } from "./memory-at.ts";
import type { ReplaySession } from "./sessions.ts";

export type NeedReason = "met_by_extraction" | "anchor_touched";

interface AnchorWords {
  files: Set<string>;
  identifiers: Set<string>;
  scripts: Set<string>;
}

/** What each item is anchored to: its stored anchor when there is one, else what its words cite. */
export function anchorsOf(db: Database, versions: readonly VersionedItem[]): Map<string, AnchorWords> {
  const stored = anchorJsonOf(
    db,
    versions.map((v) => v.item.id),
  );
  const out = new Map<string, AnchorWords>();
  for (const { item } of versions) {
    const cited = citations(item.content, item.file_paths);
    const words: AnchorWords = {
      files: new Set(cited.paths),
      identifiers: new Set(cited.identifiers.filter((i) => i.backticked).map((i) => i.name)),
      scripts: new Set(cited.scripts),
    };
    const json = stored.get(item.id);
    if (json) {
      const parsed = Anchor.safeParse(JSON.parse(json));
      if (parsed.success) {
        for (const f of parsed.data.files) words.files.add(f);
        for (const s of parsed.data.symbols) words.identifiers.add(s.name);
        for (const s of parsed.data.scripts) words.scripts.add(s.name);
      }
    }
    out.set(item.id, words);
  }
  return out;
}

/** Lineage and evidence of every version: which episodes met which items, and which keys they stored on. */
export class NeedIndex {
  private readonly byId = new Map<string, VersionedItem>();
  /** episode id → `type key` anchors of the items it stored, confirmed or updated. */
  private readonly keysByEpisode = new Map<string, Set<string>>();

  constructor(
    versions: readonly VersionedItem[],
    private readonly anchors: ReadonlyMap<string, AnchorWords>,
  ) {
    for (const v of versions) {
      this.byId.set(v.item.id, v);
      const key = subjectOf(v.item);
      for (const ep of [...v.item.evidence_episode_ids, v.item.source_episode_id, v.item.superseded_by_episode]) {
        if (!ep) continue;
        const set = this.keysByEpisode.get(ep) ?? new Set<string>();
        set.add(key);
        this.keysByEpisode.set(ep, set);
      }
    }
  }

  /** The items among `standing` that session `s` needed, with why. */
  needed(s: ReplaySession, standing: ReadonlySet<string>): Map<string, NeedReason> {
    const own = new Set(s.episodeIds);
    const keys = new Set<string>();
    for (const ep of s.episodeIds) for (const k of this.keysByEpisode.get(ep) ?? []) keys.add(k);
    const out = new Map<string, NeedReason>();
    for (const id of standing) {
      const v = this.byId.get(id);
      if (!v) continue;
      if (this.metBy(v, own) || keys.has(subjectOf(v.item))) {
        out.set(id, "met_by_extraction");
        continue;
      }
      const a = this.anchors.get(id);
      if (a && touches(a, s.touched)) out.set(id, "anchor_touched");
    }
    return out;
  }

  /** Did one of `own` confirm, update or supersede this item or a later version of it? */
  private metBy(v: VersionedItem, own: ReadonlySet<string>): boolean {
    let cur: VersionedItem | undefined = v;
    for (let depth = 0; cur && depth < 50; depth++) {
      const it: VersionedItem["item"] = cur.item;
      if (it.evidence_episode_ids.some((e) => own.has(e))) return true;
      if (it.superseded_by_episode && own.has(it.superseded_by_episode)) return true;
      cur = it.superseded_by ? this.byId.get(it.superseded_by) : undefined;
    }
    return false;
  }
}

function subjectOf(item: { type: string; key: string }): string {
  return `${item.type} ${item.key}`;
}

function touches(a: AnchorWords, t: ReplaySession["touched"]): boolean {
  for (const f of a.files) if (t.files.has(f)) return true;
  for (const i of a.identifiers) if (t.identifiers.has(i)) return true;
  for (const s of a.scripts) if (t.scripts.has(s)) return true;
  return false;
}
