/**
 * Every `sqrl` subcommand, imported lazily so `sqrl --version` and `sqrl mcp` load only what they run.
 * One file per command under src/cli/ (or the module that owns it).
 */
import type { CommandDef } from "citty";

type Loader = () => Promise<CommandDef<any>>;

export const COMMANDS: Record<string, Loader> = {
  init: () => import("./init.ts").then((m) => m.default),
  "forget-project": () => import("./forget-project.ts").then((m) => m.default),
  config: () => import("./config.ts").then((m) => m.default),
  status: () => import("./status.ts").then((m) => m.default),
  doctor: () => import("./doctor.ts").then((m) => m.default),
  daemon: () => import("./daemon.ts").then((m) => m.default),
  mcp: () => import("./mcp.ts").then((m) => m.default),
  hosts: () => import("./hosts.ts").then((m) => m.default),
  hook: () => import("./hook.ts").then((m) => m.default),
  log: () => import("./log.ts").then((m) => m.default),
  ingest: () => import("./ingest.ts").then((m) => m.default),
  engine: () => import("./engine.ts").then((m) => m.default),
  context: () => import("./context.ts").then((m) => m.default),
  search: () => import("./search.ts").then((m) => m.default),
  view: () => import("./view.ts").then((m) => m.default),
  timeline: () => import("./timeline.ts").then((m) => m.default),
  recall: () => import("./recall.ts").then((m) => m.default),
  show: () => import("./show.ts").then((m) => m.default),
  forget: () => import("./forget.ts").then((m) => m.default),
  export: () => import("./export.ts").then((m) => m.default),
  import: () => import("./import.ts").then((m) => m.default),
  sync: () => import("./sync.ts").then((m) => m.default),
  reprocess: () => import("./reprocess.ts").then((m) => m.default),
  ui: () => import("./ui.ts").then((m) => m.default),
  eval: () => import("./eval.ts").then((m) => m.default),
};
