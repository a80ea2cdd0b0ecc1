#!/usr/bin/env bun
/**
 * The `sqrl` entry point: `sqrl mcp` goes straight to the stdio server (hosts wait on it); everything else
 * runs the CLI.
 */
/**
 * The `sqrl` entry point: `sqrl mcp` goes straight to the stdio server (hosts wait on it); everything else
 * runs the CLI.
 */
export {};
const argv = process.argv.slice(2);

/**
 * `sqrl mcp` is started by MCP hosts for every session and must answer fast: skip citty and the
 * command registry and go straight to the stdio server (only `--project <dir>` is accepted there).
 */
function mcpFastPath(args: string[]): { project?: string } | undefined {
  if (args[0] !== "mcp") return undefined;
  const rest = args.slice(1);
  if (rest.length === 0) return {};
  if (rest.length === 1 && rest[0]!.startsWith("--project=")) return { project: rest[0]!.slice("--project=".length) };
  if (rest.length === 2 && rest[0] === "--project") return { project: rest[1] };
  return undefined; // --help, typos…: let the full CLI answer
}

const fast = mcpFastPath(argv);
if (fast) {
  const { runStdioServer } = await import("./mcp/stdio.ts");
  await runStdioServer({ cwd: fast.project });
} else {
  const [{ defineCommand }, { COMMANDS }, { runMain }, { VERSION }] = await Promise.all([
    import("citty"),
    import("./cli/commands.ts"),
    import("./cli/run-main.ts"),
    import("./version.ts"),
  ]);
  const main = defineCommand({
    meta: {
      name: "sqrl",
      version: VERSION,
      description:
        "Squirrel: local-first memory for coding agents. Watches your agent sessions, serves memory over MCP.",
    },
    args: {
      debug: { type: "boolean", description: "Print stack traces and debug logs" },
    },
    subCommands: COMMANDS,
  });
  await runMain(main, VERSION, argv);
}
