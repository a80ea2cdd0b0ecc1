/**
 * One memory checked against today's code (issue 15): its anchor's files, identifiers, scripts and
 * fix commit looked up in the work tree and the git history, giving one status —
 * - verified: what it cites is still there;
 * - moved: a file was renamed or an identifier renamed or found in another file (the moves are
 *   returned so the memory is served with today's names);
 * - stale: a cited file, identifier or script is gone, or its fix commit was reverted or dropped;
 * - unverifiable: nothing to check, not a git repository, unreadable files (binary, > 10 MB), or the
 *   anchor was written on a line of history HEAD does not contain (another branch) — never stale then.
 * Pure reads; never throws for a bad repository (the caller catches anything else).
 */
import type { Anchor } from "./anchor.ts";
import { hasCitations, packageScripts } from "./anchor.ts";
import { readSource, stampOf, wordRe, type FileStamp } from "./source-file.ts";
import type { RepoState } from "./repo-state.ts";

export type VerificationStatus = "verified" | "moved" | "stale" | "unverifiable";

export interface Move {
  kind: "file" | "identifier";
  from: string;
  to: string;
  /** For an identifier: the file it is in now. */
  path?: string;
}

export interface CheckResult {
  status: VerificationStatus;
  /** One short sentence: why this status. */
  reason: string;
  moves: Move[];
  /** Every file whose mtime and size the result depends on (null: it was missing). */
  deps: Map<string, FileStamp | null>;
}

const short = (sha: string) => sha.slice(0, 7);

/** The new name of `name` on a line that otherwise matches the line it was on when anchored. */
export function renamedOnLine(oldLine: string, name: string, text: string): string | null {
  const re = wordRe(name);
  const m = re.exec(oldLine);
  if (!m) return null;
  const before = oldLine.slice(0, m.index);
  const after = oldLine.slice(m.index + name.length);
  if (before.trim().length + after.trim().length < 6) return null; // too little context to be sure
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+/g, " ").trim().slice(0, 240);
    if (line.length <= before.length + after.length || !line.startsWith(before) || !line.endsWith(after)) continue;
    const mid = line.slice(before.length, line.length - after.length);
    if (/^[A-Za-z_$][\w$]*$/.test(mid) && mid !== name) return mid;
  }
  return null;
}

export function checkAnchor(anchor: Anchor, repo: RepoState): CheckResult {
  const deps = new Map<string, FileStamp | null>();
  const result = (status: VerificationStatus, reason: string, moves: Move[] = []): CheckResult => ({
    status,
    reason,
    moves,
    deps,
  });
  if (!repo.dirs) return result("unverifiable", "the project is not a git repository here");
  if (!repo.isGit) return result("unverifiable", "the repository's HEAD could not be read");
  if (!hasCitations(anchor)) {
    const away = notLanded(anchor, repo, new Set());
    return away ? result("stale", away) : result("unverifiable", "cites nothing in the repository");
  }

  const problems: string[] = [];
  const unknown: string[] = [];
  const moves: Move[] = [];
  let checked = 0;
  const movedFiles = new Map<string, string>();

  // Names this check itself found where they were: no search of the repository needed for them.
  const confirmed = new Set<string>();
  for (const f of anchor.files) {
    const st = stampOf(repo.root, f);
    deps.set(f, st);
    if (st) {
      confirmed.add(f);
      checked++;
      continue;
    }
    const to = repo.changesSince(anchor.head).renames.get(f);
    const toStamp = to ? stampOf(repo.root, to) : null;
    if (to && toStamp) {
      deps.set(to, toStamp);
      movedFiles.set(f, to);
      moves.push({ kind: "file", from: f, to });
      checked++;
    } else problems.push(`${f} no longer exists`);
  }

  const orphans = new Map<string, typeof anchor.symbols>();
  for (const s of anchor.symbols) {
    const path = movedFiles.get(s.path) ?? s.path;
    const r = readSource(repo.root, path);
    deps.set(path, r.stamp);
    if (!r.ok && (r.why === "binary" || r.why === "too_large")) {
      unknown.push(`${path} is ${r.why === "binary" ? "binary" : "larger than 10 MB"}`);
      continue;
    }
    if (!r.ok) {
      // Its file is gone: decided below, with the other identifiers of that file.
      orphans.set(s.path, [...(orphans.get(s.path) ?? []), s]);
      continue;
    }
    if (wordRe(s.name).test(r.text)) {
      confirmed.add(s.name);
      checked++;
      continue;
    }
    const renamed = renamedOnLine(s.line, s.name, r.text);
    if (renamed) {
      moves.push({ kind: "identifier", from: s.name, to: renamed, path });
      checked++;
      continue;
    }
    const elsewhere = repo.findIdentifier(s.name, anchor.head, [path]);
    if (elsewhere) {
      deps.set(elsewhere, stampOf(repo.root, elsewhere));
      moves.push({ kind: "identifier", from: s.name, to: s.name, path: elsewhere });
      checked++;
    } else problems.push(`\`${s.name}\` is no longer in ${path}`);
  }

  // A deleted file whose every identifier lives on in one other file was moved by hand (no git rename).
  for (const [gone, syms] of orphans) {
    const found = syms.map((s) => repo.findIdentifier(s.name, anchor.head, [gone]));
    const target = found[0];
    if (!target || !found.every((f) => f === target)) continue;
    const at = problems.indexOf(`${gone} no longer exists`);
    if (at >= 0) problems.splice(at, 1);
    deps.set(target, stampOf(repo.root, target));
    moves.push({ kind: "file", from: gone, to: target });
    checked += syms.length;
  }

  if (anchor.scripts.length > 0) {
    deps.set("package.json", stampOf(repo.root, "package.json"));
    const scripts = packageScripts(repo.root);
    for (const sc of anchor.scripts) {
      if (scripts && sc.name in scripts) checked++;
      else problems.push(`script \`${sc.name}\` is no longer in package.json`);
    }
  }

  if (anchor.commit) {
    if (!repo.commitExists(anchor.commit)) unknown.push(`commit ${short(anchor.commit)} is not in this clone`);
    else {
      const by = repo.revertOf(anchor.commit);
      if (by) problems.push(`fix commit ${short(anchor.commit)} was reverted by ${short(by)}`);
      else if (repo.ancestry(anchor.commit) === "no")
        problems.push(`commit ${short(anchor.commit)} is no longer reachable from HEAD`);
      else checked++;
    }
  }

  // What it names that this check did not find: on an unmerged branch only, or written and never landed.
  const away = notLanded(anchor, repo, confirmed);
  if (away) return result("stale", away);

  if (problems.length > 0) {
    // Written on a line of history HEAD does not contain (another branch, or before a reset): what is
    // missing here may well be there. Only on HEAD's own line is a missing citation a stale memory.
    const line = anchor.head ? repo.ancestry(anchor.head) : "unknown";
    if (line !== "yes") {
      const where =
        anchor.branch && anchor.branch !== repo.head?.branch
          ? `branch ${anchor.branch}`
          : `commit ${anchor.head ? short(anchor.head) : "unknown"}`;
      return result(
        "unverifiable",
        `unverifiable on this branch: written on ${where}, which HEAD does not contain (${problems[0]})`,
      );
    }
    return result("stale", problems.join("; "), moves);
  }
  if (checked === 0) return result("unverifiable", unknown[0] ?? "nothing it cites could be checked");
  if (moves.length > 0) return result("moved", moves.map(describeMove).join("; "), moves);
  return result("verified", "what it cites is still in the code");
}

