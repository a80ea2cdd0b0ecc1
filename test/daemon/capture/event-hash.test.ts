/**
 * `events.hash` (and the id derived from it) is what existing data.db files dedup on: the same event
 * must hash to the same value in every version, or a re-read of an old transcript stores it twice.
 * These hashes were computed by the code as it was before the ingest speed-ups of issue 30; a change
 * of the dedup struct, its serialisation, the timestamp bucket or the sanitizer breaks them.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { TRANSCRIPT_SOURCES } from "../../../src/daemon/file-rows.ts";
import { timestampBucket } from "../../../src/daemon/dedup.ts";
import { repoRelativePaths, toEventRow } from "../../../src/daemon/ingest.ts";
import { isWithin } from "../../../src/shared/projects.ts";
import { newTailFile, readTail, type TailSource } from "../../../src/daemon/tail.ts";
import type { NormalizedEvent } from "../../../src/shared/event.ts";
import { CAPTURE_FIXTURES, SHARED_TRANSCRIPTS } from "./helpers.ts";

const ROOT = "/home/dev/proj";

function event(over: Partial<NormalizedEvent>): NormalizedEvent {
  return {
    source_tool: "claude_code",
    event_type: "tool_call",
    session_id: "s-1",
    timestamp: "2026-01-19T02:30:47.211Z",
    cwd: ROOT,
    file_paths: [],
    content: { tool: "Read", tool_use_id: "toolu_1", input: { file_path: `${ROOT}/src/a.ts` }, record_id: "toolu_1" },
    ...over,
  } as NormalizedEvent;
}

/** Hand-made events: timestamps at and around bucket edges, odd forms, paths, a growing response, a secret. */
const CASES: Array<[name: string, e: NormalizedEvent, hash: string]> = [
  ["tool call", event({}), "77f1fd4f5eb50f68ca6688f02d376cefbc9f98d222009a19405ce37dd6facda2"],
  [
    "bucket start",
    event({ timestamp: "2026-01-19T02:35:00.000Z" }),
    "577a4886db7641a99ab9382acbebdac0283583d5a8d94e00c29a95808cb949e2",
  ],
  [
    "bucket end",
    event({ timestamp: "2026-01-19T02:39:59.999Z" }),
    "577a4886db7641a99ab9382acbebdac0283583d5a8d94e00c29a95808cb949e2",
  ],
  [
    "no milliseconds",
    event({ timestamp: "2026-01-19T02:30:47Z" }),
    "77f1fd4f5eb50f68ca6688f02d376cefbc9f98d222009a19405ce37dd6facda2",
  ],
  [
    "one fraction digit",
    event({ timestamp: "2026-01-19T02:30:47.2Z" }),
    "77f1fd4f5eb50f68ca6688f02d376cefbc9f98d222009a19405ce37dd6facda2",
  ],
  [
    "offset",
    event({ timestamp: "2026-01-19T04:33:47.211+02:00" }),
    "77f1fd4f5eb50f68ca6688f02d376cefbc9f98d222009a19405ce37dd6facda2",
  ],
  [
    "day change by offset",
    event({ timestamp: "2026-01-20T01:02:03.000+03:00" }),
    "ac739c0046d632fcc9356c6ba683a5f583da0477a25fe0dd9ba89dc1ef200bce",
  ],
  ["not a date", event({ timestamp: "yesterday" }), "5469a390feda7fd4da57b5eb7b3272ac6f598856b1845647c4f1e0f3dac9772b"],
  [
    "month 13",
    event({ timestamp: "2026-13-19T02:30:47.211Z" }),
    "f58440d49432eb8d22dfcb5f651712d82e1a56fc151bc15072a06511048d9cff",
  ],
  [
    "second 60",
    event({ timestamp: "2026-01-19T02:30:60.000Z" }),
    "07bb46bf9808c2be45cf04bd507e97276c5fb98e0fc9a8468ee067557371316c",
  ],
  [
    "leap day",
    event({ timestamp: "2028-02-29T23:59:59.999Z" }),
    "1cce433e51e18e095147bc69d6d1be07db883d029f9d3f2891f852c57ee68b0f",
  ],
  ["empty timestamp", event({ timestamp: "" }), "28147246a49ba5a7129acf83275395c335bdf95606d8af7a3e449cefa684bf53"],
  ["no session", event({ session_id: null }), "fc3d3f31ddacfb058655968efaa9c9599406867d13af01a4254fffc28d11df6a"],
  [
    "paths unsorted, outside, relative",
    event({ file_paths: [`${ROOT}/z.ts`, "rel/b.ts", "/etc/hosts", `${ROOT}/a.ts`] }),
    "4f9e793c1fd87c883c6f5483eb595ece24ccca1919d1b38af754469bd6ca7412",
  ],
  [
    "growing response",
    event({ event_type: "assistant_response", content: { text: "  Done.\n", record_id: "msg_1" } }),
    "99d0c04ecc6bd4477e635caab48214cb88c44bf08eecf9febd1f6b76624fa077",
  ],
  [
    "command with output",
    event({
      event_type: "command_run",
      content: { tool: "Bash", command: "ls -la", output: "a\nb\n", exit_code: 0, is_error: false, record_id: "u:1" },
    }),
    "203638cc197661674b72f2593134d1c663fc9ac40d9e6612f37e65c9affd64c7",
  ],
  [
    "secret redacted before hashing",
    event({
      event_type: "user_message",
      source_tool: "codex",
      content: { text: "use ghp_0123456789abcdefghijABCDEFGHIJ012345 please", record_id: null } as never,
    }),
    "f7dfe9c7d6193f33fa1e2060dcec8ff2b0a2ece0732f2675fb15c99544c1d7ff",
  ],
  [
    "unicode and nesting",
    event({ content: { tool: "Edit", input: { old_string: "é — ✓", new_string: 'ü\t"q"', n: [1, { x: null }] } } }),
    "8a521c2bba4da4c050f47b72236a622bea5424e2122e8b4f8ea74f1c9dbe04f3",
  ],
];

