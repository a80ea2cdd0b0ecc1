import type { CommandDef } from "citty";

type Loader = () => Promise<CommandDef<any>>;

/**
 * Every `sqrl` subcommand, imported lazily so `sqrl --version` and `sqrl mcp` load only what they run.
 * One file per command under src/cli/ (or the module that owns it).
 */
export const COMMANDS: Record<string, Loader> = {
  init: () => import("./init.ts").then((m) => m.default),
  config: () => import("./config.ts").then((m) => m.default),
  status: () => import("./status.ts").then((m) => m.default),
};
