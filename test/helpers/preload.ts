/**
 * `bun test` preload (bunfig.toml): runs once before any test file.
 * - In-process log warnings that tests provoke on purpose (an embeddings server that refuses, an LLM
 *   that answers 500) stay quiet: SQRL_LOG_LEVEL=0 keeps errors only. Set it yourself to see them.
 * - When ../shared (real transcripts, LoCoMo) is missing, say so once, with what to do; the tests
 *   that read it skip themselves.
 */
import { existsSync } from "node:fs";
import { SHARED_DIR } from "./sqrl.ts";

if (!process.env.SQRL_LOG_LEVEL) process.env.SQRL_LOG_LEVEL = "0";

if (!existsSync(SHARED_DIR)) {
  process.stderr.write(
    `sqrl tests: ${SHARED_DIR} (real transcripts, LoCoMo) is missing, so the tests that read it are skipped; put the shared fixtures folder there to run them.\n`,
  );
}
