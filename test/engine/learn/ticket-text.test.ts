import { describe, expect, test } from "bun:test";
import { ticketIn } from "../../../src/engine/learn/extract/ticket-text.ts";

describe("a ticket the session fetched", () => {
  test("a GitHub issue from an MCP server: number, title and body, links dropped", () => {
    const out = JSON.stringify({
      number: 412,
      title: "Retry uploads",
      body: "Uploads time out on large files; see https://example.test/runbook. Keep the 3 retries [doc](https://example.test/x).",
      html_url: "https://example.test/issues/412",
    });
    const t = ticketIn(out, { tool: "mcp__github__get_issue" });
    expect(t).toEqual({
      id: "#412",
      title: "Retry uploads",
      body: "Uploads time out on large files; see . Keep the 3 retries doc.",
    });
  });

  test("a Jira issue's summary and text description", () => {
    const out = JSON.stringify({
      key: "OPS-7",
      fields: { summary: "Pin Node", description: "Node 22 breaks the build." },
    });
    expect(ticketIn(out, { tool: "mcp__atlassian__getJiraIssue" })?.body).toBe("Node 22 breaks the build.");
  });

  test("`gh issue view` printed without a terminal", () => {
    const out = "title:\tDrop Node 18\nstate:\tOPEN\nnumber:\t88\n--\nNode 18 is out of support; CI still runs it.\n";
    expect(ticketIn(out, { command: "gh issue view 88" })).toEqual({
      id: "#88",
      title: "Drop Node 18",
      body: "Node 18 is out of support; CI still runs it.",
    });
  });

  test("other tools and commands, comments and malformed output give nothing", () => {
    const issue = JSON.stringify({ identifier: "ENT-1", title: "T", description: "D" });
    expect(ticketIn(issue, { tool: "mcp__linear-server__get_issue" })?.id).toBe("ENT-1");
    expect(ticketIn(issue, { tool: "mcp__linear-server__get_issue_comments" })).toBeNull();
    expect(ticketIn(issue, { tool: "Read" })).toBeNull();
    expect(ticketIn(issue, { command: "cat issue.json" })).toBeNull();
    expect(ticketIn("{not json", { tool: "mcp__github__get_issue" })).toBeNull();
    const code = JSON.stringify({ number: 3, title: "Parse", body: "Keep `a//b` and // comments as they are." });
    expect(ticketIn(code, { tool: "mcp__github__get_issue" })?.body).toBe("Keep `a//b` and // comments as they are.");
    expect(
      ticketIn(JSON.stringify({ identifier: "ENT-2", title: "T", description: "" }), { tool: "get_issue" }),
    ).toBeNull();
  });
});