// content keys in an order the signature's own sort must put right (case, `_`, non-ASCII, integer-like keys)
CASES.push([
  "content keys of every kind",
  event({
    content: {
      tool: "Read",
      Zeta: "z",
      alpha: 1,
      _x: [1],
      é: "e",
      a: "a",
      ab: { b: 1 },
      A: null,
      "10": "ten",
      "9": "nine",
      record_id: "r",
    } as never,
  }),
  "fef20a767c99c54593787c72fceee14ff2b0350db7cdcdbc8b5c950c0fbbfbc5",
]);

describe("events.hash stays what existing databases hold", () => {
  for (const [name, e, hash] of CASES)
    test(name, () => {
      const row = toEventRow(e, ROOT, "user");
      expect(row.hash).toBe(hash);
      expect(row.id).toBe(`evt_${hash.slice(0, 32)}`);
    });
});

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? files(p) : /\.jsonl?$/.test(p) ? [p] : [];
    });
}

/** sha256 over every row's hash and stored content of a file's events (each routed to its own cwd). */
function rowsDigest(path: string, source: TailSource, document: boolean): string {
  const src = TRANSCRIPT_SOURCES[source];
  const deps = { projects: () => [] };
  const file = newTailFile(path, source, document, src.createNormalizer(path, deps));
  const events = readTail(file, { final: true, renew: () => src.createNormalizer(path, deps) }).events;
  const h = createHash("sha256");
  for (const e of events) {
    const row = toEventRow(e, e.cwd ?? ROOT, "user");
    h.update(`${row.hash}\n${row.content_json}\n${JSON.stringify(row.file_paths)}\n`);
  }
  return `${events.length}:${h.digest("hex").slice(0, 24)}`;
}

describe("rows of the repository's capture fixtures are unchanged (hash and stored content)", () => {
  const fixtures: Array<[rel: string, source: TailSource, document: boolean, digest: string]> = [
    ["claude/-REPO/11111111-2222-3333-4444-555555555555.jsonl", "claude", false, "14:f99961ec16b49dad3861e3bc"],
    [
      "claude/-REPO/11111111-2222-3333-4444-555555555555/subagents/agent-a1b2c3d.jsonl",
      "claude",
      false,
      "2:18f7e20f37d1a7969a24ec57",
    ],
    [
      "codex/rollout-2026-03-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl",
      "codex",
      false,
      "10:e1b0565351ee3dbf9c649b87",
    ],
    ["gemini/session-2025-10-01T12-00-9f8e7d6c.json", "gemini", true, "6:62ee8acfaa99c95bc47c2961"],
    ["qwen/session.jsonl", "qwen", false, "12:a4cc097fc041b14f6ce8f449"],
  ];
  for (const [rel, source, document, digest] of fixtures)
    test(rel, () => expect(rowsDigest(join(CAPTURE_FIXTURES, rel), source, document)).toBe(digest));
});

