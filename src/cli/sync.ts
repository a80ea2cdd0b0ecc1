/**
 * `sqrl sync`: team memory through `.ctx/shared/` files that git carries between clones.
 */
import { plural } from "../shared/plural.ts";
import { defineCommand } from "citty";
import { syncProject } from "../engine/learn/team-sync.ts";
import { gitignoreHidesShared } from "./init-project.ts";
import { processConfig } from "../shared/config.ts";
import { commonArgs, print, printJson } from "./memory-cli.ts";
import { withProjectDbs } from "./project-db.ts";

export default defineCommand({
  meta: {
    name: "sync",
    description: "Team memory through git: write project memory to .ctx/shared/ and merge teammates' files from there",
  },
  args: { ...commonArgs },
  run({ args }) {
    const userId = processConfig().get().user_id;
    const { report, root } = withProjectDbs(args.project, (db, _userDb, root) => ({
      report: syncProject(db, root, { userId }),
      root,
    }));
    if (args.json) return printJson(report);
    const lines = [
      `Merged ${plural(report.imported.length, "teammate memory", "teammate memories")}${report.imported.length ? ` (${report.imported.map((o) => `${o.verb} ${o.key}`).join(", ")})` : ""}`,
      `Wrote ${report.exported.length} new files, removed ${report.pruned.length} outdated ones under ${report.dir}`,
    ];
    if (report.invalid.length)
      lines.push(`Skipped ${report.invalid.length} unreadable files: ${report.invalid.join(", ")}`);
    if (gitignoreHidesShared(root))
      lines.push(
        "Note: .gitignore hides .ctx/shared/. Replace the `.ctx/` line with `.ctx/*` and `!.ctx/shared/` so git carries it.",
      );
    else lines.push("Commit .ctx/shared/ to share them; teammates run `sqrl sync` after pulling.");
    print(lines.join("\n"));
  },
});
