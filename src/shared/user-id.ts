/**
 * The default user id: git's user.email, else $USER, else the OS account name.
 */
import { spawnSync } from "node:child_process";
import { userInfo } from "node:os";

let cached: string | undefined;

/** Default user id: git's user.email, else $USER, else the OS account name. */
export function defaultUserId(): string {
  if (cached) return cached;
  let fromGit = "";
  try {
    const res = spawnSync("git", ["config", "--global", "user.email"], { encoding: "utf8", timeout: 2000 });
    fromGit = res.status === 0 ? res.stdout.trim() : "";
  } catch {
    fromGit = "";
  }
  cached = fromGit || process.env.USER || process.env.USERNAME || safeOsUser() || "user";
  return cached;
}

function safeOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "";
  }
}