describe("rows of the real Claude Code transcripts are unchanged (hash and stored content)", () => {
  const dir = join(SHARED_TRANSCRIPTS, "claude-code");
  if (!existsSync(dir)) {
    test.skip("needs ../shared/fixtures/transcripts beside the repo", () => {});
    return;
  }
  // Digests of the files there when these were pinned (files added later are not checked).
  const pinned: Record<string, string> = {
    "entireio-cli/8e/0a64736bc7/0/full.jsonl": "79:e08a04042fb9de4600e2ca5e",
    "entireio-cli/a6/e4c2a0fbd1/0/full.jsonl": "34:285da0d8e62c9a47cd197369",
    "entireio-cli/b1/5d3b4e29e9/0/full.jsonl": "46:476e841d6570a83adde296c9",
    "jnarowski-agentcmd/06381696-0074-49f8-863e-6ad4fac507f9.jsonl": "10:71f451afa47d822085d49b9b",
    "jnarowski-agentcmd/full-session-five.jsonl": "30:cabdeea81f820b4a0a5e2d31",
    "jnarowski-agentcmd/full-session-two.jsonl": "33:e12bd8caba8ba5f61022c34d",
    "kvsankar-agent-history/real_sessions/claude/session-01.jsonl": "2:3f2ceac2f6e3330a2c18a295",
    "marot-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl": "52:179ffc6cacfa4e562f94d243",
    "marot-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl":
      "2:86f898b51e446be836ab5e6b",
    "marot-spotter/short.jsonl": "7:0427651ea1aa7dafcb50d1d4",
    "marot-spotter/tool_heavy.jsonl": "18:eed82459b52c4dd3e68d8c32",
    "packmindhub-context-evaluator/01/fdffbe1223/0/full.jsonl": "40:3ebd956b15d4c415bb5a45a1",
    "packmindhub-context-evaluator/02/bb334b3f0c/1/full.jsonl": "26:23bf92aca1baa3049b0d45c5",
    "packmindhub-context-evaluator/17/252607bde7/1/full.jsonl": "37:09de5e0e9c767b8efa833d2a",
    "packmindhub-context-evaluator/17/252607bde7/2/full.jsonl": "65:34864bbc7604e2101aa65eba",
    "packmindhub-context-evaluator/18/8f64dd752f/0/full.jsonl": "63:42114436a17b4d5038b1f19b",
    "packmindhub-context-evaluator/1a/551a9675cf/0/full.jsonl": "41:72541caf3833f8db8c048bfa",
    "packmindhub-context-evaluator/1b/0a9a02ca76/0/full.jsonl": "51:4261f4172d171693e15b4888",
    "packmindhub-context-evaluator/1e/bff44644f8/0/full.jsonl": "24:489201c30510aedecb92773d",
    "packmindhub-context-evaluator/1e/bff44644f8/1/full.jsonl": "29:6dd03bfd59274842816c0531",
    "packmindhub-context-evaluator/20/b41b43efc7/0/full.jsonl": "66:c90e78669d5ed53d3fb2a64f",
    "packmindhub-context-evaluator/22/c6a4f4faf5/0/full.jsonl": "84:ad1f914c41ed836741f0c16f",
    "packmindhub-context-evaluator/2d/4b7a36f369/0/full.jsonl": "35:7dd6e665852e455defb6ce22",
    "packmindhub-context-evaluator/2d/f95bcf1603/0/full.jsonl": "22:8de5085033979d5b650b6815",
    "packmindhub-context-evaluator/35/7067d4d28e/1/full.jsonl": "92:dd4deb5187929ef96d850778",
    "packmindhub-context-evaluator/3d/da33aeff7e/0/full.jsonl": "32:69d01cc104e8d5a82916f775",
    "packmindhub-context-evaluator/3d/da33aeff7e/1/full.jsonl": "17:c45007b6e039153a5e1326e2",
    "packmindhub-context-evaluator/4a/ff29dfc8d7/1/full.jsonl": "71:44fa73c579426394fd548beb",
    "packmindhub-context-evaluator/4a/ff29dfc8d7/2/full.jsonl": "75:ccc181a9e0dd7cd27a3dc33a",
    "packmindhub-context-evaluator/4c/be888ae82f/0/full.jsonl": "103:492b942d7ecbfee3c0342488",
    "packmindhub-context-evaluator/59/a1a92063ab/0/full.jsonl": "41:0f70ab1d01821af457e34974",
    "packmindhub-context-evaluator/5d/74e4f052ad/0/full.jsonl": "61:db43c6738e5249e5064a9fea",
    "packmindhub-context-evaluator/5d/74e4f052ad/1/full.jsonl": "73:d7899d30deb5aaaa9304489b",
    "packmindhub-context-evaluator/5e/d6fd664d05/0/full.jsonl": "34:aa6334c36709509a2b26886b",
    "packmindhub-context-evaluator/6b/7fad164b2b/0/full.jsonl": "18:5f5442a2d036881bfaddb386",
    "packmindhub-context-evaluator/7e/b9199a878a/0/full.jsonl": "67:3fe4ec6526c54e062bdf9de5",
    "packmindhub-context-evaluator/83/494dd20dc4/0/full.jsonl": "45:f25e23a30f253992b1252ec6",
    "packmindhub-context-evaluator/8b/c8fff8c659/0/full.jsonl": "33:a5d6157ea1ea114872f01131",
    "packmindhub-context-evaluator/8b/c8fff8c659/1/full.jsonl": "26:63c5fef3f56fab6aeb565616",
    "packmindhub-context-evaluator/8b/c8fff8c659/2/full.jsonl": "12:4cb2c939c7e6cdb43ffeb3fd",
    "packmindhub-context-evaluator/8c/758360e7fb/0/full.jsonl": "67:7fe527fe329097fb9e491c2a",
    "packmindhub-context-evaluator/8d/35bc01203b/0/full.jsonl": "38:da1fe29aa71cee92b13b46e5",
    "packmindhub-context-evaluator/92/f5148183c0/0/full.jsonl": "62:f331e3fff1db44e1eaa02bf2",
    "packmindhub-context-evaluator/95/cc2ca9e65d/0/full.jsonl": "29:9ed3a67d30d1f9cc6de5e969",
    "packmindhub-context-evaluator/95/cc2ca9e65d/1/full.jsonl": "99:8a20b1e8aea78761abd6f7ab",
    "packmindhub-context-evaluator/a9/4aabe3a808/0/full.jsonl": "45:941e309748d7451305bfb7c2",
    "packmindhub-context-evaluator/ba/28f44c88f4/1/full.jsonl": "147:5c51b76c601417a613304793",
    "packmindhub-context-evaluator/be/0878c3d75d/0/full.jsonl": "55:ab0545befdfe675a582e2e50",
    "packmindhub-context-evaluator/c2/e34e196ddb/0/full.jsonl": "74:827ea7b33e93c2c7b140f8a9",
    "packmindhub-context-evaluator/c4/89fde99d33/1/full.jsonl": "36:e1d65b7a107ed300d42b31a4",
    "packmindhub-context-evaluator/c4/89fde99d33/3/full.jsonl": "45:52a42cd9f879ed84d6fb3b77",
    "packmindhub-context-evaluator/c8/946606a339/3/full.jsonl": "35:dd85c6f5be8381df9ebf05f8",
    "packmindhub-context-evaluator/d2/23828eb8ee/0/full.jsonl": "19:f5ea75f3de89d44765175d61",
    "packmindhub-context-evaluator/d2/23828eb8ee/1/full.jsonl": "25:bb67bf08f90ac66e3469149b",
    "packmindhub-context-evaluator/d2/23828eb8ee/2/full.jsonl": "26:77931531067e83873eb492b7",
    "packmindhub-context-evaluator/d7/791c619932/0/full.jsonl": "67:78e6245c833bedaf3a7a9c1b",
    "packmindhub-context-evaluator/db/6d4034b8cc/0/full.jsonl": "93:794018048b1815550888e233",
    "packmindhub-context-evaluator/ee/7e610ffc3f/1/full.jsonl": "20:ff54e3c27dc1f469b3dd8bde",
    "vibecodingtracker/test_conversation.jsonl": "75:d4f13fa17fa8b099dfc671de",
  };
  const all = files(dir);
  test("every pinned file still gives the same rows", () => {
    const got: Record<string, string> = {};
    for (const p of all) {
      const rel = p.slice(dir.length + 1);
      if (rel in pinned) got[rel] = rowsDigest(p, "claude", false);
    }
    for (const [rel, digest] of Object.entries(pinned)) if (rel in got) expect(got[rel]).toBe(digest);
    expect(Object.keys(pinned).length).toBeGreaterThan(0);
  });
});

