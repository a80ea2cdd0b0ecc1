/**
 * `sqrl ui`'s login files: the one-time code must never appear on a command line (any local user
 * reads /proc/<pid>/cmdline) nor in a URL, so the daemon writes it into a small HTML file in
 * SQRL_HOME/run (folder 0700, file 0600) whose form posts it to the page at once; `sqrl ui` opens the
 * file's path. The file is removed as soon as its code is redeemed, when the code expires, and when
 * the daemon starts or stops.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newToken } from "../../shared/ids.ts";
import { homePaths } from "../../shared/paths.ts";
import { LOGIN_CODE_TTL_MS, type UiAuth } from "./auth.ts";

const PREFIX = "ui-login-";

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The file's page: a form that posts the code to the sqrl page (a button when scripts are off). */
export function loginFileHtml(code: string, port: number, project?: string): string {
  const query = project ? `?${new URLSearchParams({ project })}` : "";
  const action = escapeHtml(`http://127.0.0.1:${port}/ui/${query}`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark"><title>sqrl · opening</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1.5rem">
<form method="post" action="${action}"><input type="hidden" name="code" value="${escapeHtml(code)}">
<p>Opening sqrl… <button type="submit">Open sqrl</button></p></form>
<script>document.forms[0].submit();</script></body></html>
`;
}

export class LoginFiles {
  private readonly files = new Map<string, { path: string; timer: ReturnType<typeof setTimeout> }>();

  constructor(private readonly auth: UiAuth) {}

  /** Remove login files a previous daemon left behind (their codes died with it). */
  sweep(): void {
    let names: string[];
    try {
      names = readdirSync(homePaths.run());
    } catch {
      return;
    }
    for (const name of names) if (name.startsWith(PREFIX)) rmSync(join(homePaths.run(), name), { force: true });
  }

  /** A fresh code in a fresh file readable by this user alone; returns the file's path. */
  issue(port: number, project?: string): string {
    const dir = homePaths.run();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const code = this.auth.newLoginCode();
    const path = join(dir, `${PREFIX}${newToken().slice(0, 12)}.html`);
    writeFileSync(path, loginFileHtml(code, port, project), { mode: 0o600, flag: "wx" });
    const timer = setTimeout(() => this.spent(code), LOGIN_CODE_TTL_MS);
    timer.unref?.();
    this.files.set(code, { path, timer });
    return path;
  }

  /** The code was redeemed (or expired): its file goes. */
  spent(code: string): void {
    const f = this.files.get(code);
    if (!f) return;
    clearTimeout(f.timer);
    rmSync(f.path, { force: true });
    this.files.delete(code);
  }

  /** The daemon stops: every code dies, so every file goes. */
  close(): void {
    for (const code of [...this.files.keys()]) this.spent(code);
  }
}
