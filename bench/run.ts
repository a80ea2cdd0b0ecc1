/**
 * `bun run bench` runs every benchmark; `bun run bench <name> [args] [--quick]` runs one.
 * Each prints its table and updates its section of docs/benchmarks.md.
 */
import { isAbsolute } from "node:path";
import { writeSection, type Bench } from "./report.ts";

const BENCHES: Record<string, () => Promise<Bench>> = {
  tokens: () => import("./tokens.ts").then((m) => m.default),
  locomo: () => import("./locomo.ts").then((m) => m.default),
  retrieval: () => import("./retrieval.ts").then((m) => m.default),
  "mcp-cold-start": () => import("./mcp-cold-start.ts").then((m) => m.default),
  "daemon-idle": () => import("./daemon-idle.ts").then((m) => m.default),
  "api-roundtrip": () => import("./api-roundtrip.ts").then((m) => m.default),
  ingest: () => import("./ingest.ts").then((m) => m.default),
  "watch-latency": () => import("./watch-latency.ts").then((m) => m.default),
  engine: () => import("./engine.ts").then((m) => m.default),
  replay: () => import("./replay.ts").then((m) => m.default),
  "memory-quality": () => import("./memory-quality.ts").then((m) => m.default),
  faults: () => import("./faults.ts").then((m) => m.default),
  ui: () => import("./ui.ts").then((m) => m.default),
  verify: () => import("./verify.ts").then((m) => m.default),
  eval: () => import("./eval.ts").then((m) => m.default),
};

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const noWrite = argv.includes("--no-write");
const positional = argv.filter((a) => !a.startsWith("--"));
const wanted = positional[0] && BENCHES[positional[0]] ? [positional[0]] : Object.keys(BENCHES);
// What the benchmark itself reads (`--dump FILE`, `--review FILE`): everything but the name and the runner's flags.
const extra = argv.filter((a) => a !== positional[0] && a !== "--quick" && a !== "--no-write");
if (positional[0] && !BENCHES[positional[0]]) {
  console.error(`Unknown benchmark "${positional[0]}". Known: ${Object.keys(BENCHES).join(", ")}`);
  process.exit(2);
}

const headlines: string[] = [];
for (const name of wanted) {
  const bench = await BENCHES[name]!();
  console.log(`\n== ${name}${quick ? " (quick)" : ""} ==`);
  const report = await bench({ quick, args: extra });
  console.log(report.markdown);
  headlines.push(...report.headline.map((h) => `${name}: ${h}`));
  // A folder of this machine (model answers, guidance) is written as DIR: no local paths in the docs.
  const shown = extra.map((a) => (isAbsolute(a) ? "DIR" : a));
  const command = `bun run bench ${name}${shown.length ? ` ${shown.join(" ")}` : ""}${quick ? " --quick" : ""}`;
  if (!noWrite) writeSection(name, report, command, quick);
}
console.log(`\n${headlines.join("\n")}`);
