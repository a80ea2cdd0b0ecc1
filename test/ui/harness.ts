/**
 * Shared by the `sqrl ui` browser tests and the ui benchmark: a seeded store behind a real daemon
 * (compiled binary), Debian's Chromium driven by playwright-core (no browser download), and the
 * one-time login file `sqrl ui --no-open` prints (opening it in Chromium logs the page in; `login`
 * posts it the way its form does, for tests outside the browser).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { insertMemoryItem, supersedeMemoryItem } from "../../src/sql/memory-items.ts";
import { openDatabase, openProjectDb } from "../../src/sql/open.ts";
import { forgetUserStyle, insertUserStyle, supersedeUserStyle } from "../../src/sql/user-style.ts";
import { insertToolCall } from "../../src/sql/tool-calls.ts";
import { daemonStatus, makeHome, startDaemon, waitFor, type DaemonHome } from "../daemon/harness.ts";
import { SEED_EPISODE_ID, seedProject } from "../mcp/fixtures.ts";

/** Debian's `chromium` (CHROMIUM_PATH overrides); undefined when it is not installed. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(
    (p): p is string => !!p,
  );
  return candidates.find((p) => existsSync(p));
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error("Chromium is not installed: `apt-get install -y chromium` (or set CHROMIUM_PATH).");
  return chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** Ids of the seeded items the tests act on. */
export const UI_SEED = {
  /** Has evidence (the seed episode's events) and an older version it replaced. */
  withLineage: "mem_ui_jwt_v2",
  replaced: "mem_ui_jwt_v1",
  /** Global style (user.db): one current item, one that replaced an older version. */
  style: "ust_ui_spelling",
  styleV2: "ust_ui_commits_v2",
  styleV1: "ust_ui_commits_v1",
};

/** Global style items in the home's user.db for the configured user (as the engine would have learnt them). */
export function seedGlobalStyle(home: DaemonHome, project: string): void {
  const userId = /^user_id\s*=\s*"([^"]+)"/m.exec(readFileSync(join(home.sqrlHome, "config.toml"), "utf8"))?.[1];
  if (!userId) throw new Error("no user_id in config.toml");
  const db = openDatabase(join(home.sqrlHome, "user.db"), "user");
  try {
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();
    const base = {
      user_id: userId,
      tags: ["style"],
      importance: 0.7,
      source: "offline",
      confidence: 0.8,
      evidence: [{ project_id: project, episode_id: SEED_EPISODE_ID, event_ids: ["evt_seed_0"] }],
    };
    db.transaction(() => {
      insertUserStyle(db, {
        ...base,
        id: UI_SEED.style,
        key: "spelling",
        content: "Write comments and docs in British English spelling.",
        created_at: at(6),
        updated_at: at(6),
      });
      insertUserStyle(db, {
        ...base,
        id: UI_SEED.styleV1,
        key: "commit_messages",
        content: "Commit messages start with a ticket number.",
        created_at: at(9),
        updated_at: at(9),
      });
      supersedeUserStyle(
        db,
        UI_SEED.styleV1,
        {
          ...base,
          id: UI_SEED.styleV2,
          key: "commit_messages",
          content: "Commit messages are one imperative line, no ticket number.",
          created_at: at(1),
          updated_at: at(1),
        },
        "DELETE_AND_ADD",
        SEED_EPISODE_ID,
        at(1),
      );
      insertUserStyle(db, {
        ...base,
        id: "ust_ui_gone",
        key: "emoji",
        content: "Use emoji in commit messages.",
        created_at: at(20),
        updated_at: at(20),
      });
      forgetUserStyle(db, "ust_ui_gone", at(15));
    })();
  } finally {
    db.close();
  }
}

