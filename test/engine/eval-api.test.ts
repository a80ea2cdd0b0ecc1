/**
 * The page's eval through the engine API (issue 27), on a real SQLite store in a temp dir: no eval
 * yet; a run started by POST /eval/run, kept as the project's last eval (a 0600 file under SQRL_HOME,
 * the same figures as `sqrl eval`); the items served but never needed as they stand today; and the
 * forget action: only valid, never-needed items a person did not pin or edit are forgotten, the way
 * `sqrl forget` does (history kept, a forget mark, no longer served), and the eval is marked stale.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evaluateProject } from "../../src/engine/retrieve/eval/replay-eval.ts";
import { startEngineServer, type EngineServer } from "../../src/engine/server.ts";
import { EvalForgetResponse, EvalStatus } from "../../src/shared/eval-report.ts";
import { lastEvalPath, readLastEval } from "../../src/shared/last-eval.ts";
import { addProject } from "../../src/shared/projects.ts";
import { nowIso } from "../../src/shared/time.ts";
import { getMemoryItem } from "../../src/sql/memory-items.ts";
import { marksOf, putMark } from "../../src/sql/memory-marks.ts";
import { addEpisode, addItem, tempProject } from "./retrieve/helpers.ts";

const TOKEN = "e".repeat(32);
let home: string;
let savedHome: string | undefined;
let server: EngineServer;
let proj: ReturnType<typeof tempProject>;
const ids: Record<string, string> = {};

async function call<T = any>(path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as T };
}

const status = async () => EvalStatus.parse((await call(`/eval?project_id=${encodeURIComponent(proj.root)}`)).json);

/** What task context serves for a task now (ids). */
async function served(task: string, files: string[] = []): Promise<string[]> {
  const res = await call<{ memory_ids: string[] }>("/task_context", {
    project_id: proj.root,
    task_description: task,
    active_file_paths: files,
  });
  expect(res.status).toBe(200);
  return res.json.memory_ids;
}

const LOGOUT = "Add a logout button to the login page; tokens and login errors stay as they are";

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "sqrl-eval-api-home-"));
  savedHome = process.env.SQRL_HOME;
  process.env.SQRL_HOME = home;
  proj = tempProject("sqrl-eval-api-");
  addProject(proj.root);
  const now = Date.now();
  const item = (key: string, spec: Parameters<typeof addItem>[2]) => {
    ids[key] = addItem(proj.db, proj.root, { age_days: 10, extractor: "offline", ...spec }, now).id;
  };
  item("jwt", {
    type: "pitfall",
    key: "jwt_tolerance",
    content: "verifyToken in src/auth/jwt.ts needs clockTolerance: 5 or fresh login tokens fail.",
    file_paths: ["src/auth/jwt.ts"],
    importance: 0.8,
  });
  item("page", {
    type: "project_fact",
    key: "login_page",
    content: "The login page lives in web/login and posts the login form to /api/session.",
    importance: 0.7,
  });
  item("button", {
    type: "project_fact",
    key: "buttons",
    content: "Buttons on the login page use the shared Button component from web/ui.",
    importance: 0.7,
  });
  item("pinned", {
    type: "project_fact",
    key: "token_expiry",
    content: "Login tokens expire after 15 minutes; the login page refreshes them with /api/refresh.",
    importance: 0.7,
  });
  item("edited", {
    type: "project_fact",
    key: "login_errors",
    content: "Login errors on the login page are logged to the audit table, never to stdout.",
    importance: 0.7,
    extractor: "manual", // a person's edit
  });
  putMark(proj.db, getMemoryItem(proj.db, ids.pinned!)!, "pin", nowIso(now - 9 * 86_400_000), { importance: 0.7 });
  addEpisode(
    proj.db,
    proj.root,
    {
      id: "ep_a",
      days_ago: 6,
      summary: "Setup.",
      events: [{ type: "user_message", content: { text: "set up the repo" }, at: 0 }],
    },
    now,
  );
  addEpisode(
    proj.db,
    proj.root,
    {
      id: "ep_b",
      days_ago: 3,
      summary: "Fixed the login tests.",
      events: [
        {
          type: "user_message",
          content: { text: "The login tests fail with token not yet valid, fix verifyToken" },
          at: 0,
        },
        {
          type: "command_run",
          content: { command: "pnpm vitest run src/auth", exit_code: 1, output: "token not yet valid" },
          file_paths: ["src/auth/jwt.ts"],
          at: 1,
        },
        { type: "code_change", content: { text: "clockTolerance: 5" }, file_paths: ["src/auth/jwt.ts"], at: 2 },
      ],
    },
    now,
  );
  addEpisode(
    proj.db,
    proj.root,
    {
      id: "ep_c",
      days_ago: 1,
      summary: "Logout.",
      events: [{ type: "user_message", content: { text: LOGOUT }, at: 0 }],
    },
    now,
  );
  server = await startEngineServer({ token: TOKEN });
});

