/**
 * Who may use `sqrl ui`: `sqrl ui` (holding the daemon token) asks for a one-time login code; the
 * browser trades it, once and within LOGIN_CODE_TTL_MS, for a session cookie (HttpOnly,
 * SameSite=Strict, path /ui). Sessions live as long as the daemon: a restart logs everyone out.
 */
import { newToken } from "../../shared/ids.ts";
import { tokensEqual } from "../../shared/http-guard.ts";

export const LOGIN_CODE_TTL_MS = 10 * 60_000;
export const SESSION_COOKIE = "sqrl_ui";

export class UiAuth {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Set<string>();

  /** A fresh one-time code (expired ones are dropped on the way). */
  newLoginCode(nowMs = Date.now()): string {
    for (const [code, expires] of this.codes) if (expires <= nowMs) this.codes.delete(code);
    const code = newToken();
    this.codes.set(code, nowMs + LOGIN_CODE_TTL_MS);
    return code;
  }

  /** Trade a code for a session token; undefined when the code is unknown, used or expired. */
  redeem(code: string, nowMs = Date.now()): string | undefined {
    let found: string | undefined;
    for (const known of this.codes.keys()) if (tokensEqual(known, code)) found = known;
    if (found === undefined) return undefined;
    const expires = this.codes.get(found)!;
    this.codes.delete(found);
    if (expires <= nowMs) return undefined;
    const session = newToken();
    this.sessions.add(session);
    return session;
  }

  /** Does the request carry a live session cookie? */
  hasSession(req: Request): boolean {
    const value = cookieValue(req.headers.get("cookie") ?? "", SESSION_COOKIE);
    if (!value) return false;
    for (const s of this.sessions) if (tokensEqual(s, value)) return true;
    return false;
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

/** The page's own origins: a change is accepted only from one of these (plus the session cookie). */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}
