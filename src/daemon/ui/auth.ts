/**
 * Who may use `sqrl ui`: `sqrl ui` (holding the daemon token) asks for a one-time login code, which
 * the daemon writes into a login file only the user can read (login-file.ts); the browser posts it,
 * once and within LOGIN_CODE_TTL_MS, and gets two things back: a session cookie (HttpOnly,
 * SameSite=Strict, path /ui) and a page key inside the page itself. Cookies are not separated by
 * port, so a page on any other 127.0.0.1 port receives the cookie too: the page's API therefore also
 * needs the page key in the `x-sqrl-page` header, which the page keeps in its own origin's storage
 * and never puts in a cookie or a URL. Sessions live as long as the daemon: a restart logs everyone out.
 */
import { newToken } from "../../shared/ids.ts";
import { tokensEqual } from "../../shared/http-guard.ts";

export const LOGIN_CODE_TTL_MS = 10 * 60_000;
export const SESSION_COOKIE = "sqrl_ui";
/** The header carrying the page key on every call of the page's API. */
export const PAGE_KEY_HEADER = "x-sqrl-page";

export interface UiLogin {
  session: string;
  pageKey: string;
}

export class UiAuth {
  private readonly codes = new Map<string, number>();
  /** session token → the page key handed over with it. */
  private readonly sessions = new Map<string, string>();

  /** A fresh one-time code (expired ones are dropped on the way). */
  newLoginCode(nowMs = Date.now()): string {
    for (const [code, expires] of this.codes) if (expires <= nowMs) this.codes.delete(code);
    const code = newToken();
    this.codes.set(code, nowMs + LOGIN_CODE_TTL_MS);
    return code;
  }

  /** Trade a code for a session and its page key; undefined when the code is unknown, used or expired. */
  redeem(code: string, nowMs = Date.now()): UiLogin | undefined {
    let found: string | undefined;
    for (const known of this.codes.keys()) if (tokensEqual(known, code)) found = known;
    if (found === undefined) return undefined;
    const expires = this.codes.get(found)!;
    this.codes.delete(found);
    if (expires <= nowMs) return undefined;
    const login = { session: newToken(), pageKey: newToken() };
    this.sessions.set(login.session, login.pageKey);
    return login;
  }

  /** The page key of the live session whose cookie the request carries, if any. */
  private sessionKey(req: Request): string | undefined {
    const value = cookieValue(req.headers.get("cookie") ?? "", SESSION_COOKIE);
    if (!value) return undefined;
    let key: string | undefined;
    for (const [s, k] of this.sessions) if (tokensEqual(s, value)) key = k;
    return key;
  }

  /** Does the request carry a live session cookie? Enough for the page's shell and assets, which hold no data. */
  hasSession(req: Request): boolean {
    return this.sessionKey(req) !== undefined;
  }

  /** A live session cookie and that session's page key in the header: what every call of the page's API needs. */
  hasPageKey(req: Request): boolean {
    const key = this.sessionKey(req);
    const sent = req.headers.get(PAGE_KEY_HEADER);
    return key !== undefined && sent !== null && tokensEqual(key, sent);
  }

  sessionCookie(session: string): string {
    return `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/ui`;
  }
}

function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

/** The page's own origins: a change is accepted only from one of these (plus the session cookie and page key). */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}