/** The names a landing check looks up: all it names and what its session wrote. */
export function uncheckedNames(anchor: Pick<Anchor, "names" | "introduced">): string[] {
  return [...new Set([...(anchor.names ?? []), ...(anchor.introduced ?? []).map((i) => i.name)])];
}

/** The names the repository must be searched for (those the check does not find by reading the anchored files). */
export function namesToSearch(anchor: Pick<Anchor, "names" | "introduced" | "files" | "symbols">): string[] {
  const anchored = new Set([...anchor.files, ...anchor.symbols.map((s) => s.name)]);
  return uncheckedNames(anchor).filter((n) => !anchored.has(n));
}

/**
 * Why the work a memory describes has not landed at HEAD, or null (issue 26): a name it cites that
 * the work tree lacks and an unmerged branch has ("from branch X, not merged"), or an identifier its
 * own session wrote into a file that is here now without it, and that no branch has (the work was
 * abandoned, never committed, or replaced). Once the branch is merged the names are in the work tree
 * and the memory is checked as usual.
 */
export function notLanded(
  anchor: Pick<Anchor, "names" | "introduced">,
  repo: RepoState,
  confirmed: ReadonlySet<string>,
): string | null {
  const introduced = anchor.introduced ?? [];
  const names = uncheckedNames(anchor).filter((n) => !confirmed.has(n));
  if (names.length === 0) return null;
  const present = repo.presentNames(names);
  const missing = names.filter((n) => !present.has(n));
  if (missing.length === 0) return null;
  const held = repo.unmergedHolders(missing);
  const [first] = held;
  if (first) {
    const [, ref] = first;
    const only = [...held].filter(([, r]) => r === ref).map(([n]) => `\`${n}\``);
    return `from branch ${ref}, not merged: ${only.slice(0, 3).join(", ")} ${only.length === 1 ? "is" : "are"} only there`;
  }
  // Only where the file it went into is here: a checkout without the session's files at all tells nothing.
  const lost = introduced.find((i) => missing.includes(i.name) && stampOf(repo.root, i.path) !== null);
  if (lost)
    return `not landed or since removed: \`${lost.name}\`, written in its session into ${lost.path}, is on no branch here`;
  return null;
}

export function describeMove(m: Move): string {
  if (m.kind === "file") return `${m.from} is now ${m.to}`;
  return m.from === m.to
    ? `\`${m.from}\` is now in ${m.path}`
    : `\`${m.from}\` is now \`${m.to}\`${m.path ? ` in ${m.path}` : ""}`;
}

/** `text` with every moved file path and renamed identifier written as it is today. */
export function applyMoves(text: string, moves: readonly Move[]): string {
  let out = text;
  for (const m of moves) {
    if (m.from === m.to) continue;
    out = out.replace(
      m.kind === "file" ? new RegExp(m.from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : wordRe(m.from, "g"),
      m.to,
    );
  }
  return out;
}
