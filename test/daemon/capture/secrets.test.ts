/**
 * Secrets planted in transcripts never reach data.db: the file bytes (and its WAL) are grepped
 * after capture through the running watcher and through a one-shot ingest.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestFileOnce } from "../../../src/daemon/backfill.ts";
import { CaptureService } from "../../../src/daemon/capture-service.ts";
import { ProjectDbPool } from "../../../src/daemon/ingest.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import { listProjects } from "../../../src/shared/projects.ts";
import { makeCaptureHome, readEvents, waitFor, type CaptureHome } from "./helpers.ts";

// Fake credentials, assembled so the repository holds no contiguous token.
const SECRETS = {
  anthropic: "sk-" + "ant-api03-" + "PlantedKeyAAAABBBBCCCCDDDDEEEEFFFF0123456789",
  github: "ghp" + "_" + "PlantedGithubToken000000000000000000001",
  aws: "AKIA" + "PLANTEDKEY000001",
  bearer: "PlantedBearerValue" + "0123456789abcdef",
  password: "Planted-Passw0rd-" + "42xyz",
  stripe: "sk_" + "live_" + "PlantedStripe000000001",
  envValue: "planted-env-plain-" + "value-77",
  pem: "MIIEplantedPRIVATEkeyBODY" + "0123456789abcdefABCDEF",
  privateNote: "my planted salary is " + "123456",
  gitToken: "ghp" + "_" + "PlantedInCommitMessage00000000000000002",
  jsonKey: "planted-json-key-" + "value-55",
  // issue 30 item 6: a value under a name that says nothing, printed by `cat .env`
  cookieSigning: "planted-cookie-signing-" + "value-30",
};

function transcript(repo: string): string {
  const S = "99999999-0000-0000-0000-000000000001";
  const base = { sessionId: S, cwd: repo, isSidechain: false, version: "2.1.38" };
  const recs = [
    {
      ...base,
      type: "user",
      uuid: "s-u1",
      timestamp: "2026-05-01T10:00:00.000Z",
      message: {
        role: "user",
        content: `use key ${SECRETS.anthropic} <private>${SECRETS.privateNote}</private> please`,
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "s-a1",
      timestamp: "2026-05-01T10:00:01.000Z",
      message: {
        id: "msg_s1",
        role: "assistant",
        content: [
          { type: "text", text: `Token ${SECRETS.github} found.` },
          {
            type: "tool_use",
            id: "toolu_s1",
            name: "Bash",
            input: { command: `curl -H "Authorization: Bearer ${SECRETS.bearer}" https://api.example.com` },
          },
        ],
      },
    },
    {
      ...base,
      type: "user",
      uuid: "s-u2",
      timestamp: "2026-05-01T10:00:02.000Z",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_s1",
            content: `connecting with password=${SECRETS.password}`,
            is_error: false,
          },
        ],
      },
      toolUseResult: {
        stdout: `connecting with password=${SECRETS.password}`,
        stderr: "",
        interrupted: false,
        isImage: false,
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "s-a2",
      timestamp: "2026-05-01T10:00:03.000Z",
      message: {
        id: "msg_s2",
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_s2", name: "Read", input: { file_path: join(repo, ".env") } }],
      },
    },
    {
      ...base,
      type: "user",
      uuid: "s-u3",
      timestamp: "2026-05-01T10:00:04.000Z",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_s2",
            content: `STRIPE_KEY=${SECRETS.stripe}\nPLAIN_SETTING=${SECRETS.envValue}\n`,
          },
        ],
      },
      toolUseResult: {
        type: "text",
        file: {
          filePath: join(repo, ".env"),
          content: `STRIPE_KEY=${SECRETS.stripe}\nPLAIN_SETTING=${SECRETS.envValue}\n`,
        },
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "s-a3",
      timestamp: "2026-05-01T10:00:05.000Z",
      message: {
        id: "msg_s3",
        role: "assistant",
        content: [
          {
            type: "tool_use",
            id: "toolu_s3",
            name: "Edit",
            input: {
              file_path: join(repo, "deploy.sh"),
              old_string: "KEY=",
              new_string: `aws_access_key_id=${SECRETS.aws}`,
            },
          },
        ],
      },
    },
    {
      ...base,
      type: "user",
      uuid: "s-u4",
      timestamp: "2026-05-01T10:00:06.000Z",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_s3", content: "updated" }] },
      toolUseResult: {
        filePath: join(repo, "deploy.sh"),
        originalFile: `#!/bin/sh\n-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRETS.pem}\n-----END OPENSSH PRIVATE KEY-----\n`,
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "s-a4",
      timestamp: "2026-05-01T10:00:06.500Z",
      message: {
        id: "msg_s4",
        role: "assistant",
        content: [
          {
            type: "tool_use",
            id: "toolu_s4",
            name: "mcp__db__connect",
            input: { username: "app", password: SECRETS.jsonKey },
          },
        ],
      },
    },
    {
      ...base,
      type: "assistant",
      uuid: "s-a5",
      timestamp: "2026-05-01T10:00:06.600Z",
      message: {
        id: "msg_s5",
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_s5", name: "Bash", input: { command: "cat .env" } }],
      },
    },
    {
      ...base,
      type: "user",
      uuid: "s-u6",
      timestamp: "2026-05-01T10:00:06.700Z",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_s5", content: `COOKIE_SIGNING=${SECRETS.cookieSigning}` }],
      },
      toolUseResult: { stdout: `COOKIE_SIGNING=${SECRETS.cookieSigning}`, stderr: "", interrupted: false },
    },
    {
      ...base,
      type: "user",
      uuid: "s-u5",
      timestamp: "2026-05-01T10:00:07.000Z",
      message: { role: "user", content: "thanks" },
    },
  ];
  return `${recs.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

function assertNoSecrets(repo: string): void {
  for (const file of [projectPaths.db(repo), `${projectPaths.db(repo)}-wal`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file).toString("latin1");
    for (const [name, secret] of Object.entries(SECRETS)) {
      if (bytes.includes(secret)) throw new Error(`secret ${name} found in ${file}`);
    }
  }
}

let home: CaptureHome;
beforeEach(() => {
  home = makeCaptureHome();
});
afterEach(() => home.restore());

test("through the running watcher: no planted secret in data.db, events still stored", async () => {
  const git = (...args: string[]) =>
    Bun.spawnSync([
      "git",
      "-C",
      home.repo,
      "-c",
      "user.name=A",
      "-c",
      "user.email=a@example.com",
      "-c",
      "commit.gpgsign=false",
      ...args,
    ]);
  git("init", "-q");
  writeFileSync(join(home.repo, "x.txt"), "x\n");
  git("add", "x.txt");
  git("commit", "-q", "-m", `rotate token ${SECRETS.gitToken}`);
  const service = new CaptureService({ sweepIntervalMs: 300 });
  await service.start();
  try {
    mkdirSync(join(home.claudeDir, "projects", "-s"), { recursive: true });
    writeFileSync(join(home.claudeDir, "projects", "-s", "s.jsonl"), transcript(home.repo));
    await waitFor(() => readEvents(home.repo).some((e) => e.content.text === "thanks"), 5000, "transcript events");
  } finally {
    await service.stop();
  }
  const events = readEvents(home.repo);
  expect(events.filter((e) => e.event_type === "git_commit").length).toBe(1);
  expect(events.find((e) => e.event_type === "user_message")?.content.text).toBe(
    "use key [REDACTED:anthropic_key] [PRIVATE] please",
  );
  expect(events.find((e) => e.event_type === "code_change")?.file_paths).toEqual(["deploy.sh"]);
  expect(events.find((e) => e.event_type === "tool_result" && e.content.tool === "Read")?.content.output).toBe(
    "STRIPE_KEY=[REDACTED:env_value]\nPLAIN_SETTING=[REDACTED:env_value]\n",
  );
  expect(events.find((e) => e.event_type === "command_run" && e.content.command === "cat .env")?.content.output).toBe(
    "COOKIE_SIGNING=[REDACTED:env_value]",
  );
  assertNoSecrets(home.repo);
});

test("through a one-shot ingest: no planted secret in data.db", async () => {
  const path = join(home.root, "t.jsonl");
  writeFileSync(path, transcript(home.repo));
  const pool = new ProjectDbPool();
  try {
    const res = await ingestFileOnce(path, "claude", false, { projects: listProjects(), userId: "t", pool });
    expect(res.added).toBe(12);
  } finally {
    pool.close();
  }
  assertNoSecrets(home.repo);
});
