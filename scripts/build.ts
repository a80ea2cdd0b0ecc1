/**
 * Build the single `sqrl` executable: `bun run build` → dist/sqrl.
 * --no-compile-autoload-dotenv / --no-compile-autoload-bunfig: MCP hosts start `sqrl mcp` inside the
 * user's project; without them the binary would load that project's .env (secrets) and bunfig.toml.
 * --bytecode (with --format=esm for top-level await) roughly halves start-up time.
 */
import { $ } from "bun";
import { mkdirSync } from "node:fs";

const outfile = process.argv[2] ?? "dist/sqrl";
const target = process.env.SQRL_TARGET; // e.g. bun-darwin-arm64 for cross builds
mkdirSync("dist", { recursive: true });
const flags = [
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--sourcemap",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  ...(target ? [`--target=${target}`] : []),
];
const started = performance.now();
// NODE_ENV=production reaches the page bundled from src/ui/index.html too (production JSX runtime: a
// smaller, faster `sqrl ui` page; --compile alone leaves that bundle on the development runtime).
// + the entry points of the ingest workers and of the insert worker (see ingest-workers.ts, insert-pipe.ts)
await $`bun build ${flags} src/main.ts src/daemon/ingest-worker.ts src/daemon/insert-worker.ts --outfile ${outfile}`.env(
  {
    ...process.env,
    NODE_ENV: "production",
  },
);
console.error(`built ${outfile} in ${Math.round(performance.now() - started)} ms`);