afterAll(async () => {
  await server?.stop();
  proj?.cleanup();
  if (savedHome === undefined) delete process.env.SQRL_HOME;
  else process.env.SQRL_HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

describe("the page's eval through the engine API", () => {
  test("no eval yet: nothing to show, and the forget action has nothing to act on", async () => {
    const s = await status();
    expect(s.last).toBeNull();
    expect(s.running).toBeNull();
    const forget = await call("/eval/forget_unused", { project_id: proj.root, memory_ids: [ids.page] });
    expect(forget.status).toBe(404);
    expect(forget.json.error).toContain("sqrl eval");
    expect(getMemoryItem(proj.db, ids.page!)!.deleted).toBe(false);
  });

  test("POST /eval/run replays in the engine and keeps the report as the last eval: a 0600 file, the figures of sqrl eval", async () => {
    const started = await call("/eval/run", { project_id: proj.root });
    expect(started.status).toBe(200);
    let s = EvalStatus.parse(started.json);
    // Answered at once, with the run in progress (the page polls GET /eval for its progress and result).
    expect(s.running).not.toBeNull();
    expect(s.last).toBeNull();
    const deadline = Date.now() + 30_000;
    while (s.last === null || s.running !== null) {
      expect(Date.now()).toBeLessThan(deadline);
      await Bun.sleep(50);
      s = await status();
    }
    expect(s.error).toBeNull();
    const stored = readLastEval(proj.root)!;
    expect(stored.by).toBe("page");
    expect(statSync(lastEvalPath(proj.root)).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "evals")).mode & 0o777).toBe(0o700);
    const direct = await evaluateProject(proj.db, proj.root, { userId: "user" });
    const { sessions: _s, items: _i, ...summary } = direct;
    expect(s.last!.summary).toEqual(summary);
    expect(stored.report.sessions_evaluated).toBe(2);
    // The setup is not vacuous: one session needed the JWT pitfall and got it; the logout session needed nothing.
    expect(s.last!.summary.needed_served).toBeGreaterThan(0);
    expect(s.last!.most.map((i) => i.memory_id)).toContain(ids.jwt!);
    expect(s.last!.stale).toBeNull();
  });

  test("served but never needed, as they stand today: the pinned and the edited one are held, the others valid", async () => {
    const s = await status();
    const nn = new Map(s.last!.never_needed.map((i) => [i.memory_id, i.state]));
    const report = readLastEval(proj.root)!.report;
    for (const i of report.items) expect(nn.has(i.memory_id)).toBe(i.served > 0 && i.needed === 0);
    expect(nn.get(ids.pinned!)).toBe("held");
    expect(nn.get(ids.edited!)).toBe("held");
    expect(nn.has(ids.jwt!)).toBe(false);
    expect([...nn.values()].filter((st) => st === "valid").length).toBeGreaterThan(0);
  });

  test("forget the never needed: valid ones go to history and are no longer served; pinned, edited, needed and unknown ids are kept; the eval is stale", async () => {
    const before = await status();
    const valid = before.last!.never_needed.filter((i) => i.state === "valid").map((i) => i.memory_id);
    const servedBefore = await served(LOGOUT);
    expect(valid.some((id) => servedBefore.includes(id))).toBe(true);
    const res = await call("/eval/forget_unused", {
      project_id: proj.root,
      memory_ids: [...before.last!.never_needed.map((i) => i.memory_id), ids.jwt, "mem_nope"],
    });
    expect(res.status).toBe(200);
    const out = EvalForgetResponse.parse(res.json);
    expect(out.forgotten.sort()).toEqual([...valid].sort());
    expect(out.kept).toEqual(
      expect.arrayContaining([
        { memory_id: ids.pinned, reason: "held" },
        { memory_id: ids.edited, reason: "held" },
        { memory_id: ids.jwt, reason: "not_in_eval" },
        { memory_id: "mem_nope", reason: "not_in_eval" },
      ]),
    );
    expect(out.stale).toBe(true);
    for (const id of valid) {
      const item = getMemoryItem(proj.db, id)!;
      expect(item.deleted).toBe(true); // kept as history: the row is there, no longer valid
      expect(item.valid_to).not.toBeNull();
      expect(item.superseded_by).toBeNull();
      expect(marksOf(proj.db, id).map((m) => m.kind)).toContain("forget");
      const detail = await call(`/memory?project_id=${encodeURIComponent(proj.root)}&memory_id=${id}`);
      expect(detail.json.item.status).toBe("forgotten");
    }
    const servedAfter = await served(LOGOUT);
    for (const id of valid) expect(servedAfter).not.toContain(id);
    for (const key of ["pinned", "edited", "jwt"]) expect(getMemoryItem(proj.db, ids[key]!)!.deleted).toBe(false);
    expect(marksOf(proj.db, ids.pinned!).map((m) => m.kind)).toEqual(["pin"]);
    expect(servedAfter).toContain(ids.pinned!);
    const after = await status();
    expect(after.last!.stale?.reason).toContain(`${valid.length} memor`);
    expect(after.last!.never_needed.filter((i) => valid.includes(i.memory_id)).every((i) => i.state === "gone")).toBe(
      true,
    );
    // Again: nothing left to forget, nothing changes.
    const again = EvalForgetResponse.parse(
      (await call("/eval/forget_unused", { project_id: proj.root, memory_ids: valid })).json,
    );
    expect(again.forgotten).toEqual([]);
    expect(again.kept.every((k) => k.reason === "gone")).toBe(true);
  });

  test("bad requests name the field; an unknown project is a 404", async () => {
    const empty = await call("/eval/forget_unused", { project_id: proj.root, memory_ids: [] });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toContain("memory_ids");
    const unknown = await call(`/eval?project_id=${encodeURIComponent(join(home, "elsewhere"))}`);
    expect(unknown.status).toBe(404);
  });
});