describe("the hand-written fast paths give what the general code gives", () => {
  /** The bucket as Date computes it (what timestampBucket did for every event before its cache). */
  const reference = (iso: string) => {
    const ms = Date.parse(iso);
    return Number.isFinite(ms) ? new Date(Math.floor(ms / 300_000) * 300_000).toISOString() : iso;
  };

  test("timestampBucket over sequences that share, cross and break bucket edges", () => {
    const base = Date.parse("2026-01-19T02:28:00.000Z");
    const seq: string[] = [];
    // steps of 7 to 97 seconds across many buckets, hours and a day
    for (let i = 0, t = base; i < 3000; i++, t += 7_000 + (i % 13) * 7_000) seq.push(new Date(t).toISOString());
    // odd forms right after a valid timestamp of the same date, hour and minute (the cache's key):
    // an invalid seconds field, a letter, month 13, day 32, Feb 30, hour 24, an offset, no
    // milliseconds, four fraction digits, garbage; and valid ones across a bucket edge
    const pairs: Array<[valid: string, odd: string]> = [
      ["2026-01-19T02:31:59.000Z", "2026-01-19T02:31:60.000Z"],
      ["2026-01-19T02:31:59.000Z", "2026-01-19T02:31:6x.000Z"],
      ["2026-01-19T02:31:59.000Z", "2026-01-19T02:31:59.00xZ"],
      ["2026-01-19T02:31:59.000Z", "2026-01-19T02:3a:00.000Z"],
      ["2026-12-19T02:31:00.000Z", "2026-13-19T02:31:00.000Z"],
      ["2026-01-31T02:31:00.000Z", "2026-01-32T02:31:00.000Z"],
      ["2026-02-28T00:01:00.000Z", "2026-02-30T00:01:00.000Z"],
      ["2026-02-28T23:01:00.000Z", "2026-02-28T24:01:00.000Z"],
      ["2026-01-19T04:31:00.000Z", "2026-01-19T04:31:00.000+02:00"],
      ["2026-01-19T02:31:00.000Z", "2026-01-19T02:31:00Z"],
      ["2026-01-19T02:31:00.000Z", "2026-01-19T02:31:00.0000"],
      ["2026-01-19T02:31:00.000Z", "2026-01-19T02:31:00.000z"],
      ["2026-01-19T02:31:00.000Z", "not a time"],
      ["2026-01-19T02:31:00.000Z", ""],
      ["2026-01-19T02:34:59.999Z", "2026-01-19T02:35:00.000Z"],
      ["2026-01-19T02:35:00.000Z", "2026-01-19T02:34:59.999Z"],
      ["2028-02-29T23:59:59.999Z", "2028-02-29T23:55:00.000Z"],
    ];
    for (const [valid, odd] of pairs) seq.push(valid, odd, valid, odd, odd);
    for (const iso of seq) expect(timestampBucket(iso)).toBe(reference(iso));
  });

  test("repoRelativePaths: the slice of a normal path under the root equals path.relative", () => {
    const slow = (paths: string[], root: string, cwd: string | null) =>
      [
        ...new Set(
          paths.filter(Boolean).map((p) => {
            const abs = isAbsolute(p) ? p : resolve(cwd ?? root, p);
            return isWithin(abs, root) ? relative(root, abs) || "." : p;
          }),
        ),
      ].sort();
    const root = "/home/dev/proj";
    const paths = [
      `${root}/src/a.ts`,
      `${root}/src/a.ts`,
      `${root}/`,
      `${root}//x`,
      `${root}/./x`,
      `${root}/../x`,
      `${root}/x/..`,
      `${root}/x/.`,
      `${root}/x/`,
      `${root}/.hidden/..x/...`,
      `${root}/.env`,
      `${root}x/y`,
      root,
      "rel/b.ts",
      "./c.ts",
      "/elsewhere/d.ts",
      "",
    ];
    for (const r of [root, `${root}/`, "/home/dev/../dev/proj", "/"])
      expect([...repoRelativePaths(paths, r, root)].sort()).toEqual(slow(paths, r, root));
  });
});
