import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { DaemonStatus, Health, SearchResponse } from "../../src/shared/api.ts";
import {
  daemonFetch,
  daemonStatus,
  initProject,
  makeHome,
  SQRL_BIN,
  startDaemon,
  waitFor,
  type DaemonHome,
  type RuntimeJson,
} from "./harness.ts";

let home: DaemonHome;
let info: RuntimeJson;
let project: string;

describe.skipIf(!existsSync(SQRL_BIN))("daemon local API (compiled binary)", () => {
  beforeAll(async () => {
    home = makeHome();
    project = initProject(home, "api");
    info = startDaemon(home);
    await waitFor("engine healthy", async () => (await daemonStatus(home)).engine.healthy);
  }, 60_000);
  afterAll(async () => {
    await home?.cleanup();
  });

  test("401 without a token or with a wrong one", async () => {
    for (const path of ["/health", "/status", `/search_memory?project_id=${encodeURIComponent(project)}&query=x`]) {
      const none = await daemonFetch(home, path, { token: null });
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ code: "unauthorized" });
      const wrong = await daemonFetch(home, path, { token: "y".repeat(info.token.length) });
      expect(wrong.status).toBe(401);
    }
  });

  test("requests with an Origin header or a foreign Host are refused even with the token", async () => {
    const origin = await daemonFetch(home, "/health", { headers: { origin: "https://evil.example" } });
    expect(origin.status).toBe(403);
    expect(await origin.json()).toMatchObject({ code: "forbidden_origin" });
    const host = await daemonFetch(home, "/health", { headers: { host: "evil.example" } });
    expect(host.status).toBe(403);
    expect(await host.json()).toMatchObject({ code: "forbidden_host" });
  });

  test("/health and /status answer in the contract's shapes", async () => {
    const health = Health.parse(await (await daemonFetch(home, "/health")).json());
    expect(health).toMatchObject({ ok: true, pid: info.pid });
    const status = DaemonStatus.parse(await (await daemonFetch(home, "/status")).json());
    expect(status.port).toBe(info.port);
    expect(status.projects.map((p) => p.project_id)).toEqual([project]);
    expect(status.engine.healthy).toBe(true);
  });

  test("unknown paths and wrong methods are JSON errors with the right status", async () => {
    const missing = await daemonFetch(home, "/nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "not_found" });
    const method = await daemonFetch(home, "/task_context");
    expect(method.status).toBe(405);
    expect(await method.json()).toMatchObject({ code: "method_not_allowed" });
  });

  test("read paths are forwarded to the engine unchanged (answers and errors)", async () => {
    const ok = await daemonFetch(home, `/search_memory?project_id=${encodeURIComponent(project)}&query=tests`);
    expect(ok.status).toBe(200);
    const body = SearchResponse.parse(await ok.json());
    expect(body.project_id).toBe(project);

    const bad = await daemonFetch(home, `/search_memory?project_id=${encodeURIComponent(project)}`);
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as { error: string; code: string };
    expect(badBody.error).toContain("query");

    const post = await daemonFetch(home, "/task_context", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ project_id: project, task_description: "fix the failing login test" }),
    });
    expect(post.status).toBe(200);
    expect(await post.json()).toMatchObject({ type: "task_context", project_id: project });

    const unknown = await daemonFetch(home, `/views/pitfalls?project_id=${encodeURIComponent("/no/such/project")}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toHaveProperty("code");
  });
});
