/**
 * What the MCP tools depend on (bridge, session de-dup, tracer, cwd, budgets, the host's clientInfo), wired
 * by createServer or by tests.
 */
import type { DaemonBridge } from "./daemon-bridge.ts";
import type { SessionDedup } from "./session-dedup.ts";
import type { Tracer } from "./trace.ts";

/** Default budgets of the tools (config `budgets.*`). */
export interface ToolBudgets {
  task_context: number;
  view: number;
  search: number;
}

/** Everything the MCP tools need; `createServer(deps)` wires them, tests pass their own. */
export interface McpDeps {
  /** The daemon API (or, in tests, a real engine server started in-process). */
  bridge: DaemonBridge;
  /** Memories delivered in this session. */
  dedup: SessionDedup;
  /** Trace of every tool call; undefined turns tracing off. */
  tracer?: Tracer;
  /** The folder the host started `sqrl mcp` in: the default `project_root`. */
  cwd: string;
  /** Registered project roots (default: projects.json). */
  projects?: () => string[];
  /** Default budgets (default: config.toml `budgets.*`, read on each call). */
  budgets?: () => ToolBudgets | Promise<ToolBudgets>;
  /**
   * The `clientInfo` the host sent in `initialize` (unchecked: src/mcp/hosts/forwarding.ts parses
   * it); createServer wires the SDK's record of it. Undefined: an unknown host.
   */
  clientInfo?: () => unknown;
}
