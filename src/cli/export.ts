/**
 * `sqrl export`: a project's valid memory (and optionally the user's global style) as JSON Lines.
 */
import { plural } from "../shared/plural.ts";
import { defineCommand } from "citty";
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SqrlError, UsageError } from "../shared/errors.ts";
import { exportMemory } from "../engine/learn/memory-transfer.ts";
import { processConfig } from "../shared/config.ts";
import { commonArgs, print } from "./memory-cli.ts";
import { withProjectDbs } from "./project-db.ts";

/** Write the export, or say in one line why the file cannot be written and what to do. */
function writeOut(file: string, text: string): void {
  try {
    writeFileSync(file, text, { mode: 0o600 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const abs = resolve(file);
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new UsageError(
        `Cannot write ${abs}: the folder ${dirname(abs)} does not exist. Create it first or pick another -o path.`,
        "not_a_directory",
      );
    if (code === "EISDIR")
      throw new UsageError(
        `Cannot write ${abs}: it is a folder. Give a file name, e.g. -o memory.jsonl.`,
        "not_a_file",
      );
    if (code === "EACCES" || code === "EPERM" || code === "EROFS")
      throw new SqrlError("not_a_file", `Cannot write ${abs}: permission denied. Pick a path you can write to.`);
    throw new SqrlError("not_a_file", `Cannot write ${abs} (${code ?? (err as Error).message}).`);
  }
}

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
      writeOut(args.out, text);
      process.stderr.write(`Exported ${plural(items.length, "memory")} to ${args.out}\n`);
    } else if (text) print(text.trimEnd());
  },
});
