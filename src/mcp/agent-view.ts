/**
 * "What the agent sees", for the `sqrl ui` page: the MCP tools' own answers — get_task_context for a
 * task, files and budget, and the three views — produced by the same tool code `sqrl mcp` runs (an
 * in-process MCP server and SDK client over an in-memory transport, on the engine; fresh session, not
 * traced), plus the SessionStart hook's text. The daemon does not import this face: `sqrl daemon run`
 * (src/cli/daemon.ts, the composition root) hands it to the daemon's page as a function.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { listProjects } from "../shared/projects.ts";
import type { RuntimeInfo } from "../shared/runtime-files.ts";
import { VERSION } from "../version.ts";
import { sessionStartBudget } from "./budgets.ts";
import { DaemonBridge } from "./daemon-bridge.ts";
import { createServer } from "./server.ts";
import { SessionDedup } from "./session-dedup.ts";
import { buildSessionStartContext } from "./session-start-hook.ts";

export interface AgentAsk {
  task: string;
  files: string[];
  budget?: number;
}

export interface ToolShown {
  text: string;
  structured: unknown;
  is_error: boolean;
}

export interface AgentAnswers {
  task_context: ToolShown | null;
  views: { user_style: ToolShown; project_brief: ToolShown; pitfalls: ToolShown };
  session_start: unknown;
}

/** The tools' answers for `project`, asked of the engine at `engine` exactly as `sqrl mcp` would. */
export async function agentAnswers(engine: RuntimeInfo, project: string, ask: AgentAsk): Promise<AgentAnswers> {
  const bridge = new DaemonBridge({ kind: "engine", target: () => engine, start: false, timeoutMs: 30_000 });
  const server = createServer({ bridge, dedup: new SessionDedup(), cwd: project, projects: () => listProjects() });
  const client = new Client({ name: "sqrl-ui", version: VERSION });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolShown> => {
    const res = await client.callTool({ name, arguments: { include_seen: true, ...args } });
    const text = (res.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
    return { text, structured: res.structuredContent ?? null, is_error: res.isError === true };
  };
  try {
    const { task, files, budget } = ask;
    const taskContext = task
      ? await call("get_task_context", {
          task_description: task,
          active_file_paths: files,
          ...(budget ? { context_budget_tokens: budget } : {}),
        })
      : null;
    const views = {
      user_style: await call("get_user_style_view", {}),
      project_brief: await call("get_project_brief_view", {}),
      pitfalls: await call("get_pitfalls_view", {
        ...(files.length > 0 ? { scope_paths: files } : {}),
        ...(task ? { task_description: task } : {}),
      }),
    };
    const sessionStart = await buildSessionStartContext(
      { cwd: project },
      { bridge, totalBudget: await sessionStartBudget(), projects: () => listProjects() },
    );
    return { task_context: taskContext, views, session_start: sessionStart };
  } finally {
    await client.close();
    await server.close();
  }
}
