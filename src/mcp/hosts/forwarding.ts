/**
 * What each MCP host hands its model from a sqrl tool result, so that every tool can hold that to
 * `context_budget_tokens`. A sqrl result carries its answer twice: `structuredContent` (the compact
 * ToolAnswer, forwarded as its JSON text) and a text content (the answer's markdown). The host is
 * known by the `clientInfo` of its MCP `initialize` request.
 *
 * Measured with the pinned CLIs of test/hosts run headless against the model stand-in, reading what
 * reaches the model, for one get_task_context answer (two memories; its JSON 120 tokens by o200k,
 * 132 by sqrl's estimator), before sqrl packed for the host:
 *
 * | host (clientInfo name)                        | hands the model                      | o200k |
 * |-----------------------------------------------|--------------------------------------|-------|
 * | Claude Code 2.1.332, Codex 0.169.0            | the JSON alone                       | 120   |
 * | OpenCode 1.18.33                              | the markdown alone                   | 100   |
 * | Qwen Code 0.24.4 (`qwen-cli-mcp-client-sqrl`) | the JSON, a newline, the markdown    | 220   |
 * | Copilot CLI 1.0.102 (`copilot-cli`)           | the markdown, a blank line, the JSON | 221   |
 *
 * So only the last two are listed below: sqrl packs their answers so that both parts together fit
 * (test/hosts/qwen.test.ts and copilot.test.ts record the names and check the budget by o200k).
 * Every other client, known or not, keeps the default: the JSON alone is held to the budget (a host
 * that forwards only the markdown gets less than that).
 */
import { z } from "zod";
import type { HostName } from "./host-types.ts";

/** `initialize`'s clientInfo, as far as sqrl reads it. */
export const ClientInfo = z.looseObject({ name: z.string(), version: z.string().optional() });
export type ClientInfo = z.infer<typeof ClientInfo>;

/** A part of a tool result a host hands the model: the structured JSON or the text content. */
export type ForwardedPart = "json" | "text";

export interface HostForwarding {
  /** The host, for messages and tests; `undefined` for the default. */
  host: HostName | undefined;
  /** How the host names itself in clientInfo. */
  client: RegExp;
  /** What the host hands the model, in order, and what it puts between the parts. */
  parts: readonly ForwardedPart[];
  separator: string;
}

/** Claude Code, Codex and any client not listed: the JSON is the answer the budget is about. */
export const DEFAULT_FORWARDING: HostForwarding = { host: undefined, client: /(?!)/, parts: ["json"], separator: "" };

/** Hosts that hand the model both parts (measured above). */
export const BOTH_PARTS_HOSTS: readonly HostForwarding[] = [
  // Qwen Code names its client `qwen-cli-mcp-client-<server name>` (`sqrl` as `sqrl hosts add` writes it).
  { host: "qwen", client: /^qwen-cli-mcp-client-/, parts: ["json", "text"], separator: "\n" },
  { host: "copilot", client: /^copilot-cli$/, parts: ["text", "json"], separator: "\n\n" },
];

/** The forwarding of the client that sent `initialize` (the default for an unknown or missing one). */
export function forwardingOf(client: unknown): HostForwarding {
  const info = ClientInfo.safeParse(client);
  if (!info.success) return DEFAULT_FORWARDING;
  return BOTH_PARTS_HOSTS.find((h) => h.client.test(info.data.name)) ?? DEFAULT_FORWARDING;
}

/** The text `forwarding`'s host hands the model for an answer whose JSON and markdown are given. */
export function forwardedParts(parts: Record<ForwardedPart, string>, forwarding: HostForwarding): string {
  return forwarding.parts.map((p) => parts[p]).join(forwarding.separator);
}
