/**
 * The MCP server's build-time manifest (`initialize` and `tools/list` answers), inlined by a Bun macro for a
 * fast start.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { createServer, defaultDeps } from "./server.ts";

/** What `initialize` and `tools/list` answer: fixed for a given build. */
export interface ServerManifest {
  serverInfo: Record<string, unknown>;
  capabilities: Record<string, unknown>;
  instructions: string;
  tools: Array<Record<string, unknown>>;
  supportedProtocolVersions: string[];
  latestProtocolVersion: string;
}

/**
 * Ask the real server (createServer, over an in-memory transport) for its initialize result and
 * tool list. `src/mcp/stdio.ts` imports this as a Bun macro, so it runs at build time and the
 * compiled binary answers `initialize` + `tools/list` from the inlined result without loading the
 * SDK and zod first (about 60 ms of start-up). The same bytes as the SDK would send; a test checks it.
 */
export async function serverManifest(): Promise<ServerManifest> {
  const server = createServer(defaultDeps({ tracer: undefined }));
  const client = new Client({ name: "sqrl-manifest", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  try {
    const { tools } = await client.listTools();
    return {
      serverInfo: client.getServerVersion() as unknown as Record<string, unknown>,
      capabilities: client.getServerCapabilities() as Record<string, unknown>,
      instructions: client.getInstructions() ?? "",
      tools: JSON.parse(JSON.stringify(tools)) as Array<Record<string, unknown>>,
      supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      latestProtocolVersion: LATEST_PROTOCOL_VERSION,
    };
  } finally {
    await client.close();
    await server.close();
  }
}
