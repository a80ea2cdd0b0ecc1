/**
 * `sqrl import <file>`: merge exported memory into this project through the update rules.
 */
import { plural } from "../shared/plural.ts";
import { defineCommand } from "citty";
import { existsSync, readFileSync } from "node:fs";
import { importMemory, parsePortableLines } from "../engine/learn/memory-transfer.ts";
import { processConfig } from "../shared/config.ts";
import { UsageError } from "../shared/errors.ts";
import { commonArgs, print, printJson } from "./memory-cli.ts";
import { withProjectDbs } from "./project-db.ts";

export default defineCommand({
  meta: {
    name: "import",
    description: "Merge exported memory (JSON Lines from `sqrl export`) into the project through the update rules",
  },
  args: {
    file: { type: "positional", required: true, description: "File written by `sqrl export` (- for stdin)" },
    ...commonArgs,
  },
  async run({ args }) {
    if (args.file !== "-" && !existsSync(args.file))
      throw new UsageError(`${args.file} does not exist. Pass a file written by \`sqrl export\`.`);
    const text = args.file === "-" ? await new Response(Bun.stdin.stream()).text() : readFileSync(args.file, "utf8");
    const items = parsePortableLines(text, args.file);
    const userId = processConfig().get().user_id;
    const outcomes = withProjectDbs(args.project, (db, userDb, root) =>
      importMemory(db, root, items, { userDb: userDb ?? undefined, userId }),
    );
    if (args.json) return printJson(outcomes);
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(o.verb, (counts.get(o.verb) ?? 0) + 1);
    print(
      `Imported ${plural(items.length, "memory")}: ${[...counts].map(([v, n]) => `${n} ${v}`).join(", ") || "nothing to do"}`,
    );
  },
});
