/**
 * `sqrl ui [path]`: start the daemon if needed, ask it for a one-time login code and open the page
 * (http://127.0.0.1:<port>/ui/…) in the default browser; print the URL when no browser opens, or
 * only print it with --no-open.
 */
import { defineCommand } from "citty";
import { spawn } from "node:child_process";
import { callApi } from "../shared/api-client.ts";
import { ensureDaemon } from "../shared/daemon-launch.ts";
import { ProjectNotRegisteredError } from "../shared/errors.ts";
import { listProjects, projectForPath } from "../shared/projects.ts";
import { resolveProjectDir } from "./init-project.ts";

function opener(): string[] | undefined {
  if (process.platform === "darwin") return ["open"];
  if (process.platform === "win32") return ["cmd", "/c", "start", ""];
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return undefined;
  return ["xdg-open"];
}

/** Try to open `url` in the default browser; false when there is none to try or it failed to start. */
async function openBrowser(url: string): Promise<boolean> {
  const cmd = opener();
  if (!cmd) return false;
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd[0]!, [...cmd.slice(1), url], { stdio: "ignore", detached: true });
      child.once("error", () => resolve(false));
      child.once("exit", (code) => resolve(code === 0));
      child.unref();
    } catch {
      resolve(false);
    }
  });
}

export default defineCommand({
  meta: { name: "ui", description: "Open the local web page that shows, explains and corrects what sqrl remembers" },
  args: {
    path: {
      type: "positional",
      required: false,
      description:
        "Project folder to open (default: the registered project containing the current directory, else the overview of all)",
    },
    open: {
      type: "boolean",
      default: true,
      description: "Open the default browser",
      negativeDescription: "Only print the one-time URL",
    },
  },
  async run({ args }) {
    let project: string | undefined;
    if (args.path) {
      const dir = resolveProjectDir(args.path);
      project = projectForPath(dir, listProjects());
      if (!project) throw new ProjectNotRegisteredError(dir);
    } else {
      project = projectForPath(process.cwd(), listProjects());
    }
    const info = await ensureDaemon();
    const { code } = await callApi<{ code: string; port: number }>(
      "daemon",
      "/ui_login_code",
      { method: "POST" },
      info,
    );
    const query = new URLSearchParams();
    if (project) query.set("project", project);
    query.set("code", code);
    const url = `http://127.0.0.1:${info.port}/ui/?${query}`;
    if (args.open && (await openBrowser(url))) {
      process.stdout.write(`Opened ${url}\n(the link works once, for 10 minutes)\n`);
      return;
    }
    process.stdout.write(
      `${args.open ? "No browser could be opened; open this link yourself" : "Open this link"} (it works once, for 10 minutes):\n${url}\n`,
    );
  },
});
