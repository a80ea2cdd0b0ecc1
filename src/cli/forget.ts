/**
 * `sqrl forget <memory-id>`: drop a memory from everything served, keeping it as history.
 */
import { defineCommand } from "citty";
import { forgetMemory } from "../engine/learn/forget.ts";
import { nowIso } from "../shared/time.ts";
import { commonArgs, print, printJson } from "./memory-cli.ts";
import { withProjectDbs } from "./project-db.ts";

export default defineCommand({
  meta: {
    name: "forget",
    description: "Forget a memory: gone from views, search and task context, kept as history for `sqrl show`",
  },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "Memory id (mem_… in the project, ust_… in your global style)",
    },
    ...commonArgs,
  },
  run({ args }) {
    const res = withProjectDbs(args.project, (db, userDb) => forgetMemory(db, userDb, args.id, nowIso()));
    if (args.json) printJson(res);
    else print(`Forgot ${res.id} (${res.scope} ${res.key}): ${res.content}`);
  },
});
