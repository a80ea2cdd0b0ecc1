/**
 * `sqrl ui [path]`: start the daemon if needed, ask it for a one-time login and open it in the default
 * browser. The daemon writes the login code into a file only this user can read (SQRL_HOME/run,
 * 0600) and answers with its path: the code itself never appears on a command line (any local user
 * reads /proc/<pid>/cmdline) or in a URL. Opening the file posts the code to the page
 * (http://127.0.0.1:<port>/ui/…); the daemon deletes it once used or after 10 minutes. The path is
 * printed when no browser opens, or only printed with --no-open.
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

/** Try to open `file` in the default browser; false when there is none to try or it failed to start. */
async function openBrowser(file: string): Promise<boolean> {
  const cmd = opener();
  if (!cmd) return false;
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd[0]!, [...cmd.slice(1), file], { stdio: "ignore", detached: true });
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
    const { file } = await callApi<{ file: string; port: number }>(
      "daemon",
      "/ui_login_code",
      { method: "POST", body: project ? { project } : {} },
      info,
    );
    if (args.open && (await openBrowser(file))) {
      process.stdout.write(`Opened the sqrl page (http://127.0.0.1:${info.port}/ui/) from its one-time login file.\n`);
      return;
    }
    process.stdout.write(
      `${args.open ? "No browser could be opened; open this file in your browser yourself" : "Open this file in your browser"} (it logs you in once, within 10 minutes):\n${file}\n`,
    );
  },
});