/** The MCP fixture project plus evidence-linked items with a lineage, and traced tool calls over five days. */
export function seedUiStore(root: string, opts: { extra?: number } = {}): void {
  seedProject(root, { extra: opts.extra ?? 0 });
  const db = openProjectDb(root);
  try {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    db.transaction(() => {
      const base = {
        project_id: root,
        user_id: "alice",
        scope: "project" as const,
        type: "pitfall" as const,
        key: "jwt_verify_tolerance",
        tags: ["auth"],
        importance: 0.7,
        source_episode_id: SEED_EPISODE_ID,
        source_event_ids: ["evt_seed_0", "evt_seed_1", "evt_seed_2"],
        confidence: 0.8,
        file_paths: ["src/auth/jwt.ts"],
        evidence_episode_ids: [SEED_EPISODE_ID],
        extractor: "offline",
      };
      insertMemoryItem(db, {
        ...base,
        id: UI_SEED.replaced,
        content: "verifyToken rejects fresh tokens: allow 2 s of clock tolerance.",
        created_at: iso(now - 3 * 86_400_000),
        updated_at: iso(now - 3 * 86_400_000),
        decision: "ADD_NEW",
      });
      insertMemoryItem(db, {
        ...base,
        id: UI_SEED.withLineage,
        content: "verifyToken in src/auth/jwt.ts needs clockTolerance: 5 (2 s was not enough on CI runners).",
        created_at: iso(now - 2 * 86_400_000),
        updated_at: iso(now - 2 * 86_400_000),
        decision: "UPDATE_EXISTING",
      });
      supersedeMemoryItem(db, UI_SEED.replaced, UI_SEED.withLineage, SEED_EPISODE_ID, iso(now - 2 * 86_400_000));
      const calls: Array<[number, string, Record<string, unknown>, number]> = [
        [4, "get_task_context", { task_description: "Fix the JWT login tests" }, 310],
        [3, "search_project_memory", { query: "drizzle migration" }, 120],
        [2, "get_project_brief_view", {}, 240],
        [
          1,
          "get_task_context",
          {
            task_description: "Add a delete endpoint for inventory items",
            active_file_paths: ["src/routes/inventory.ts"],
          },
          380,
        ],
        [0, "get_pitfalls_view", { scope_paths: ["src/auth/jwt.ts"] }, 150],
        [0, "get_task_context", { task_description: "Soft-delete inventory rows" }, 290],
      ];
      for (const [daysAgo, tool, args, tokens] of calls) {
        insertToolCall(db, {
          ts: iso(now - daysAgo * 86_400_000 - 3_600_000),
          tool,
          args,
          memory_ids: ["mem_seed_6", "mem_seed_7"].slice(0, 1 + (tokens % 2)),
          token_estimate: tokens,
          latency_ms: 4 + (tokens % 7),
          error: null,
        });
      }
    })();
  } finally {
    db.close();
  }
}

export interface UiStore {
  home: DaemonHome;
  project: string;
  /** A fresh one-time login file from `sqrl ui <project> --no-open`. */
  loginFile(): string;
  cleanup(): Promise<void>;
}

/** What a login file posts: its form's action and the code. */
export function readLoginFile(file: string): { action: string; code: string } {
  const text = readFileSync(file, "utf8");
  const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1]?.replaceAll("&#38;", "&");
  const code = /name="code" value="([^"]+)"/.exec(text)?.[1];
  if (!action || !code) throw new Error(`not a login file: ${file}`);
  return { action, code };
}

/** Post a login file's code as its form does (outside a browser): the page's response, cookie and page key. */
export async function postLogin(
  file: string,
): Promise<{ res: Response; origin: string; cookie: string; pageKey: string; html: string }> {
  const { action, code } = readLoginFile(file);
  const res = await fetch(action, {
    method: "POST",
    headers: { origin: "null", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ code }),
    redirect: "manual",
  });
  const html = await res.text();
  return {
    res,
    origin: new URL(action).origin,
    cookie: (res.headers.get("set-cookie") ?? "").split(";")[0]!,
    pageKey: /<meta name="sqrl-page-key" content="([^"]+)">/.exec(html)?.[1] ?? "",
    html,
  };
}

/** Open a login file in a browser context, as the user's browser does: the page on 127.0.0.1, logged in. */
export async function openLoginFile(ctx: BrowserContext, file: string, page?: Page): Promise<Page> {
  const p = page ?? (await ctx.newPage());
  await p.goto(pathToFileURL(file).href);
  await p.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/ui\//);
  return p;
}

/** An isolated home with the seeded project and a running daemon whose engine is healthy. */
export async function startUiStore(opts: { extra?: number } = {}): Promise<UiStore> {
  const home = makeHome();
  // Under the isolated HOME, so the page shows it as ~/acme-api (screenshots carry no temp path).
  const project = join(home.env.HOME!, "acme-api");
  mkdirSync(project, { recursive: true });
  const init = home.sqrl(["init", project, "--yes", "--no-git"]);
  if (init.code !== 0) throw new Error(`sqrl init failed: ${init.stderr}`);
  seedUiStore(project, opts);
  seedGlobalStyle(home, project);
  startDaemon(home);
  await waitFor("engine healthy", async () => (await daemonStatus(home)).engine.healthy, 60_000);
  return {
    home,
    project,
    loginFile: () => {
      const res = home.sqrl(["ui", project, "--no-open"]);
      if (res.code !== 0) throw new Error(`sqrl ui failed (${res.code}): ${res.stderr}`);
      const file = res.stdout.trim().split("\n").pop() ?? "";
      if (!file.startsWith(join(home.sqrlHome, "run"))) throw new Error(`sqrl ui printed no login file: ${res.stdout}`);
      return file;
    },
    cleanup: () => home.cleanup(),
  };
}
