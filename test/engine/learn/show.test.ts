import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { processEvents } from "../../../src/engine/learn/process-events.ts";
import { currentItems, getMemoryItem } from "../../../src/sql/memory-items.ts";
import { listUserStyle } from "../../../src/sql/user-style.ts";
import type { EventDTO } from "../../../src/shared/event.ts";
import { isolatedEnv, runSqrl, SQRL_BIN } from "../../helpers/sqrl.ts";
import { request, sandbox, USER, type Sandbox } from "./helpers.ts";

/** `sqrl show` through the compiled binary (SQRL_BIN, else dist/sqrl), with the daemon down. */
const HAVE_BIN = existsSync(SQRL_BIN);

function session(root: string, id: string, startIso: string, text: string): EventDTO[] {
  const base = Date.parse(startIso);
  return [text, "Noted.", "thanks"].map((t, i) => ({
    id: `evt_${id}_${i}`,
    project_id: root,
    user_id: USER,
    source_tool: "claude_code",
    session_id: id,
    timestamp: new Date(base + i * 10_000).toISOString(),
    event_type: i === 1 ? "assistant_response" : "user_message",
    content_json: JSON.stringify({ text: t }),
    file_paths: [],
    hash: `h_${id}_${i}`,
    processed_at: null,
  }));
}

let sb: Sandbox;
const chain: string[] = [];

beforeAll(async () => {
  sb = sandbox();
  const steps: Array<[string, string, string]> = [
    ["s1", "2026-03-01T10:00:00Z", "We use npm in this repo."],
    ["s2", "2026-03-02T10:00:00Z", "Use pnpm instead of npm."],
    ["s3", "2026-03-03T10:00:00Z", "Use bun instead of pnpm."],
  ];
  for (const [s, ts, text] of steps) {
    await processEvents(request(sb.root, session(sb.root, s, ts, text)), sb.deps());
    chain.push(currentItems(sb.db, sb.root).find((i) => i.key === "package_manager")!.id);
  }
  await processEvents(
    request(sb.root, session(sb.root, "s0", "2026-02-20T10:00:00Z", "Never commit directly to main.")),
    sb.deps(),
  );
});
afterAll(() => sb.cleanup());

function show(args: string[]) {
  return runSqrl(["show", ...args, "--project", sb.root], {
    env: isolatedEnv(sb.home, { SQRL_HOME: sb.home }),
    cwd: sb.root,
  });
}

describe.skipIf(!HAVE_BIN)("sqrl show (compiled binary)", () => {
  test("the current item with the versions it replaced and its evidence", () => {
    const r = show([chain[2]!]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${chain[2]}  [user_style] package_manager  (project scope)`);
    expect(r.stdout).toContain("Use bun instead of pnpm.");
    expect(r.stdout).toContain("Replaced (2):");
    expect(r.stdout.indexOf(chain[1]!)).toBeLessThan(r.stdout.indexOf(chain[0]!));
    expect(r.stdout).toContain("Replaced by (0):");
    const ep = getMemoryItem(sb.db, chain[2]!)!.source_episode_id!;
    expect(r.stdout).toContain(`episode ${ep}`);
    expect(r.stdout).toMatch(/user_message\s+evt_s3_0\s+Use bun instead of pnpm\./);
  });

  test("--json of the oldest version lists what replaced it, in order", () => {
    const r = show([chain[0]!, "--json"]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      item: { deleted: boolean };
      successors: Array<{ id: string; decision: string }>;
      predecessors: unknown[];
    };
    expect(j.item.deleted).toBe(true);
    expect(j.predecessors).toEqual([]);
    expect(j.successors.map((s) => [s.id, s.decision])).toEqual([
      [chain[1]!, "DELETE_AND_ADD"],
      [chain[2]!, "DELETE_AND_ADD"],
    ]);
  });

  test("a global style item is found in user.db", () => {
    const u = sb.userDb();
    const item = listUserStyle(u, USER).find((i) => i.key === "pref:commit_directly_main")!;
    u.close();
    const r = show([item.id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("(user scope)");
    expect(r.stdout).toContain("Never commit directly to main.");
    expect(r.stdout).toContain(sb.root);
  });

  test("an unknown id fails with exit 1 and says where it looked", () => {
    const r = show(["mem_nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No memory item mem_nope");
  });
});
