/**
 * `sqrl reprocess [path]`: extract every closed episode of the project again under the current
 * rules. Runs in this process against the project's data.db (SQLite's WAL lets it run beside the
 * daemon); the old items are superseded, never deleted, so `sqrl show` keeps their history.
 * `--offline-pending`: only the episodes waiting for the LLM, extracted with the offline rules now.
 */
import { defineCommand } from "citty";
import { print, printJson, projectRootFor } from "./memory-cli.ts";

export default defineCommand({
  meta: {
    name: "reprocess",
    description:
      "Re-extract every closed episode under the current rules; old memories become history, none is deleted",
  },
  args: {
    path: {
      type: "positional",
      required: false,
      description: "Project folder (default: the registered project containing the current directory)",
    },
    json: { type: "boolean", description: "Print the result as JSON" },
    "offline-pending": {
      type: "boolean",
      description: "Only extract the episodes waiting for the LLM, with the offline rules, now",
    },
  },
  async run({ args }) {
    const root = projectRootFor(args.path);
    const [{ openProjectDb }, { reprocessProject, extractPendingOffline }] = await Promise.all([
      import("../sql/open.ts"),
      import("../engine/learn/reprocess.ts"),
    ]);
    const db = openProjectDb(root);
    if (args["offline-pending"]) {
      try {
        const res = await extractPendingOffline(db, root);
        if (args.json) printJson({ project: root, ...res });
        else
          print(
            res.episodes === 0
              ? "No episode waits for the LLM."
              : `Extracted ${res.episodes} episode${res.episodes === 1 ? "" : "s"} that waited for the LLM with the offline rules: ${res.stored} memor${res.stored === 1 ? "y" : "ies"} stored or updated.`,
          );
      } finally {
        db.close();
      }
      return;
    }
    const started = Date.now();
    const tty = process.stderr.isTTY === true;
    let lastLine = 0;
    try {
      const res = await reprocessProject(db, root, {}, ({ done, total }) => {
        // A bar on a terminal; elsewhere a line every 10 % of a long run (logs stay readable).
        if (tty) process.stderr.write(`\rreprocess: ${done}/${total} episodes${done === total ? "\n" : ""}`);
        else if (total >= 20 && (done === total || done - lastLine >= Math.ceil(total / 10))) {
          lastLine = done;
          process.stderr.write(`reprocess: ${done}/${total} episodes\n`);
        }
      });
      if (args.json) printJson({ project: root, ...res });
      else
        print(
          `Reprocessed ${res.episodes} episode${res.episodes === 1 ? "" : "s"} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${res.stored} memor${res.stored === 1 ? "y" : "ies"} now; ${res.superseded} earlier one${res.superseded === 1 ? "" : "s"} kept as history (${res.replaced} replaced on the same key). \`sqrl show <id>\` shows the lineage.${res.waiting > 0 ? ` ${res.waiting} episode${res.waiting === 1 ? " waits" : "s wait"} for the LLM (it is away); \`sqrl reprocess --offline-pending\` extracts ${res.waiting === 1 ? "it" : "them"} with the offline rules now.` : ""}`,
        );
    } finally {
      db.close();
    }
  },
});
