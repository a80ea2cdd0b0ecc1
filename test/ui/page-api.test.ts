/**
 * The page's own API (/ui/api/…) from outside the browser, against the compiled binary's daemon and
 * the seeded store: `sqrl ui` without a browser, the login trade, list filters / statuses / search /
 * pages, one memory, the corrections' answers and their errors, and the JSON refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { daemonFetch, readRuntime } from "../daemon/harness.ts";
import { SQRL_BIN } from "../helpers/sqrl.ts";
import { postLogin, startUiStore, UI_SEED, type UiStore } from "./harness.ts";

let store: UiStore;
let origin: string;
let cookie: string;
let pageKey: string;

async function get<T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${origin}/ui/api/${path}`, { headers: { cookie, "x-sqrl-page": pageKey } });
  return { status: res.status, body: (await res.json()) as T };
}

async function post<T = Record<string, unknown>>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${origin}/ui/api/${path}`, {
    method: "POST",
    headers: { cookie, origin, "x-sqrl-page": pageKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

interface List {
  total: number;
  offset: number;
  items: Array<{
    memory_id: string;
    type: string;
    status: string;
    score?: number;
    reason?: string;
    evidence: { quote: string; episode_count: number };
  }>;
}

describe.skipIf(!existsSync(SQRL_BIN))("sqrl ui page API (compiled binary)", () => {
  beforeAll(async () => {
    store = await startUiStore({ extra: 120 });
    const login = await postLogin(store.loginFile());
    expect(login.res.status).toBe(200);
    ({ origin, cookie, pageKey } = login);
    expect(pageKey.length).toBeGreaterThan(20);
  }, 90_000);
  afterAll(async () => {
    await store?.cleanup();
  });

  test("sqrl ui without a display prints the login file, never a code; a path outside any project is refused", () => {
    const res = store.home.sqrl(["ui", store.project]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("No browser could be opened");
    expect(res.stdout).toContain(`${store.home.sqrlHome}/run/ui-login-`);
    expect(res.stdout).not.toContain("code");
    const outside = store.home.sqrl(["ui", store.home.root, "--no-open"]);
    expect(outside.code).not.toBe(0);
    expect(outside.stderr).toContain("sqrl init");
  });

  test("list: newest first, paged; filters by type and status; search ranks with its reason", async () => {
    const all = await get<List>(`memories?project=${encodeURIComponent(store.project)}&limit=50`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(132); // 130 project items + 2 global style items
    const projectOnly = await get<List>(
      `memories?project=${encodeURIComponent(store.project)}&scope=project&limit=50&offset=100`,
    );
    expect(projectOnly.body.total).toBe(130);
    expect(all.body.items).toHaveLength(50);
    const page3 = await get<List>(`memories?project=${encodeURIComponent(store.project)}&limit=50&offset=100`);
    expect(page3.body.items).toHaveLength(32);
    const page2 = await get<List>(`memories?project=${encodeURIComponent(store.project)}&limit=50&offset=50`);
    const everything = [...all.body.items, ...page2.body.items, ...page3.body.items];
    expect(new Set(everything.map((i) => i.memory_id)).size).toBe(132);
    // One order across both stores: newest first.
    const times = everything.map((i) => (i as unknown as { updated_at: string }).updated_at);
    expect(times).toEqual([...times].sort().reverse());

    const pitfalls = await get<List>(`memories?project=${encodeURIComponent(store.project)}&type=pitfall&type=recipe`);
    expect(pitfalls.body.items.map((i) => i.type).sort()).toEqual(["pitfall", "pitfall", "pitfall", "recipe"]);
    const superseded = await get<List>(`memories?project=${encodeURIComponent(store.project)}&status=superseded`);
    expect(superseded.body.items.map((i) => i.memory_id)).toEqual([UI_SEED.replaced, UI_SEED.styleV1]);
    expect(superseded.body.items[0]!.evidence).toMatchObject({
      episode_count: 1,
      quote: expect.stringContaining("token not yet valid"),
    });

    const found = await get<List>(
      `memories?project=${encodeURIComponent(store.project)}&q=${encodeURIComponent("JWT clock skew token not yet valid")}`,
    );
    expect(found.body.items[0]!.memory_id).toBe("mem_seed_6");
    expect(found.body.items[0]!.score).toBeGreaterThan(0);
    expect(found.body.items[0]!.reason).toBeTruthy();
    const text = await get<List>(
      `memories?project=${encodeURIComponent(store.project)}&status=superseded&q=fresh%20tokens`,
    );
    expect(text.body.items.map((i) => i.memory_id)).toEqual([UI_SEED.replaced]);

    const bad = await get(`memories?project=${encodeURIComponent(store.project)}&status=sideways`);
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toContain("status");
  });

  test("one memory: lineage oldest first, evidence; unknown ids are 404 with a way out", async () => {
    const d = await get<{ lineage: Array<{ memory_id: string }>; events: unknown[]; episodes: unknown[] }>(
      `memories/${UI_SEED.withLineage}?project=${encodeURIComponent(store.project)}`,
    );
    expect(d.status).toBe(200);
    expect(d.body.lineage.map((v) => v.memory_id)).toEqual([UI_SEED.replaced, UI_SEED.withLineage]);
    expect(d.body.events).toHaveLength(3);
    expect(d.body.episodes).toHaveLength(1);
    const missing = await get(`memories/mem_nope?project=${encodeURIComponent(store.project)}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("memory_not_found");
    const episode = await get(`episodes/ep_nope?project=${encodeURIComponent(store.project)}`);
    expect(episode.status).toBe(404);
    const noProject = await get("memories");
    expect(noProject.status).toBe(400);
  });

  test("corrections answer with the memory as it is now; acting on an old version says what to do", async () => {
    const p = encodeURIComponent(store.project);
    const edit = await post<{ memory_id: string; previous_id: string; action: string }>(
      `memories/mem_seed_2/edit?project=${p}`,
      { content: "Prefer named exports; default exports only for Next.js pages." },
    );
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({ action: "edit", previous_id: "mem_seed_2" });
    expect(edit.body.memory_id).not.toBe("mem_seed_2");
    const again = await post(`memories/mem_seed_2/pin?project=${p}`, {});
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("memory_not_valid");
    expect(String(again.body.error)).toContain(edit.body.memory_id);
    const tooShort = await post(`memories/${edit.body.memory_id}/edit?project=${p}`, { content: "x" });
    expect(tooShort.status).toBe(400);
    const noReason = await post(`memories/${edit.body.memory_id}/wrong?project=${p}`, {});
    expect(noReason.status).toBe(400);
    const pin = await post(`memories/${edit.body.memory_id}/pin?project=${p}`, { importance: 0.95 });
    expect(pin.body).toMatchObject({ action: "pin", status: "active" });
    const shown = await get<{ item: { pinned: boolean; importance: number } }>(
      `memories/${edit.body.memory_id}?project=${p}`,
    );
    expect(shown.body.item).toMatchObject({ pinned: true, importance: 0.95 });
    // A pin follows the memory to its next version.
    const edit2 = await post<{ memory_id: string }>(`memories/${edit.body.memory_id}/edit?project=${p}`, {
      content: "Prefer named exports; default exports only where a framework needs them.",
    });
    const moved = await get<{ item: { pinned: boolean; importance: number }; lineage: unknown[] }>(
      `memories/${edit2.body.memory_id}?project=${p}`,
    );
    expect(moved.body.item).toMatchObject({ pinned: true, importance: 0.95 });
    expect(moved.body.lineage).toHaveLength(3);
    const unpin = await post(`memories/${edit2.body.memory_id}/pin?project=${p}`, { pinned: false });
    expect(unpin.body).toMatchObject({ action: "unpin" });
    const unknown = await post(`memories/${edit2.body.memory_id}/explode?project=${p}`, {});
    expect(unknown.status).toBe(404);
  });

  test("global style (user.db): listed under scope user, its versions shown; edit and forget work, pin and mark wrong say why not", async () => {
    const p = encodeURIComponent(store.project);
    const user = await get<List>(`memories?project=${p}&scope=user&status=all`);
    expect(user.body.items.map((i) => [i.memory_id, i.status])).toEqual([
      [UI_SEED.styleV2, "active"],
      [UI_SEED.style, "active"],
      [UI_SEED.styleV1, "superseded"],
      ["ust_ui_gone", "forgotten"],
    ]);
    const d = await get<{ lineage: Array<{ memory_id: string; status: string }>; episodes: unknown[] }>(
      `memories/${UI_SEED.styleV2}?project=${p}`,
    );
    expect(d.body.lineage.map((v) => [v.memory_id, v.status])).toEqual([
      [UI_SEED.styleV1, "superseded"],
      [UI_SEED.styleV2, "active"],
    ]);
    expect(d.body.episodes).toHaveLength(1);
    const pin = await post(`memories/${UI_SEED.style}/pin?project=${p}`, {});
    expect(pin.status).toBe(400);
    expect(pin.body.code).toBe("not_supported");
    const wrong = await post(`memories/${UI_SEED.style}/wrong?project=${p}`, { reason: "x" });
    expect(wrong.status).toBe(400);

    const styleView = async () =>
      (await (await daemonFetch(store.home, `/views/user_style?project_id=${p}&mode=full`)).json()) as {
        markdown: string;
      };
    expect((await styleView()).markdown).toContain("British English");
    const edit = await post<{ memory_id: string }>(`memories/${UI_SEED.style}/edit?project=${p}`, {
      content: "Write comments and docs in American English spelling.",
    });
    expect(edit.status).toBe(200);
    expect(edit.body.memory_id).toStartWith("ust_");
    expect((await styleView()).markdown).toContain("American English");
    const forget = await post(`memories/${edit.body.memory_id}/forget?project=${p}`, {});
    expect(forget.body).toMatchObject({ action: "forget", status: "forgotten" });
    expect((await styleView()).markdown).not.toContain("English spelling");
  });

  test("overview and calls in their shapes", async () => {
    const o = await get<{
      memories: Record<string, { active: number; superseded: number }>;
      events: { total: number };
      sources: Array<{ source_tool: string }>;
    }>(`overview?project=${encodeURIComponent(store.project)}`);
    expect(o.body.events.total).toBe(5);
    expect(o.body.memories.pitfall).toMatchObject({ active: 3, superseded: 1 });
    expect((o.body as unknown as { global_style: number }).global_style).toBeGreaterThanOrEqual(1);
    expect(o.body.sources.map((s) => s.source_tool)).toEqual(["claude_code"]);
    const c = await get<{ total: number; per_day: Array<{ tokens: number }> }>(
      `calls?project=${encodeURIComponent(store.project)}&days=7`,
    );
    expect(c.body.total).toBe(6);
    expect(c.body.per_day).toHaveLength(7);
    expect(c.body.per_day.reduce((a, d) => a + d.tokens, 0)).toBe(310 + 120 + 240 + 380 + 150 + 290);
  });

  test("refusals are JSON: no cookie or no page key 401, foreign Host 403, a change without the page's Origin 403", async () => {
    const none = await fetch(`${origin}/ui/api/projects`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: "unauthorized" });
    expect((await fetch(`${origin}/ui/api/projects`, { headers: { cookie } })).status).toBe(401);
    expect(
      (await fetch(`${origin}/ui/api/projects`, { headers: { cookie, "x-sqrl-page": "x".repeat(32) } })).status,
    ).toBe(401);
    const host = await fetch(`${origin}/ui/api/projects`, {
      headers: { cookie, "x-sqrl-page": pageKey, host: "evil.example" },
    });
    expect(host.status).toBe(403);
    const cross = await fetch(
      `${origin}/ui/api/memories/mem_seed_0/forget?project=${encodeURIComponent(store.project)}`,
      { method: "POST", headers: { cookie, "x-sqrl-page": pageKey, origin: "http://127.0.0.1:1" } },
    );
    expect(cross.status).toBe(403);
    expect(await cross.json()).toMatchObject({ code: "forbidden_origin" });
    // The bearer-token API does not answer the page's cookie, and the page API does not take the token.
    expect((await fetch(`${origin}/status`, { headers: { cookie } })).status).toBe(401);
    const token = readRuntime(store.home, "daemon")!.token;
    expect((await fetch(`${origin}/ui/api/projects`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
      401,
    );
  });
});
