/**
 * `sqrl mcp` through the full CLI (`--help`, odd flags); main.ts normally takes the fast path to the stdio
 * server.
 */
import { defineCommand } from "citty";

/** `sqrl mcp`: the stdio MCP server. Kept tiny: everything loads inside run(). */
export default defineCommand({
  meta: {
    name: "mcp",
    description: "Serve memory to an MCP host over stdio (the host starts this; stdout is the protocol)",
  },
  args: {
    project: { type: "string", description: "Default project_root (default: the folder the host starts sqrl in)" },
  },
  async run({ args }) {
    const { runStdioServer } = await import("../mcp/stdio.ts");
    await runStdioServer({ cwd: args.project }); // returns once connected; the process ends when the host closes stdin
  },
});
