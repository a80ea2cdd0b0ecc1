/**
 * `sqrl hook claude-session-start`: the Claude Code SessionStart hook (style and brief as additional
 * context).
 */
import { defineCommand } from "citty";

/** Read all of stdin, giving up after `timeoutMs` (a hook must never hang its host). */
async function readStdin(timeoutMs: number): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.stdin.removeAllListeners("data");
      process.stdin.pause();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(done, timeoutMs);
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.once("end", done);
    process.stdin.once("error", done);
  });
}

const claudeSessionStart = defineCommand({
  meta: {
    name: "claude-session-start",
    description:
      "Claude Code SessionStart hook: print the core user-style and project-brief views as additionalContext",
  },
  args: {
    budget: { type: "string", description: "Total token budget (default: config budgets.session_start)" },
  },
  async run({ args }) {
    const { buildSessionStartContext, parseHookInput, sessionStartOutput } = await import(
      "../mcp/session-start-hook.ts"
    );
    const { DaemonBridge } = await import("../mcp/daemon-bridge.ts");
    const { sessionStartBudget } = await import("../mcp/budgets.ts");
    const { log } = await import("../shared/log.ts");
    let context = "";
    try {
      const input = parseHookInput(await readStdin(2_000));
      const fromArg = args.budget === undefined ? NaN : Number(args.budget);
      const totalBudget = Number.isInteger(fromArg) && fromArg > 0 ? fromArg : await sessionStartBudget();
      const bridge = new DaemonBridge({ timeoutMs: 4_000, startTimeoutMs: 4_000 });
      const res = await buildSessionStartContext(input, { bridge, totalBudget });
      // Registered for the user, the hook runs in every repo: one sqrl does not know is not a problem.
      if (res.error && res.project_id === null) log.debug(`sqrl hook: no memory injected: ${res.error}`);
      else if (res.error) log.warn(`sqrl hook: no memory injected: ${res.error}`);
      context = res.additionalContext;
    } catch (err) {
      log.warn(`sqrl hook: no memory injected: ${(err as Error).message}`);
    }
    process.stdout.write(`${sessionStartOutput(context)}\n`);
  },
});

export default defineCommand({
  meta: { name: "hook", description: "Hooks that MCP hosts run (Claude Code: claude-session-start)" },
  subCommands: { "claude-session-start": claudeSessionStart },
});
