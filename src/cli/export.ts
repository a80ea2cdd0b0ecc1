/**
 * `sqrl export`: a project's valid memory (and optionally the user's global style) as JSON Lines.
 */
import { plural } from "../shared/plural.ts";
import { defineCommand } from "citty";
import { writeFileSync } from "node:fs";
import { exportMemory } from "../engine/learn/memory-transfer.ts";
import { processConfig } from "../shared/config.ts";
import { commonArgs, print } from "./memory-cli.ts";
import { withProjectDbs } from "./project-db.ts";

export default defineCommand({
  meta: {
    name: "export",
    description: "Write the project's valid memory as JSON Lines (one item per line) to stdout or a file",
  },
  args: {
    out: { type: "string", alias: "o", description: "File to write (default: stdout)" },
    "with-user-style": { type: "boolean", description: "Include your global (cross-project) style items" },
    project: commonArgs.project,
  },
  run({ args }) {
    const userId = processConfig().get().user_id;
    const items = withProjectDbs(args.project, (db, userDb, root) =>
      exportMemory(db, root, args["with-user-style"] && userDb ? { userDb, userId } : {}),
    );
    const text = items.map((i) => JSON.stringify(i)).join("\n") + (items.length ? "\n" : "");
    if (args.out) {
      writeFileSync(args.out, text, { mode: 0o600 });
      process.stderr.write(`Exported ${plural(items.length, "memory")} to ${args.out}\n`);
    } else if (text) print(text.trimEnd());
  },
});
