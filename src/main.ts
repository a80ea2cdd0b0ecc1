#!/usr/bin/env bun
import { defineCommand } from "citty";
import { COMMANDS } from "./cli/commands.ts";
import { runMain } from "./cli/run-main.ts";
import { VERSION } from "./version.ts";

const main = defineCommand({
  meta: {
    name: "sqrl",
    version: VERSION,
    description: "Squirrel: local-first memory for coding agents. Watches your agent sessions, serves memory over MCP.",
  },
  args: {
    debug: { type: "boolean", description: "Print stack traces and debug logs" },
  },
  subCommands: COMMANDS,
});

await runMain(main, VERSION);
